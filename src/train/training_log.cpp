#include "train/training_log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "core/error.h"
#include "io/checkpoint_layout.h"

namespace pfc {

namespace {

// Progress lines go to stdout as they are (the seed's format, for parsers of the job output).
spdlog::logger& progress_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto stdout_sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    stdout_sink->set_pattern("%v");
    auto created = std::make_shared<spdlog::logger>("progress", stdout_sink);
    created->flush_on(spdlog::level::trace);
    return created;
  }();
  return *logger;
}

bool g_log_open = false;

}  // namespace

void open_training_log(const std::filesystem::path& output) {
  if (g_log_open) return;
  const std::filesystem::path path = output / kTrainingLogFile;
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> file;
  try {
    std::filesystem::create_directories(output);
    file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string(), false);
  } catch (const std::exception& e) {
    throw Error(fmt::format("cannot append to the training log {}: {}", path.string(), e.what()));
  }
  file->set_pattern("[%Y-%m-%d %H:%M:%S] %l: %v");
  // Every line reaches the file before the next step: a run killed later keeps it.
  for (spdlog::logger* logger : {spdlog::default_logger_raw(), &progress_logger()}) {
    logger->sinks().push_back(file);
    logger->flush_on(spdlog::level::trace);
  }
  g_log_open = true;
}

void log_progress(const std::string& line) { progress_logger().info("{}", line); }

}  // namespace pfc
