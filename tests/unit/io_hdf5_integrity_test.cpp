// The HDF5 layer against damage: every dataset it writes carries a Fletcher32 checksum, so a
// flipped byte is a read error that names the dataset and says "checksum" (also when read
// through a virtual dataset over it); failures to open say why in words; datasets without a
// checksum (files of older versions) still read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"
#include "support/hdf5_damage.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

Tensor counting(std::int64_t rows, std::int64_t columns) {
  Tensor t = Tensor::host({rows, columns}, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Hdf5Integrity, AFlippedByteIsAChecksumErrorNamingTheDataset) {
  const std::string path = test::scratch_dir("hdf5_flipped") + "/t.h5";
  {
    h5::File file(path, h5::Mode::create_truncate);
    h5::write_tensor(file.id(), "/group/weight", counting(300, 7));
    file.close();
  }
  {
    const h5::File file(path, h5::Mode::read);
    EXPECT_TRUE(h5::has_checksum(file.id(), "/group/weight"));
    const Tensor back = h5::read_tensor(file.id(), "/group/weight", DType::f32);
    EXPECT_EQ(back.data<float>()[2099], 2099.0f);
  }
  test::flip_stored_byte(path, "/group/weight", 101);
  const h5::File file(path, h5::Mode::read);
  const std::string text =
      error_of([&] { h5::read_tensor(file.id(), "/group/weight", DType::f32); });
  EXPECT_NE(text.find("/group/weight"), std::string::npos) << text;
  EXPECT_NE(text.find("Fletcher32 checksum"), std::string::npos) << text;
}

TEST(Hdf5Integrity, AVirtualDatasetOverADamagedSourceFailsToo) {
  const std::string dir = test::scratch_dir("hdf5_virtual_damaged");
  for (const char* name : {"a.h5", "b.h5"}) {
    h5::File file(dir + "/" + name, h5::Mode::create_truncate);
    h5::write_tensor(file.id(), "/rows", counting(4, 3));
    file.close();
  }
  {
    h5::File file(dir + "/view.h5", h5::Mode::create_truncate);
    h5::create_virtual_rows(file.id(), "/all", DType::f32, 8, 3,
                            {{"a.h5", "/rows", 0, 4}, {"b.h5", "/rows", 4, 4}});
    file.close();
  }
  {
    const h5::File view(dir + "/view.h5", h5::Mode::read);
    EXPECT_EQ(h5::read_rows(view.id(), "/all", 4, 4, DType::f32).data<float>()[11], 11.0f);
  }
  test::flip_stored_byte(dir + "/b.h5", "/rows", 5);
  const h5::File view(dir + "/view.h5", h5::Mode::read);
  EXPECT_EQ(h5::read_rows(view.id(), "/all", 0, 4, DType::f32).data<float>()[5], 5.0f);
  const std::string text = error_of([&] { h5::read_rows(view.id(), "/all", 2, 4, DType::f32); });
  EXPECT_NE(text.find("/all"), std::string::npos) << text;
  EXPECT_NE(text.find("checksum"), std::string::npos) << text;
}

TEST(Hdf5Integrity, DatasetsWithoutAChecksumStillRead) {
  const std::string path = test::scratch_dir("hdf5_no_checksum") + "/old.h5";
  {
    h5::File file(path, h5::Mode::create_truncate);
    const Tensor t = counting(5, 2);
    const hsize_t dims[2] = {5, 2};
    h5::Handle space(H5Screate_simple(2, dims, nullptr));
    h5::Handle d(H5Dcreate2(file.id(), "/contiguous", H5T_NATIVE_FLOAT, space.get(),
                            H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_GE(H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()), 0);
  }
  const h5::File file(path, h5::Mode::read);
  EXPECT_FALSE(h5::has_checksum(file.id(), "/contiguous"));
  EXPECT_EQ(h5::read_tensor(file.id(), "/contiguous", DType::f32).data<float>()[9], 9.0f);
}

TEST(Hdf5Integrity, OpenFailuresSayWhy) {
  const std::string dir = test::scratch_dir("hdf5_open_failures");
  std::string text = error_of([&] { h5::File(dir + "/missing.h5", h5::Mode::read); });
  EXPECT_NE(text.find("missing.h5': it does not exist"), std::string::npos) << text;
  std::ofstream(dir + "/text.h5") << "not HDF5 at all";
  text = error_of([&] { h5::File(dir + "/text.h5", h5::Mode::read_write); });
  EXPECT_NE(text.find("text.h5' for writing: it is not an HDF5 file"), std::string::npos) << text;
  text = error_of([&] { h5::File(dir + "/no/such/folder/x.h5", h5::Mode::create_truncate); });
  EXPECT_NE(text.find("No such file or directory"), std::string::npos) << text;
}

}  // namespace
}  // namespace pfc
