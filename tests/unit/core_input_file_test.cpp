// Opening files from elsewhere (core/input_file.h): a regular file is read whole; a folder, a
// FIFO (opened without waiting for a writer: were it waited on, this test would hang) and a
// device are refused as what they are, a missing file as missing, and a file beyond the
// caller's limit before any byte is read, naming the limit.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/input_file.h"
#include "support/test_paths.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

std::string refusal(const fs::path& path, const InputFileLimit& limit = {}) {
  std::string why;
  EXPECT_FALSE(InputFile::open(path, limit, why).has_value()) << path;
  return why;
}

TEST(InputFile, ReadsARegularFileWhole) {
  const fs::path file = fs::path(test::scratch_dir("input_file_regular")) / "a.bin";
  std::ofstream(file, std::ios::binary) << "twelve bytes";
  std::string why;
  const std::optional<InputFile> in = InputFile::open(file, {12, "12 bytes"}, why);
  ASSERT_TRUE(in.has_value()) << why;
  EXPECT_EQ(in->size(), 12u);
  std::vector<std::uint8_t> bytes;
  ASSERT_TRUE(in->read_all(bytes, why)) << why;
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "twelve bytes");
  EXPECT_EQ(in->head(3), (std::vector<std::uint8_t>{'t', 'w', 'e'}));
}

TEST(InputFile, RefusesWhatIsNotARegularFileAsWhatItIs) {
  const fs::path dir = test::scratch_dir("input_file_kinds");
  EXPECT_EQ(refusal(dir), "is a folder, not a file");
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal(fifo), "is a FIFO (named pipe), not a file");
  EXPECT_EQ(refusal("/dev/null"), "is a character device, not a file");
  EXPECT_EQ(refusal(dir / "nothing"), "does not exist");
  EXPECT_EQ(non_file_kind(fifo), "is a FIFO (named pipe)");
  EXPECT_EQ(non_file_kind(dir), "is a folder");
}

TEST(InputFile, RefusesAFileBeyondTheLimitNamingIt) {
  const fs::path file = fs::path(test::scratch_dir("input_file_limit")) / "big.jpg";
  std::ofstream(file).close();
  fs::resize_file(file, std::uintmax_t{3} << 20);
  EXPECT_EQ(refusal(file, {std::uint64_t{1} << 20, "the 1 MiB pfc reads of an image file"}),
            "holds 3145728 bytes (3 MiB), more than the 1 MiB pfc reads of an image file");
  const std::string message = test::usage_error([&] {
    InputFile::open_or_refuse(file, "an image", {std::uint64_t{1} << 20, "the limit"});
  });
  EXPECT_NE(message.find("'" + file.string() + "' (an image) holds"), std::string::npos)
      << message;
}

TEST(InputFile, ByteCountsReadAsUnits) {
  EXPECT_EQ(byte_count_text(300), "300 bytes");
  EXPECT_EQ(byte_count_text(std::uint64_t{64} << 20), "64 MiB");
  EXPECT_EQ(byte_count_text(std::uint64_t{3} << 29), "1.5 GiB");
}

}  // namespace
}  // namespace pfc
