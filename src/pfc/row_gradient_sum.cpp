#include "pfc/row_gradient_sum.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "backend/meta/size_only_host_allocator.h"

namespace pfc {

namespace {

// Where each of `part`'s rows sits in `all` (both sorted, part a subset of all).
std::vector<std::int64_t> positions(const std::vector<std::int64_t>& part,
                                    const std::vector<std::int64_t>& all) {
  std::vector<std::int64_t> at;
  at.reserve(part.size());
  auto it = all.begin();
  for (const std::int64_t row : part) {
    it = std::lower_bound(it, all.end(), row);
    at.push_back(static_cast<std::int64_t>(it - all.begin()));
  }
  return at;
}

}  // namespace

Tensor index_on_backend(Backend& backend, const std::vector<std::int64_t>& values,
                        MemoryPurpose purpose) {
  const auto n = static_cast<std::int64_t>(values.size());
  Tensor host = Tensor::empty({n}, DType::i64, host_allocator_for(backend), purpose);
  if (n > 0 && host.device() == DeviceKind::cpu)
    std::memcpy(host.raw(), values.data(), host.bytes());
  Tensor dev = backend.empty({n}, DType::i64, purpose);
  backend.copy(host, dev);
  return dev;
}

Tensor planned_index_on_backend(Backend& backend, std::int64_t n, MemoryPurpose purpose) {
  PFC_CHECK(backend.device() == DeviceKind::meta,
            "planned_index_on_backend: an index without values is for the meta backend, not {}",
            backend.name());
  const Tensor host = Tensor::empty({n}, DType::i64, size_only_host_allocator(), purpose);
  Tensor dev = backend.empty({n}, DType::i64, purpose);
  backend.copy(host, dev);
  return dev;
}

RowGradient sum_row_gradients(Backend& backend, const RowGradient& a, const RowGradient& b) {
  const char* op = "sum_row_gradients";
  PFC_CHECK(a.rows.rank() == 2 && b.rows.rank() == 2 && a.rows.dim(1) == b.rows.dim(1) &&
                a.rows.dim(0) == static_cast<std::int64_t>(a.index.size()) &&
                b.rows.dim(0) == static_cast<std::int64_t>(b.index.size()),
            "{}: rows {} and {} must be [index size ({} and {}), emb]", op, a.rows.describe(),
            b.rows.describe(), a.index.size(), b.index.size());
  RowGradient sum;
  std::set_union(a.index.begin(), a.index.end(), b.index.begin(), b.index.end(),
                 std::back_inserter(sum.index));
  sum.device_index = index_on_backend(backend, sum.index, MemoryPurpose::workspace);
  const auto rows = static_cast<std::int64_t>(sum.index.size());
  sum.rows = backend.zeros({rows, a.rows.dim(1)}, a.rows.dtype(), MemoryPurpose::gradients);
  if (!a.index.empty())
    backend.scatter_rows(a.rows, index_on_backend(backend, positions(a.index, sum.index),
                                                  MemoryPurpose::workspace),
                         sum.rows);
  if (!b.index.empty()) {
    const Tensor at =
        index_on_backend(backend, positions(b.index, sum.index), MemoryPurpose::workspace);
    Tensor both = backend.empty(b.rows.shape(), b.rows.dtype(), MemoryPurpose::gradients);
    backend.gather_rows(sum.rows, at, both);
    backend.axpy(1.0, b.rows, both);
    backend.scatter_rows(both, at, sum.rows);
  }
  return sum;
}

RowGradient planned_row_gradient_sum(Backend& backend, const RowGradient& a, const RowGradient& b,
                                     std::int64_t shard_rows) {
  const std::int64_t a_rows = a.rows.dim(0), b_rows = b.rows.dim(0);
  RowGradient sum;
  const std::int64_t rows = std::min(a_rows + b_rows, shard_rows);
  sum.device_index = planned_index_on_backend(backend, rows, MemoryPurpose::workspace);
  sum.rows = backend.zeros({rows, a.rows.dim(1)}, a.rows.dtype(), MemoryPurpose::gradients);
  if (a_rows > 0)
    backend.scatter_rows(a.rows,
                         planned_index_on_backend(backend, a_rows, MemoryPurpose::workspace),
                         sum.rows);
  if (b_rows > 0) {
    const Tensor at = planned_index_on_backend(backend, b_rows, MemoryPurpose::workspace);
    Tensor both = backend.empty(b.rows.shape(), b.rows.dtype(), MemoryPurpose::gradients);
    backend.gather_rows(sum.rows, at, both);
    backend.axpy(1.0, b.rows, both);
    backend.scatter_rows(both, at, sum.rows);
  }
  return sum;
}

}  // namespace pfc
