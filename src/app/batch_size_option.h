// --batch-size of the commands that run a network forward over images (embed, verify, ijb):
// a value that cannot work is refused naming the option, with a range or the memory it would
// take, instead of surfacing as an allocator's message (std::bad_alloc) from deep inside.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace pfc {

// Adds --batch-size (a positive integer; 0 or less: "must be at least 1").
CLI::Option* add_batch_size_option(CLI::App& cmd, std::int64_t& batch_size,
                                   const std::string& help);

// Before the pass: refuses (pfc::UsageError naming --batch-size) a batch whose input images
// alone, `copies` (2 with mirror images) f32 images of 3 x image_size x image_size each per
// image, need more than this host's available memory.
void check_batch_input_fits(std::int64_t batch_size, std::int64_t image_size, int copies);

// Runs `pass`; an allocation that fails in it (the network's activations for one batch) is a
// pfc::UsageError naming --batch-size and the allocation that failed.
void run_with_batch_memory(std::int64_t batch_size, const std::function<void()>& pass);

}  // namespace pfc
