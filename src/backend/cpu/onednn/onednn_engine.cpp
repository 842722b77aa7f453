#include "backend/cpu/onednn/onednn_engine.h"

#include <fmt/format.h>

#include "backend/cpu/cpu_runtime.h"

namespace pfc::cpu {

const dnnl::engine& onednn_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& onednn_stream() {
  static dnnl::stream stream(onednn_engine());
  return stream;
}

namespace {

// oneDNN's name for the instruction set its kernels dispatch to.
const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "SSE4.1";
    case dnnl::cpu_isa::avx: return "AVX";
    case dnnl::cpu_isa::avx2: return "AVX2";
    case dnnl::cpu_isa::avx2_vnni: return "AVX2 with VNNI";
    case dnnl::cpu_isa::avx512_mic: return "AVX-512 (Xeon Phi)";
    case dnnl::cpu_isa::avx512_mic_4ops: return "AVX-512 (Xeon Phi, 4FMAPS)";
    case dnnl::cpu_isa::avx512_core: return "AVX-512";
    case dnnl::cpu_isa::avx512_core_vnni: return "AVX-512 with VNNI";
    case dnnl::cpu_isa::avx512_core_bf16: return "AVX-512 with BF16";
    case dnnl::cpu_isa::avx512_core_amx: return "AVX-512 with AMX";
    default: return "generic";
  }
}

}  // namespace

std::string onednn_isa() { return isa_name(dnnl::get_effective_cpu_isa()); }

std::string onednn_description() {
  const dnnl::version_t* v = dnnl::version();
  return fmt::format("oneDNN {}.{}.{} ({}), convolutions", v->major, v->minor, v->patch,
                     isa_name(dnnl::get_effective_cpu_isa()));
}

}  // namespace pfc::cpu
