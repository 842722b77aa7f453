#include "model/flat_parameters.h"

namespace pfc {

namespace {

// Every parameter starts at a multiple of 64 elements (256 bytes of f32, the device arena's
// alignment; 128 of f16, 512 of f64), so each view is as aligned as a tensor of its own would
// be: cuDNN and the vectorised kernels take their fast paths only on aligned pointers. The gaps
// are zeros in every buffer and stay zeros under the update, the norm and the cast.
constexpr std::int64_t kAlignment = 64;

std::int64_t aligned(std::int64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

Tensor view(const Tensor& flat, std::int64_t offset, const Shape& shape) {
  return flat.rows(offset, offset + shape_numel(shape)).reshape(shape);
}

// `from`'s contents copied into the view of flat at offset with from's shape; returns the view.
Tensor move_into(Backend& backend, const Tensor& from, const Tensor& flat, std::int64_t offset) {
  Tensor to = view(flat, offset, from.shape());
  backend.copy(from, to);
  return to;
}

}  // namespace

void FlatParameters::refresh_working_copies(Backend& backend) {
  if (working.defined()) backend.cast(working_values, working);
}

Tensor FlatParameters::view_of(const Parameter& p, const Tensor& buffer) const {
  check_shape(buffer, value.shape(), "FlatParameters::view_of", "buffer");
  for (const auto& [parameter, offset] : offsets)
    if (parameter == &p) return view(buffer, offset, p.value.shape());
  throw Error(fmt::format("FlatParameters::view_of: '{}' is not a flattened parameter", p.name));
}

FlatParameters flatten_parameters(Backend& backend, const std::vector<Parameter*>& parameters) {
  constexpr const char* op = "flatten_parameters";
  // A stable partition: the parameters with a working copy first, each group in model order.
  std::vector<Parameter*> order;
  for (Parameter* p : parameters)
    if (p->trainable && p->working.defined()) order.push_back(p);
  const std::size_t with_copies = order.size();
  for (Parameter* p : parameters)
    if (p->trainable && !p->working.defined()) order.push_back(p);
  PFC_CHECK(!order.empty(), "{}: none of {} parameters is trainable", op, parameters.size());

  FlatParameters flat;
  flat.decay = order.front()->decay;
  const DType master = order.front()->value.dtype();
  const DType working_dtype = with_copies > 0 ? order.front()->working.dtype() : DType::f32;
  std::vector<std::int64_t> offsets;
  std::int64_t total = 0;
  std::int64_t run = 0;  // end of the masters that have working copies
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Parameter* p = order[i];
    const char* name = p->name.c_str();
    check_dtype(p->value, master, op, name);
    check_dtype(p->grad, master, op, name);
    check_shape(p->grad, p->value.shape(), op, name);
    if (i < with_copies) {
      check_dtype(p->working, working_dtype, op, name);
      check_shape(p->working, p->value.shape(), op, name);
    }
    PFC_CHECK(p->decay == flat.decay,
              "{}: '{}' has weight decay {} but '{}' {}; one update cannot serve both", op,
              order.front()->name, flat.decay ? "on" : "off", p->name, p->decay ? "on" : "off");
    offsets.push_back(total);
    total += aligned(p->value.numel());
    if (i + 1 == with_copies) run = total;
  }

  // One buffer at a time, each old tensor released as soon as it is copied: flattening needs
  // one buffer's worth of memory beyond what the parameters hold, not a second model.
  const auto move_all = [&](Tensor Parameter::*member, const Tensor& buffer, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      Tensor& t = order[i]->*member;
      t = move_into(backend, t, buffer, offsets[i]);
    }
  };
  flat.value = backend.zeros({total}, master, MemoryPurpose::weights);
  move_all(&Parameter::value, flat.value, order.size());
  flat.grad = backend.zeros({total}, master, MemoryPurpose::gradients);
  move_all(&Parameter::grad, flat.grad, order.size());
  if (with_copies > 0) {
    flat.working_values = flat.value.rows(0, run);
    flat.working = backend.zeros({run}, working_dtype, MemoryPurpose::weights);
    move_all(&Parameter::working, flat.working, with_copies);
  }
  for (std::size_t i = 0; i < order.size(); ++i) flat.offsets.emplace_back(order[i], offsets[i]);
  return flat;
}

}  // namespace pfc
