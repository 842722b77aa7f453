#include "app/batch_size_option.h"

#include <fmt/format.h>

#include <new>

#include "core/error.h"
#include "core/host_memory.h"

namespace pfc {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

CLI::Option* add_batch_size_option(CLI::App& cmd, std::int64_t& batch_size,
                                   const std::string& help) {
  // CLI11's PositiveNumber names its range in doubles, 309 digits of them.
  const CLI::Validator at_least_one(
      [](std::string& text) -> std::string {
        std::int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "must be a whole number of images";
        return value >= 1 ? std::string() : fmt::format("{} must be at least 1 image", text);
      },
      "INT>=1");
  return cmd.add_option("--batch-size", batch_size, help)->check(at_least_one)
      ->capture_default_str();
}

void check_batch_input_fits(std::int64_t batch_size, std::int64_t image_size, int copies) {
  const double bytes = static_cast<double>(batch_size) * copies * 3.0 *
                       static_cast<double>(image_size * image_size) * sizeof(float);
  const HostMemory host = host_memory_available();
  if (host.available_bytes <= 0 || bytes <= static_cast<double>(host.available_bytes)) return;
  throw UsageError(fmt::format(
      "--batch-size {}: one batch's input images alone take {:.1f} GiB ({} x {} image(s) of "
      "3x{}x{} f32), more than the {:.1f} GiB this host has available ({}); lower it",
      batch_size, bytes / kGiB, batch_size, copies, image_size, image_size,
      static_cast<double>(host.available_bytes) / kGiB, host.source));
}

void run_with_batch_memory(std::int64_t batch_size, const std::function<void()>& pass) {
  try {
    pass();
  } catch (const OutOfMemoryError& e) {
    throw UsageError(fmt::format("--batch-size {}: one batch does not fit: {}; lower it",
                                 batch_size, e.what()));
  } catch (const std::bad_alloc&) {
    throw UsageError(fmt::format("--batch-size {}: one batch does not fit: a host allocation "
                                 "failed (std::bad_alloc); lower it",
                                 batch_size));
  }
}

}  // namespace pfc
