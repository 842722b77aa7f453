// A dense row-major tensor: shape, element type, and a reference-counted buffer owned by an
// Allocator (host, device, or meta: no memory at all). Views share the buffer. Activations are
// NHWC throughout; PyTorch layouts appear only at import/export (model/, golden/).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/dtype.h"
#include "core/error.h"

namespace pfc {

using Shape = std::vector<std::int64_t>;

// The element count; throws pfc::Error naming the shape when it does not fit in 64 bits.
std::int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;

  static Tensor empty(const Shape& shape, DType dtype, Allocator& allocator,
                      MemoryPurpose purpose);
  // A host tensor from the process-wide host allocator.
  static Tensor host(const Shape& shape, DType dtype,
                     MemoryPurpose purpose = MemoryPurpose::workspace);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(std::size_t i) const { return shape_.at(i); }
  std::size_t rank() const { return shape_.size(); }
  std::int64_t numel() const { return shape_numel(shape_); }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  DeviceKind device() const;
  MemoryPurpose purpose() const;

  // The non-const accessors hand out the values for writing, and count it (content_version).
  void* raw() {
    note_write();
    return data_ptr();
  }
  const void* raw() const { return data_ptr(); }

  // Typed access to the values; a meta tensor has none (pfc::Error). raw() of a meta tensor
  // is an address that only identifies it (comms compare addresses for in-place and overlap).
  template <class T>
  T* data() {
    check_access(dtype_of<T>::value);
    note_write();
    return static_cast<T*>(data_ptr());
  }
  template <class T>
  const T* data() const {
    check_access(dtype_of<T>::value);
    return static_cast<const T*>(data_ptr());
  }

  // Same buffer, another shape of the same element count.
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) of dimension 0, sharing the buffer.
  Tensor rows(std::int64_t begin, std::int64_t end) const;

  std::string describe() const;

  // Which buffer this is, for caches of something computed from its values: a number no other
  // buffer of the process has had, and the byte offset of this view in it.
  std::uint64_t storage_id() const;
  std::size_t storage_offset() const { return offset_bytes_; }
  // How many times the buffer's values have been handed out for writing (a non-const raw() or
  // data(), through any view of it). Every write goes through one, so while the count stays
  // the same the values do too.
  std::uint64_t content_version() const;

 private:
  struct Storage;
  void* data_ptr() const;
  void check_access(DType wanted) const;
  void note_write();

  std::shared_ptr<Storage> storage_;
  std::size_t offset_bytes_ = 0;
  Shape shape_;
  DType dtype_ = DType::f32;
};

// Checks used by every backend primitive; the message names the primitive and the operand.
void check_shape(const Tensor& t, const Shape& expected, const char* op, const char* operand);
void check_dtype(const Tensor& t, DType expected, const char* op, const char* operand);

}  // namespace pfc
