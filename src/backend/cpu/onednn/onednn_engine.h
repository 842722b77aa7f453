// The one oneDNN CPU engine and stream of the process, shared by every primitive. oneDNN's CPU
// stream runs a primitive on the calling thread's OpenMP pool, so there is nothing to keep
// per thread.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace pfc::cpu {

const dnnl::engine& onednn_engine();
dnnl::stream& onednn_stream();

}  // namespace pfc::cpu
