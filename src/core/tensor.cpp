#include "core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <limits>

namespace pfc {

namespace {
std::atomic<std::uint64_t> storages_made{0};
}  // namespace

struct Tensor::Storage {
  Allocator* allocator = nullptr;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  MemoryPurpose purpose = MemoryPurpose::workspace;
  std::uint64_t id = ++storages_made;
  std::atomic<std::uint64_t> writes{0};

  Storage(Allocator& a, std::size_t n, MemoryPurpose p)
      : allocator(&a), ptr(a.allocate(n, p)), bytes(n), purpose(p) {}
  ~Storage() { allocator->deallocate(ptr, bytes, purpose); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

std::int64_t shape_numel(const Shape& shape) {
  // A zero anywhere makes the product 0, however large the other dimensions are.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d > 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      throw Error(fmt::format("shape {} has more elements than a 64-bit count holds",
                              shape_string(shape)));
    n *= d;
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  // A shape from a file may have any number of dimensions: a message names the first few.
  constexpr std::size_t kNamed = 8;
  if (shape.size() <= 2 * kNamed) return fmt::format("[{}]", fmt::join(shape, ", "));
  const Shape first(shape.begin(), shape.begin() + kNamed);
  return fmt::format("[{}, ... {} dimensions in all]", fmt::join(first, ", "), shape.size());
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Allocator& allocator,
                     MemoryPurpose purpose) {
  for (auto d : shape) PFC_CHECK(d >= 0, "negative dimension in shape {}", shape_string(shape));
  const std::int64_t numel = shape_numel(shape);
  const auto element = static_cast<std::int64_t>(dtype_size(dtype));
  if (numel > std::numeric_limits<std::int64_t>::max() / element)
    throw Error(fmt::format("tensor {}{} would take more than 2^63 bytes ({} elements of {} "
                            "bytes)",
                            dtype_name(dtype), shape_string(shape), numel, element));
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(allocator, t.bytes(), purpose);
  return t;
}

Tensor Tensor::host(const Shape& shape, DType dtype, MemoryPurpose purpose) {
  return empty(shape, dtype, host_allocator(), purpose);
}

DeviceKind Tensor::device() const {
  PFC_CHECK(defined(), "device() of an undefined tensor");
  return storage_->allocator->device();
}

MemoryPurpose Tensor::purpose() const {
  PFC_CHECK(defined(), "purpose() of an undefined tensor");
  return storage_->purpose;
}

std::uint64_t Tensor::storage_id() const { return storage_ ? storage_->id : 0; }

std::uint64_t Tensor::content_version() const {
  return storage_ ? storage_->writes.load(std::memory_order_relaxed) : 0;
}

void Tensor::note_write() {
  if (storage_) storage_->writes.fetch_add(1, std::memory_order_relaxed);
}

void* Tensor::data_ptr() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->ptr) + offset_bytes_;
}

void Tensor::check_access(DType wanted) const {
  PFC_CHECK(dtype_ == wanted, "tensor {} accessed as {}", describe(), dtype_name(wanted));
  PFC_CHECK(!storage_ || storage_->allocator->device() != DeviceKind::meta,
            "tensor {} is a meta tensor: it has a shape but no values to read or write",
            describe());
}

Tensor Tensor::reshape(const Shape& shape) const {
  PFC_CHECK(shape_numel(shape) == numel(), "cannot reshape {} to {}", describe(),
            shape_string(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::rows(std::int64_t begin, std::int64_t end) const {
  PFC_CHECK(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0],
            "rows [{}, {}) out of range for {}", begin, end, describe());
  Tensor t = *this;
  const std::int64_t row_elems = shape_[0] == 0 ? 0 : numel() / shape_[0];
  t.offset_bytes_ += static_cast<std::size_t>(begin * row_elems) * dtype_size(dtype_);
  t.shape_[0] = end - begin;
  return t;
}

std::string Tensor::describe() const {
  return fmt::format("{}{}", dtype_name(dtype_), shape_string(shape_));
}

void check_shape(const Tensor& t, const Shape& expected, const char* op, const char* operand) {
  PFC_CHECK(t.shape() == expected, "{}: {} has shape {}, expected {}", op, operand,
            shape_string(t.shape()), shape_string(expected));
}

void check_dtype(const Tensor& t, DType expected, const char* op, const char* operand) {
  PFC_CHECK(t.dtype() == expected, "{}: {} is {}, expected {}", op, operand,
            dtype_name(t.dtype()), dtype_name(expected));
}

}  // namespace pfc
