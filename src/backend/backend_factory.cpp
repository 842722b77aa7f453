// make_backend: the backend a config's `device` names, and whether this build has CUDA.
#include <memory>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "core/error.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pfc {

bool cuda_compiled() {
#ifdef PFC_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef PFC_HAVE_CUDA
  return cuda_visible_device_count();
#else
  return 0;
#endif
}

std::int64_t cuda_arena_reservation_bytes(int device_ordinal) {
#ifdef PFC_HAVE_CUDA
  PFC_CHECK(cuda_device_count() > device_ordinal, "device = \"cuda\" but GPU {} is not visible",
            device_ordinal);
  return static_cast<std::int64_t>(cuda_default_arena_bytes(device_ordinal));
#else
  (void)device_ordinal;
  throw UsageError("device = \"cuda\" but this pfc was built without CUDA (see `pfc info`)");
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device_ordinal, BackendKind plan_for) {
  if (kind == BackendKind::cpu) return std::make_unique<CpuBackend>();
  if (kind == BackendKind::meta) {
    // A plan needs no GPU, nor a CUDA build: the cuda backend's choices are plain data.
    if (plan_for == BackendKind::meta)
      throw UsageError("plan_for = \"meta\": a plan is of a cpu or cuda run");
    return std::make_unique<MetaBackend>(plan_for);
  }
#ifdef PFC_HAVE_CUDA
  PFC_CHECK(cuda_device_count() > 0, "device = \"cuda\" but no GPU is visible");
  return make_cuda_backend(device_ordinal);
#else
  (void)device_ordinal;
  throw UsageError("device = \"cuda\" but this pfc was built without CUDA (see `pfc info`)");
#endif
}

}  // namespace pfc
