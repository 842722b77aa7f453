#include "backend/allocation_policy.h"

#include "core/error.h"

namespace pfc {

const AllocationPolicy& allocation_policy(BackendKind kind) {
  static const AllocationPolicy cpu{BackendKind::cpu, DType::f32, DType::bf16, 1};
  static const AllocationPolicy cuda{BackendKind::cuda, DType::f16, DType::f16,
                                     kCudaArenaAlignment};
  PFC_CHECK(kind != BackendKind::meta, "the meta backend takes the allocation policy of the "
            "backend it plans for");
  return kind == BackendKind::cuda ? cuda : cpu;
}

}  // namespace pfc
