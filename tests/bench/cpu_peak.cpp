// pfc_cpu_peak: the multiply-add rate one core of this CPU reaches in f32 (fused multiply-adds)
// and, where it has AVX512_BF16, in bf16 dot products with f32 accumulation: the ceiling of
// every product pfc or a peer computes on it. The benchmark (cpu_vs_peers.sh) prints it beside
// its ratios, so that a row can be read against what the cores can do at all: a network's
// multiply-adds per image over this rate is the least time an image can take.
//
// Independent accumulators, more than the units' latency times their number, so that they
// never wait for a result (twelve chains held bf16 to 90 % of its rate), and all in registers
// (thirty-two with AVX-512, sixteen with AVX2); the best of five runs of a fraction of a second.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PFC_PEAK_X86 1
#endif

namespace {

constexpr int kChains = 24;      // AVX-512
constexpr int kAvx2Chains = 12;  // AVX2
constexpr long kIterations = 20'000'000;

template <class Body>
double best_gmacs(double macs_per_iteration, const Body& body) {
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const float sink = body();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The result is printed nowhere but must look used, or the loop would be dropped.
    if (sink == 42.0f) fmt::print("");
    best = std::max(best, macs_per_iteration * kIterations / s / 1e9);
  }
  return best;
}

#ifdef PFC_PEAK_X86
using F32x16 = float __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));

// Chains of acc = x * acc + y, each a fused multiply-add in the instruction set of the function
// it is inlined into.
template <class V, int Chains>
[[gnu::always_inline]] inline float fma_chains() {
  V acc[Chains];
  for (auto& a : acc) a = V{};
  const V x = V{} + 0.999999f, y = V{} + 1e-7f;
  for (long i = 0; i < kIterations; ++i)
#pragma GCC unroll 24
    for (int k = 0; k < Chains; ++k) acc[k] = x * acc[k] + y;
  float sum = 0;
  for (auto& a : acc)
    for (unsigned l = 0; l < sizeof(V) / sizeof(float); ++l) sum += a[l];
  return sum;
}

__attribute__((target("avx512f,fma"))) float f32_avx512() { return fma_chains<F32x16, kChains>(); }

__attribute__((target("avx2,fma"))) float f32_avx2() { return fma_chains<F32x8, kAvx2Chains>(); }

__attribute__((target("avx512f,avx512bf16"))) float bf16_avx512() {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512bh ones = (__m512bh)_mm512_set1_epi16(0x3f80);  // bf16 1.0 in every half
  for (long i = 0; i < kIterations; ++i)
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], ones, ones);
  float sum = 0;
  for (auto& a : acc) sum += _mm512_reduce_add_ps(a);
  return sum;
}
#endif

}  // namespace

int main() {
#ifdef PFC_PEAK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    fmt::print("f32 FMA (AVX-512): {:.1f} GMAC/s per core\n",
               best_gmacs(kChains * 16.0, f32_avx512));
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    fmt::print("f32 FMA (AVX2): {:.1f} GMAC/s per core\n", best_gmacs(kAvx2Chains * 8.0, f32_avx2));
  else
    fmt::print("f32 FMA: this CPU has neither AVX-512 nor AVX2 with FMA\n");
  if (__builtin_cpu_supports("avx512bf16"))
    fmt::print("bf16 dot products (AVX512_BF16): {:.1f} GMAC/s per core\n",
               best_gmacs(kChains * 32.0, bf16_avx512));
  else
    fmt::print("bf16 dot products: this CPU has no AVX512_BF16\n");
#else
  fmt::print("pfc_cpu_peak measures x86-64 CPUs only\n");
#endif
}
