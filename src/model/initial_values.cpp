#include "model/initial_values.h"

#include "backend/meta/size_only_host_allocator.h"

namespace pfc {

std::optional<Tensor> initial_values_buffer(Backend& backend, Parameter& p) {
  Tensor host = Tensor::empty(p.value.shape(), DType::f32, host_allocator_for(backend),
                              MemoryPurpose::workspace);
  if (host.device() != DeviceKind::meta) return host;
  backend.copy_cast(host, p.value);
  return std::nullopt;
}

}  // namespace pfc
