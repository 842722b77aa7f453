// Row datasets: appendable tables (growth, widening, truncation), row ranges by hyperslab,
// and virtual datasets over rows of other files found next to the virtual one.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

TEST(RowDatasets, AppendWidenAndTruncate) {
  const std::string path = test::scratch_dir("row_datasets_append") + "/t.h5";
  h5::File file(path, h5::Mode::create_truncate);
  h5::create_appendable(file.id(), "/steps/step", DType::i64, 0);
  h5::create_appendable(file.id(), "/steps/per_rank", DType::f64, 2);
  for (std::int64_t step = 1; step <= 5; ++step) {
    h5::append_row(file.id(), "/steps/step", std::vector<std::int64_t>{step * 10});
    h5::append_row(file.id(), "/steps/per_rank",
                   std::vector<double>{step + 0.5, step + 0.25});
  }
  // A row from three ranks widens the table; the older rows read NaN in the new column.
  h5::append_row(file.id(), "/steps/per_rank", std::vector<double>{7, 8, 9});
  // A row from one rank leaves the rest of the row as fill.
  h5::append_row(file.id(), "/steps/per_rank", std::vector<double>{1});
  EXPECT_EQ(h5::row_count(file.id(), "/steps/step"), 5);
  EXPECT_EQ(h5::dataset_shape(file.id(), "/steps/per_rank"), (Shape{7, 3}));

  const Tensor table = h5::read_tensor(file.id(), "/steps/per_rank", DType::f64);
  const double* v = table.data<double>();
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[1], 1.25);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[5 * 3 + 2], 9.0);
  EXPECT_EQ(v[6 * 3 + 0], 1.0);
  EXPECT_TRUE(std::isnan(v[6 * 3 + 1]));

  const Tensor middle = h5::read_rows(file.id(), "/steps/step", 1, 3, DType::i64);
  ASSERT_EQ(middle.shape(), (Shape{3}));
  EXPECT_EQ(middle.data<std::int64_t>()[0], 20);
  EXPECT_EQ(middle.data<std::int64_t>()[2], 40);

  h5::truncate_rows(file.id(), "/steps/step", 2);
  EXPECT_EQ(h5::row_count(file.id(), "/steps/step"), 2);
  h5::append_row(file.id(), "/steps/step", std::vector<std::int64_t>{99});
  const Tensor steps = h5::read_tensor(file.id(), "/steps/step", DType::i64);
  EXPECT_EQ(steps.data<std::int64_t>()[2], 99);

  EXPECT_THROW(h5::append_row(file.id(), "/steps/step", std::vector<std::int64_t>{1, 2}), Error);
  EXPECT_THROW(h5::truncate_rows(file.id(), "/steps/step", 10), Error);
  EXPECT_THROW(h5::read_rows(file.id(), "/steps/step", 2, 5, DType::i64), Error);
}

TEST(RowDatasets, IntegerTablesFillWithMinusOne) {
  const std::string path = test::scratch_dir("row_datasets_fill") + "/t.h5";
  h5::File file(path, h5::Mode::create_truncate);
  h5::create_appendable(file.id(), "/mem", DType::i64, 3);
  h5::append_row(file.id(), "/mem", std::vector<std::int64_t>{5});
  const Tensor mem = h5::read_tensor(file.id(), "/mem", DType::i64);
  EXPECT_EQ(mem.data<std::int64_t>()[0], 5);
  EXPECT_EQ(mem.data<std::int64_t>()[1], -1);
  EXPECT_EQ(mem.data<std::int64_t>()[2], -1);
}

Tensor rows_from(std::int64_t first, std::int64_t rows, std::int64_t columns) {
  Tensor t = Tensor::host({rows, columns}, DType::f32);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < columns; ++c)
      t.data<float>()[r * columns + c] = static_cast<float>((first + r) * 100 + c);
  return t;
}

TEST(RowDatasets, VirtualRowsOverOtherFiles) {
  const fs::path dir = test::scratch_dir("row_datasets_virtual");
  {
    h5::File a((dir / "a.h5").string(), h5::Mode::create_truncate);
    h5::write_tensor(a.id(), "/w", rows_from(0, 3, 4));
    h5::File b((dir / "b.h5").string(), h5::Mode::create_truncate);
    h5::write_tensor(b.id(), "/w", rows_from(3, 2, 4));
    h5::File v((dir / "v.h5").string(), h5::Mode::create_truncate);
    h5::create_virtual_rows(v.id(), "/all", DType::f32, 6, 4,
                            {{"a.h5", "/w", 0, 3}, {"b.h5", "/w", 3, 2}});
  }
  // Read from another working folder, after moving the files: the sources are found next to
  // the virtual dataset's file.
  const fs::path moved = dir / "moved";
  fs::create_directory(moved);
  for (const char* name : {"a.h5", "b.h5", "v.h5"}) fs::rename(dir / name, moved / name);
  h5::File v((moved / "v.h5").string(), h5::Mode::read);
  const Tensor all = h5::read_tensor(v.id(), "/all", DType::f32);
  ASSERT_EQ(all.shape(), (Shape{6, 4}));
  for (std::int64_t r = 0; r < 5; ++r)
    for (std::int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(all.data<float>()[r * 4 + c], static_cast<float>(r * 100 + c));
  EXPECT_TRUE(std::isnan(all.data<float>()[5 * 4]));  // no source: fill

  const Tensor straddling = h5::read_rows(v.id(), "/all", 2, 2, DType::f32);
  EXPECT_EQ(straddling.data<float>()[0], 200.0f);
  EXPECT_EQ(straddling.data<float>()[4 + 3], 303.0f);
}

}  // namespace
}  // namespace pfc
