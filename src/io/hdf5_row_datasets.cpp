#include "io/hdf5_row_datasets.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "io/hdf5.h"
#include "io/hdf5_check.h"

namespace pfc::h5 {

namespace {

Handle open_dataset(hid_t loc, const std::string& path) {
  quiet_errors();
  return Handle(checked(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), loc,
                        fmt::format("open dataset '{}'", path)));
}

std::vector<hsize_t> extent(hid_t dataset) {
  Handle space(H5Dget_space(dataset));
  std::vector<hsize_t> dims(static_cast<std::size_t>(
      std::max(H5Sget_simple_extent_ndims(space.get()), 0)));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || is_16bit_float(dtype);
}

// The fill value of `dtype` written through a double or an int64 memory type (16-bit floats
// keep HDF5's zero).
void set_fill(hid_t dcpl, DType dtype) {
  if (is_floating(dtype) && !is_16bit_float(dtype)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan);
  } else if (!is_floating(dtype)) {
    const std::int64_t minus_one = -1;
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT64, &minus_one);
  }
}

Handle parents_created() {
  Handle plist(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(plist.get(), 1);
  return plist;
}

// Appends `rows` rows of `count` values each (row-major at `values`).
void append(hid_t loc, const std::string& path, hid_t mem_type, const void* values,
            std::size_t count, std::size_t rows = 1) {
  Handle dataset = open_dataset(loc, path);
  std::vector<hsize_t> dims = extent(dataset.get());
  const std::string what = fmt::format("append {} row{} to '{}'", rows, rows == 1 ? "" : "s",
                                       path);
  PFC_CHECK(dims.size() == 1 || dims.size() == 2, "{}: not a 1-D or 2-D table", what);
  PFC_CHECK(count >= 1, "{}: no values given", what);
  PFC_CHECK(dims.size() == 2 || count == 1, "{}: a 1-D table takes one value, not {}", what,
            count);
  const hsize_t row = dims[0];
  dims[0] += rows;
  if (dims.size() == 2) dims[1] = std::max<hsize_t>(dims[1], count);
  checked_status(H5Dset_extent(dataset.get(), dims.data()), loc, what);
  Handle file_space(H5Dget_space(dataset.get()));
  const hsize_t start[2] = {row, 0};
  const hsize_t block[2] = {rows, count};
  checked_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, block,
                                     nullptr),
                 loc, what);
  const hsize_t n = count * rows;
  Handle mem_space(H5Screate_simple(1, &n, nullptr));
  checked_status(H5Dwrite(dataset.get(), mem_type, mem_space.get(), file_space.get(),
                          H5P_DEFAULT, values),
                 loc, what);
}

}  // namespace

void create_appendable(hid_t loc, const std::string& path, DType dtype, std::int64_t columns) {
  PFC_CHECK(columns >= 0, "appendable '{}': negative column count {}", path, columns);
  const int rank = columns == 0 ? 1 : 2;
  const hsize_t dims[2] = {0, static_cast<hsize_t>(columns)};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, H5S_UNLIMITED};
  // Rows arrive one at a time; a chunk of a few hundred rows keeps the file compact without
  // rewriting large chunks on every append.
  const hsize_t chunk[2] = {columns == 0 ? hsize_t{512} : hsize_t{64},
                            static_cast<hsize_t>(std::max<std::int64_t>(columns, 1))};
  Handle space(H5Screate_simple(rank, dims, max_dims));
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), rank, chunk);
  set_fill(dcpl.get(), dtype);
  Handle lcpl = parents_created();
  Handle dataset(checked(H5Dcreate2(loc, path.c_str(), native_type(dtype), space.get(),
                                    lcpl.get(), dcpl.get(), H5P_DEFAULT),
                         loc, fmt::format("create table '{}'", path)));
}

void append_row(hid_t loc, const std::string& path, std::span<const double> values) {
  append(loc, path, H5T_NATIVE_DOUBLE, values.data(), values.size());
}

void append_row(hid_t loc, const std::string& path, std::span<const std::int64_t> values) {
  append(loc, path, H5T_NATIVE_INT64, values.data(), values.size());
}

void append_rows(hid_t loc, const std::string& path, const Tensor& rows) {
  PFC_CHECK(rows.device() == DeviceKind::cpu && (rows.rank() == 1 || rows.rank() == 2),
            "append_rows('{}') needs a 1-D or 2-D host tensor, got {}", path, rows.describe());
  if (rows.numel() == 0) return;
  const std::size_t count = rows.rank() == 2 ? static_cast<std::size_t>(rows.dim(1)) : 1;
  append(loc, path, native_type(rows.dtype()), rows.raw(), count,
         static_cast<std::size_t>(rows.dim(0)));
}

