// MetaBackend: construction, the cost counter, and data movement. A copy to the host writes
// zeros (a meta tensor holds no values); a copy between host tensors copies them, as every
// backend does; the compute primitives are in meta_backend_ops.cpp.
#include "backend/meta/meta_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backend/meta/size_only_host_allocator.h"
#include "backend/operand_checks.h"
#include "core/error.h"

namespace pfc {

MetaBackend::MetaBackend(BackendKind plan_for)
    : policy_(pfc::allocation_policy(plan_for)),
      rules_(operand_rules(plan_for, DeviceKind::meta)),
      allocator_(policy_) {}

Allocator& MetaBackend::staging_allocator() { return size_only_host_allocator(); }

std::string MetaBackend::name() const {
  return fmt::format("meta (plans {})", backend_kind_name(plan_for()));
}

void MetaBackend::count(std::string_view primitive, double tensor_flops, double other_flops,
                        double bytes_read, double bytes_written) {
  tally_.add(primitive, Work{1, tensor_flops, other_flops, bytes_read, bytes_written});
}

void MetaBackend::count_products(std::string_view primitive, double flops, DType operands,
                                 double bytes_read, double bytes_written) {
  // 16-bit operands, f32 accumulation: tensor cores, or the CPU's AVX512_BF16 and AMX.
  const bool tensor_cores = operands == DType::f16 || operands == DType::bf16;
  count(primitive, tensor_cores ? flops : 0, tensor_cores ? 0 : flops, bytes_read, bytes_written);
}

double MetaBackend::bytes(std::initializer_list<const Tensor*> tensors) {
  double sum = 0;
  for (const Tensor* t : tensors) sum += static_cast<double>(t->bytes());
  return sum;
}

void MetaBackend::note_host_scratch(std::int64_t bytes) {
  if (plan_for() == BackendKind::cpu)
    largest_host_scratch_ = std::max(largest_host_scratch_, bytes);
}

void MetaBackend::hold_workspace(std::int64_t bytes) {
  if (plan_for() == BackendKind::cpu && bytes > 0)
    empty({bytes}, DType::u8, MemoryPurpose::workspace);
}

void MetaBackend::copy(const Tensor& src, Tensor& dst) {
  operand_check::copy(rules_, src, dst);
  count("copy", 0, 0, bytes({&src}), bytes({&dst}));
  if (dst.device() != DeviceKind::cpu || dst.bytes() == 0) return;
  if (src.device() == DeviceKind::cpu) {
    if (src.raw() != dst.raw()) std::memmove(dst.raw(), src.raw(), src.bytes());
  } else {
    std::memset(dst.raw(), 0, dst.bytes());
  }
}

void MetaBackend::fill(Tensor& x, double) {
  operand_check::fill(rules_, x);
  count("fill", 0, 0, bytes({}), bytes({&x}));
}

void MetaBackend::fill_normal(Tensor& x, std::uint64_t, std::uint64_t, double) {
  operand_check::fill_normal(rules_, x);
  count("fill_normal", 0, 0, bytes({}), bytes({&x}));
}

void MetaBackend::cast(const Tensor& src, Tensor& dst) {
  operand_check::cast(rules_, src, dst);
  count("cast", 0, 0, bytes({&src}), bytes({&dst}));
}

}  // namespace pfc
