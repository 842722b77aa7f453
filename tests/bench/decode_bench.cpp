// pfc_decode_bench: how many 112x112 face JPEGs per second one core turns into training
// input (decode + flip + normalise), on 1 thread and on N, and the same through the whole
// RecordIO data source (read + decode into batches) with 1 and N workers. Besides wall-clock
// rates it prints images per CPU-second, the per-core figure on a machine shared with others.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "config/config.h"
#include "data/data_source.h"
#include "data/dataset_packer.h"
#include "data/face_image_decoder.h"
#include "support/face_images.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds used by the whole process: on a shared machine "images per CPU second" is the
// per-core figure, whatever else competes for the cores.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Rate {
  double per_second = 0;      // wall clock, all threads together
  double per_cpu_second = 0;  // per core actually used
};

void print_rate(int threads, const Rate& r) {
  fmt::print("{:>8} {:>12.0f} {:>18.0f} {:>20.0f}\n", threads, r.per_second,
             r.per_second / threads, r.per_cpu_second);
}

void print_heading(const char* what) {
  fmt::print("{:>8} {:>12} {:>18} {:>20}\n", what, "images/s", "images/s / thread",
             "images per CPU-s");
}

// Images per second over `threads` threads, each decoding the set round-robin.
Rate decode_rate(const std::vector<std::vector<std::uint8_t>>& jpegs, int threads,
                 double seconds) {
  std::atomic<std::int64_t> done{0};
  std::atomic<std::int64_t> failures{0};
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      pfc::FaceImageDecoder decoder(112);
      std::vector<float> out(112 * 112 * 3);
      std::string why;
      std::int64_t mine = 0;
      std::size_t i = static_cast<std::size_t>(t);
      while (seconds_since(start) < seconds)
        for (int j = 0; j < 16; ++j, ++i, ++mine)
          if (!decoder.decode(jpegs[i % jpegs.size()], (i & 1) != 0, out.data(), why))
            failures += 1;
      done += mine;
    });
  }
  for (auto& th : pool) th.join();
  if (failures > 0) throw std::runtime_error(fmt::format("{} decodes failed", failures.load()));
  const auto n = static_cast<double>(done.load());
  return {n / seconds_since(start), n / (process_cpu_seconds() - cpu_start)};
}

Rate pipeline_rate(const std::string& dataset, std::int64_t images, int workers,
                     double seconds) {
  pfc::Config cfg;
  cfg.rec = dataset;
  cfg.num_image = images;
  cfg.num_classes = images / 8;
  cfg.batch_size = 128;
  cfg.data_workers = workers;
  auto source = pfc::make_data_source(cfg, 0, 1);
  pfc::Batch batch;
  source->next(batch);  // start-up (first batch, epoch order) is not what is measured
  std::int64_t done = 0;
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    source->next(batch);
    done += batch.labels.numel();
  }
  const auto n = static_cast<double>(done);
  return {n / seconds_since(start), n / (process_cpu_seconds() - cpu_start)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"decode + flip + normalise throughput for 112x112 face JPEGs"};
  int identities = 128;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double seconds = 2.0;
  bool skip_pipeline = false;
  app.add_option("--identities", identities, "identities x 8 images in the generated set")
      ->capture_default_str();
  app.add_option("--threads", threads, "the N of the multi-threaded runs")->capture_default_str();
  app.add_option("--seconds", seconds, "time per measurement")->capture_default_str();
  app.add_flag("--skip-pipeline", skip_pipeline, "only measure the decoder");
  CLI11_PARSE(app, argc, argv);

  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("pfc_decode_bench_{}", ::getpid());
  pfc::test::write_face_folder((dir / "faces").string(), identities, 8, 112);
  std::vector<std::vector<std::uint8_t>> jpegs;
  std::size_t total_bytes = 0;
  for (const auto& id : fs::directory_iterator(dir / "faces"))
    for (const auto& f : fs::directory_iterator(id.path())) {
      jpegs.push_back(pfc::test::read_file(f.path().string()));
      total_bytes += jpegs.back().size();
    }
  fmt::print("{} distinct 112x112 face JPEGs (quality 95, 4:2:0), {:.1f} KB on average\n",
             jpegs.size(), total_bytes / 1024.0 / jpegs.size());

  fmt::print("\ndecode + flip + normalise (FaceImageDecoder)\n");
  print_heading("threads");
  for (int t : {1, threads}) {
    print_rate(t, decode_rate(jpegs, t, seconds));
    if (threads == 1) break;
  }

  if (!skip_pipeline) {
    spdlog::set_level(spdlog::level::warn);
    const auto images = static_cast<std::int64_t>(jpegs.size());
    pfc::pack_image_folder((dir / "faces").string(), (dir / "dataset" / "train").string(), 112);
    fmt::print("\nRecordIO data source, batch 128 (read + decode + flip + normalise + batch)\n");
    print_heading("workers");
    for (int w : {1, threads}) {
      print_rate(w, pipeline_rate((dir / "dataset").string(), images, w, seconds));
      if (threads == 1) break;
    }
  }
  fs::remove_all(dir);
  return 0;
}
