// `--precision f32|bf16` of the inference commands (embed, verify, ijb): the option, and the
// check that bf16 can run here before anything is read.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "model/inference_precision.h"

namespace pfc {

void add_inference_precision_option(CLI::App* cmd, std::string& precision);

// The precision asked for. bf16 needs --device cpu (so not --fp16), on a CPU whose
// instruction set (the one `pfc info` reports oneDNN using) has AVX512_BF16 or AMX; otherwise
// a UsageError (exit 2) says which of these is missing.
InferencePrecision inference_precision(const std::string& precision, const std::string& device);

}  // namespace pfc
