#include "support/hdf5_damage.h"

#include <gtest/gtest.h>

#include <fstream>

#include "io/hdf5.h"

namespace pfc::test {

namespace {

std::uint64_t first_chunk_address(const std::string& path, const std::string& dataset) {
  const h5::File file(path, h5::Mode::read);
  const h5::Handle d(H5Dopen2(file.id(), dataset.c_str(), H5P_DEFAULT));
  const h5::Handle space(H5Dget_space(d.get()));
  hsize_t offset[H5S_MAX_RANK] = {};
  unsigned mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info(d.get(), space.get(), 0, offset, &mask, &address, &size), 0)
      << path << ":" << dataset << " is not chunked";
  return address;
}

}  // namespace

void flip_stored_byte(const std::string& path, const std::string& dataset, std::uint64_t byte) {
  const std::uint64_t at = first_chunk_address(path, dataset) + byte;
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char value = 0;
  f.read(&value, 1);
  value = static_cast<char>(value ^ 0x10);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(&value, 1);
  ASSERT_TRUE(f.good()) << "cannot damage " << path;
}

}  // namespace pfc::test
