// Datasets used row by row, on top of io/hdf5.h: appendable tables that a running job grows
// and flushes one row at a time (metrics), row ranges read by hyperslab, and virtual datasets
// that present the rows of datasets in other files as one matrix (checkpoint class centres).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace pfc::h5 {

// A chunked dataset with no rows yet: [rows] when columns is 0, else [rows, columns]; both
// dimensions can grow. Elements never written read as the fill value: NaN for floating point,
// -1 for integers.
void create_appendable(hid_t loc, const std::string& path, DType dtype, std::int64_t columns);

// Appends one row. A 1-D table takes exactly one value; a 2-D table takes up to as many
// values as it has columns (the rest of the row is fill) or more (the table widens).
void append_row(hid_t loc, const std::string& path, std::span<const double> values);
void append_row(hid_t loc, const std::string& path, std::span<const std::int64_t> values);

// Appends every row of a host tensor [rows] or [rows, columns] (converted to the table's type).
void append_rows(hid_t loc, const std::string& path, const Tensor& rows);

std::int64_t row_count(hid_t loc, const std::string& path);
// Keeps the first `rows` rows of an appendable table.
void truncate_rows(hid_t loc, const std::string& path, std::int64_t rows);
// The leading rows of a table logged at or before `step`, by its i64 step column: what a
// resume from that step keeps. A row never written ends them too: a writer killed in an append
// can leave the table grown, its new rows reading the fill value (-1) after it restarts.
std::int64_t rows_through_step(hid_t loc, const std::string& step_path, std::int64_t step);

// Rows [begin, begin + count) of a dataset (of any rank >= 1), converted to `as`.
Tensor read_rows(hid_t loc, const std::string& path, std::int64_t begin, std::int64_t count,
                 DType as);

// Rows [first_row, first_row + rows) of a virtual dataset come from the whole 2-D dataset
// `dataset` of `file`. A relative file name is found next to the virtual dataset's own file.
struct RowSource {
  std::string file;
  std::string dataset;
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
};

// Creates a virtual dataset [total_rows, columns] of `dtype` over the sources; rows no source
// covers read as NaN.
void create_virtual_rows(hid_t loc, const std::string& path, DType dtype,
                         std::int64_t total_rows, std::int64_t columns,
                         const std::vector<RowSource>& sources);

}  // namespace pfc::h5