std::int64_t row_count(hid_t loc, const std::string& path) {
  Handle dataset = open_dataset(loc, path);
  const std::vector<hsize_t> dims = extent(dataset.get());
  PFC_CHECK(!dims.empty(), "'{}' in {} is a scalar, not a table", path, object_name(loc));
  return static_cast<std::int64_t>(dims[0]);
}

void truncate_rows(hid_t loc, const std::string& path, std::int64_t rows) {
  Handle dataset = open_dataset(loc, path);
  std::vector<hsize_t> dims = extent(dataset.get());
  PFC_CHECK(!dims.empty() && rows >= 0 && static_cast<hsize_t>(rows) <= dims[0],
            "cannot keep {} rows of '{}' in {}", rows, path, object_name(loc));
  dims[0] = static_cast<hsize_t>(rows);
  checked_status(H5Dset_extent(dataset.get(), dims.data()), loc,
                 fmt::format("truncate '{}' to {} rows", path, rows));
}

std::int64_t rows_through_step(hid_t loc, const std::string& step_path, std::int64_t step) {
  const Tensor steps = read_tensor(loc, step_path, DType::i64);
  const std::int64_t* s = steps.data<std::int64_t>();
  return std::find_if(s, s + steps.numel(),
                      [&](std::int64_t v) { return v > step || v < 0; }) -
         s;
}

Tensor read_rows(hid_t loc, const std::string& path, std::int64_t begin, std::int64_t count,
                 DType as) {
  Handle dataset = open_dataset(loc, path);
  const std::vector<hsize_t> dims = extent(dataset.get());
  PFC_CHECK(!dims.empty() && begin >= 0 && count >= 0 &&
                static_cast<hsize_t>(begin + count) <= dims[0],
            "rows [{}, {}) are outside '{}' ({} rows) in {}", begin, begin + count, path,
            dims.empty() ? 0 : dims[0], object_name(loc));
  Shape shape(dims.begin(), dims.end());
  shape[0] = count;
  Tensor out = Tensor::host(shape, as);
  if (out.numel() == 0) return out;
  std::vector<hsize_t> start(dims.size(), 0), block(dims);
  start[0] = static_cast<hsize_t>(begin);
  block[0] = static_cast<hsize_t>(count);
  Handle file_space(H5Dget_space(dataset.get()));
  const std::string what = fmt::format("read rows [{}, {}) of '{}'", begin, begin + count, path);
  checked_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                     block.data(), nullptr),
                 loc, what);
  Handle mem_space(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr));
  checked_status(H5Dread(dataset.get(), native_type(as), mem_space.get(), file_space.get(),
                         H5P_DEFAULT, out.raw()),
                 loc, what);
  return out;
}

void create_virtual_rows(hid_t loc, const std::string& path, DType dtype,
                         std::int64_t total_rows, std::int64_t columns,
                         const std::vector<RowSource>& sources) {
  const hsize_t dims[2] = {static_cast<hsize_t>(total_rows), static_cast<hsize_t>(columns)};
  Handle space(H5Screate_simple(2, dims, nullptr));
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  set_fill(dcpl.get(), dtype);
  const std::string what = fmt::format("map the sources of virtual dataset '{}'", path);
  for (const RowSource& source : sources) {
    PFC_CHECK(source.first_row >= 0 && source.rows >= 0 &&
                  source.first_row + source.rows <= total_rows,
              "virtual dataset '{}': rows [{}, {}) of {} are outside [0, {})", path,
              source.first_row, source.first_row + source.rows, source.file, total_rows);
    if (source.rows == 0) continue;
    Handle selected(H5Scopy(space.get()));
    const hsize_t start[2] = {static_cast<hsize_t>(source.first_row), 0};
    const hsize_t block[2] = {static_cast<hsize_t>(source.rows), dims[1]};
    checked_status(H5Sselect_hyperslab(selected.get(), H5S_SELECT_SET, start, nullptr, block,
                                       nullptr),
                   loc, what);
    Handle source_space(H5Screate_simple(2, block, nullptr));
    checked_status(H5Pset_virtual(dcpl.get(), selected.get(), source.file.c_str(),
                                  source.dataset.c_str(), source_space.get()),
                   loc, what);
  }
  Handle lcpl = parents_created();
  Handle dataset(checked(H5Dcreate2(loc, path.c_str(), native_type(dtype), space.get(),
                                    lcpl.get(), dcpl.get(), H5P_DEFAULT),
                         loc, fmt::format("create virtual dataset '{}'", path)));
}

}  // namespace pfc::h5
