// Backend::copy_cast on the CUDA backend against the CPU backend: every pairing of f16, f32 and
// f64, and every placement (host to device, device to host, device to device, host to host),
// gives bit for bit what the CPU's conversion gives.
#include "core/half.h"
#include "gpu_test_support.h"

namespace pfc::test {
namespace {

// Bytes of a host tensor, to compare bit for bit whatever its dtype.
std::vector<unsigned char> bytes_of(const Tensor& host) {
  const auto* b = static_cast<const unsigned char*>(host.raw());
  return {b, b + host.bytes()};
}

TEST(GpuCopyCast, EveryPlacementAndTypeMatchesTheCpu) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // f64 values with more digits than f32 holds, some beyond f16's range.
  const Tensor source32 = random_host({3, 337}, -70000.0, 70000.0, 4);
  Tensor source = Tensor::host(source32.shape(), DType::f64);
  for (std::int64_t i = 0; i < source.numel(); ++i)
    source.data<double>()[i] = source32.data<float>()[i] * (1.0 + 1e-9 * static_cast<double>(i));
  for (DType from : {DType::f16, DType::f32, DType::f64}) {
    Tensor src_host = Tensor::host(source.shape(), from);
    cpu.copy_cast(source, src_host);
    Tensor src_device = gpu.empty(source.shape(), from, MemoryPurpose::activations);
    gpu.copy(src_host, src_device);
    for (DType to : {DType::f16, DType::f32, DType::f64}) {
      const std::string what = fmt::format("{} -> {}", dtype_name(from), dtype_name(to));
      Tensor want = Tensor::host(source.shape(), to);
      cpu.copy_cast(src_host, want);

      Tensor on_device = gpu.empty(source.shape(), to, MemoryPurpose::activations);
      gpu.copy_cast(src_host, on_device);  // host -> device
      Tensor back = Tensor::host(source.shape(), to);
      gpu.copy_cast(on_device, back);  // device -> host, same type
      EXPECT_EQ(bytes_of(back), bytes_of(want)) << what << " host -> device";

      Tensor to_host = Tensor::host(source.shape(), to);
      gpu.copy_cast(src_device, to_host);  // device -> host
      EXPECT_EQ(bytes_of(to_host), bytes_of(want)) << what << " device -> host";

      Tensor device_to_device = gpu.empty(source.shape(), to, MemoryPurpose::activations);
      gpu.copy_cast(src_device, device_to_device);
      EXPECT_EQ(bytes_of(gpu.to_host(device_to_device)), bytes_of(want)) << what << " on device";

      Tensor host_to_host = Tensor::host(source.shape(), to);
      gpu.copy_cast(src_host, host_to_host);
      EXPECT_EQ(bytes_of(host_to_host), bytes_of(want)) << what << " host -> host";
    }
  }
}

}  // namespace
}  // namespace pfc::test
