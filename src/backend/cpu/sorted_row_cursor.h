// A walk over a table's rows in increasing order that finds each row's place in a sorted,
// unique index of rows (the sparse-gradient optimiser updates: row r's gradient is row `place`
// of g, or zero when r is not in the index). One comparison per row, no search.
#pragma once

#include <cstdint>

namespace pfc::cpu {

class SortedRowCursor {
 public:
  SortedRowCursor(const std::int64_t* index, std::int64_t count) : index_(index), count_(count) {}

  // Row r's place in the index, or -1; rows must be asked for in increasing order.
  std::int64_t operator()(std::int64_t r) {
    return next_ < count_ && index_[next_] == r ? next_++ : std::int64_t{-1};
  }

 private:
  const std::int64_t* index_;
  std::int64_t count_;
  std::int64_t next_ = 0;
};

}  // namespace pfc::cpu
