// The reader of torch.save's state_dict files, on archives made here opcode by opcode
// (support/torch_files.h): float32, float16 and int64 storages, views with strides and
// offsets read as PyTorch reads them, tensors sharing a storage; and every refusal naming
// the file and the tensor: a foreign global, another storage type, a short storage, a view past
// its storage, a big-endian archive, a zip of something else, PyTorch's legacy format.
#include <gtest/gtest.h>

#include <zip.h>

#include <cstring>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "eval/torch_state_dict_reader.h"
#include "support/test_paths.h"
#include "support/torch_files.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

using test::Bytes;
using test::TorchTensorRecord;

std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

std::string write_model(const std::string& dir, const std::vector<TorchTensorRecord>& tensors,
                        std::vector<std::pair<std::string, Bytes>> storages,
                        const std::string& rebuild = "torch._utils\n_rebuild_tensor_v2\n") {
  storages.insert(storages.begin(),
                  {"model/data.pkl", test::torch_state_dict_pickle(tensors, rebuild)});
  storages.push_back({"model/byteorder", {'l', 'i', 't', 't', 'l', 'e'}});
  const std::string path = dir + "/model.pt";
  test::write_zip(path, storages);
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_torch_state_dict(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(TorchStateDictReader, ReadsContiguousTensorsInOrder) {
  const std::string dir = test::scratch_dir("torch_plain");
  const std::string path = write_model(
      dir,
      {{"conv1.weight", "FloatStorage", "0", 24, 0, {2, 3, 2, 2}, {12, 4, 2, 1}},
       {"bn1.num_batches_tracked", "LongStorage", "1", 1, 0, {}, {}},
       {"prelu.weight", "HalfStorage", "2", 3, 0, {3}, {1}}},
      {{"model/data/0", test::float_bytes(iota(24))},
       {"model/data/1", {7, 0, 0, 0, 0, 0, 0, 0}},
       {"model/data/2", {0x00, 0x3c, 0x00, 0xc0, 0x55, 0x35}}});  // 1, -2, 0.333...
  const std::vector<NamedTensor> tensors = read_torch_state_dict(path);
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "conv1.weight");
  EXPECT_EQ(tensors[0].value.shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(values(tensors[0].value), iota(24));
  EXPECT_EQ(tensors[1].value.dtype(), DType::i64);
  EXPECT_EQ(tensors[1].value.shape(), Shape{});
  EXPECT_EQ(tensors[1].value.data<std::int64_t>()[0], 7);
  EXPECT_EQ(tensors[2].value.dtype(), DType::f32) << "float16 is widened";
  EXPECT_EQ(values(tensors[2].value),
            (std::vector<float>{1.0f, -2.0f, Half::to_float(0x3555)}));
}

TEST(TorchStateDictReader, ReadsViewsAsPyTorchDoes) {
  const std::string dir = test::scratch_dir("torch_views");
  // One storage of 20 values seen three ways: transposed (a [3, 4] view of a [4, 3] block at
  // offset 2), every other element from offset 1, and a [2, 2] corner with a row stride of 5.
  const std::vector<float> storage = iota(20);
  const std::string path = write_model(
      dir,
      {{"t", "FloatStorage", "s", 20, 2, {3, 4}, {1, 3}},
       {"every_other", "FloatStorage", "s", 20, 1, {5}, {2}},
       {"corner", "FloatStorage", "s", 20, 0, {2, 2}, {5, 1}},
       {"broadcast", "FloatStorage", "s", 20, 4, {2, 3}, {0, 1}}},
      {{"model/data/s", test::float_bytes(storage)}});
  const std::vector<NamedTensor> tensors = read_torch_state_dict(path);
  ASSERT_EQ(tensors.size(), 4u);
  std::vector<float> transposed;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) transposed.push_back(storage[2 + r + 3 * c]);
  EXPECT_EQ(values(tensors[0].value), transposed);
  EXPECT_EQ(values(tensors[1].value),
            (std::vector<float>{storage[1], storage[3], storage[5], storage[7], storage[9]}));
  EXPECT_EQ(values(tensors[2].value),
            (std::vector<float>{storage[0], storage[1], storage[5], storage[6]}));
  EXPECT_EQ(values(tensors[3].value), (std::vector<float>{storage[4], storage[5], storage[6],
                                                          storage[4], storage[5], storage[6]}));
}

TEST(TorchStateDictReader, RefusesForeignGlobalsByName) {
  const std::string dir = test::scratch_dir("torch_foreign");
  const std::string path =
      write_model(dir, {{"w", "FloatStorage", "0", 2, 0, {2}, {1}}},
                  {{"model/data/0", test::float_bytes({1, 2})}}, "os\nsystem\n");
  const std::string why = error_of(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("'os.system' is refused"), std::string::npos) << why;
  EXPECT_NE(why.find("never imports or runs"), std::string::npos) << why;
  // A global the vocabulary names, called where a tensor belongs.
  const std::string ordered =
      write_model(dir, {{"w", "FloatStorage", "0", 2, 0, {2}, {1}}},
                  {{"model/data/0", test::float_bytes({1, 2})}}, "collections\nOrderedDict\n");
  EXPECT_NE(error_of(ordered).find("tensor 'w': it is a call of collections.OrderedDict"),
            std::string::npos)
      << error_of(ordered);
}

TEST(TorchStateDictReader, RefusesBadStoragesNamingTheTensor) {
  const std::string dir = test::scratch_dir("torch_bad");
  const auto refuse = [&](const TorchTensorRecord& t, const Bytes& storage,
                          const std::string& expected) {
    const std::string path = write_model(dir, {t}, {{"model/data/" + t.key, storage}});
    const std::string why = error_of(path);
    EXPECT_NE(why.find(path), std::string::npos) << why;
    EXPECT_NE(why.find("tensor '" + t.name + "'"), std::string::npos) << why;
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  };
  refuse({"double", "DoubleStorage", "0", 1, 0, {1}, {1}}, Bytes(8), "torch.DoubleStorage");
  refuse({"short", "FloatStorage", "0", 4, 0, {4}, {1}}, test::float_bytes({1, 2, 3}),
         "truncated");
  refuse({"long", "FloatStorage", "0", 2, 0, {2}, {1}}, test::float_bytes({1, 2, 3}),
         "holds 12 bytes");
  refuse({"past", "FloatStorage", "0", 4, 1, {2, 2}, {2, 1}}, test::float_bytes({1, 2, 3, 4}),
         "runs past its storage");
  refuse({"offset", "FloatStorage", "0", 4, 4, {}, {}}, test::float_bytes({1, 2, 3, 4}),
         "runs past its storage");
  // A broadcast (stride 0) could claim any number of elements: not read.
  refuse({"huge", "FloatStorage", "0", 4, 0, {2, 1 << 30}, {0, 0}},
         test::float_bytes({1, 2, 3, 4}), "more elements than its storage");
  refuse({"wide", "FloatStorage", "0", 4, 0, {2}, {1 << 30}}, test::float_bytes({1, 2, 3, 4}),
         "runs past its storage");
  refuse({"absurd", "FloatStorage", "0", std::int64_t{1} << 30, 0, {1}, {1}},
         test::float_bytes({1}), "truncated");
  refuse({"ranks", "FloatStorage", "0", 4, 0, {4}, {1, 1}}, test::float_bytes({1, 2, 3, 4}),
         "disagree");
  const std::string missing =
      write_model(dir, {{"gone", "FloatStorage", "9", 1, 0, {1}, {1}}}, {});
  EXPECT_NE(error_of(missing).find("model/data/9 is not in the archive"), std::string::npos)
      << error_of(missing);
}

TEST(TorchStateDictReader, RefusesWhatTorchSaveDidNotWrite) {
  const std::string dir = test::scratch_dir("torch_not");
  const std::string notes = dir + "/notes.zip";
  test::write_zip(notes, {{"model/notes.txt", {'h', 'i'}}});
  EXPECT_NE(error_of(notes).find("without <name>/data.pkl"), std::string::npos)
      << error_of(notes);

  const std::string text = dir + "/text.pt";
  std::ofstream(text) << "not a model";
  EXPECT_NE(error_of(text).find("is not a file torch.save wrote"), std::string::npos);

  // torch.save(..., _use_new_zipfile_serialization=False) begins with LONG1 of its magic.
  const std::string legacy = dir + "/legacy.pt";
  std::ofstream(legacy, std::ios::binary)
      << std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  EXPECT_NE(error_of(legacy).find("legacy format"), std::string::npos) << error_of(legacy);

  const std::string big = dir + "/big.pt";
  test::write_zip(big, {{"model/data.pkl", test::torch_state_dict_pickle({})},
                        {"model/byteorder", {'b', 'i', 'g'}}});
  EXPECT_NE(error_of(big).find("byteorder is 'big'"), std::string::npos) << error_of(big);

  // Half an archive: its central directory is gone.
  const std::string good = write_model(dir, {{"w", "FloatStorage", "0", 2, 0, {2}, {1}}},
                                       {{"model/data/0", test::float_bytes({1, 2})}});
  std::ifstream in(good, std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), {});
  const std::string cut = dir + "/cut.pt";
  std::ofstream(cut, std::ios::binary) << whole.substr(0, whole.size() / 2);
  EXPECT_NE(error_of(cut).find("not a readable zip archive"), std::string::npos)
      << error_of(cut);

  const std::string twice = write_model(
      dir, {{"w", "FloatStorage", "0", 2, 0, {2}, {1}}, {"w", "FloatStorage", "0", 2, 0, {2}, {1}}},
      {{"model/data/0", test::float_bytes({1, 2})}});
  EXPECT_NE(error_of(twice).find("'w' appears twice"), std::string::npos) << error_of(twice);
}

TEST(TorchStateDictReader, RefusesADamagedEntry) {
  const std::string dir = test::scratch_dir("torch_crc");
  const std::string path = write_model(dir, {{"w", "FloatStorage", "0", 4, 0, {4}, {1}}},
                                       {{"model/data/0", test::float_bytes({1, 2, 3, 4})}});
  // Flip a byte of the stored storage: the zip's CRC no longer matches.
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(f)), {});
  const std::size_t at = whole.find(std::string("\x00\x00\x80\x3f", 4));  // 1.0f
  ASSERT_NE(at, std::string::npos);
  f.seekp(static_cast<std::streamoff>(at + 3));
  f.put('\x40');
  f.close();
  const std::string why = error_of(path);
  EXPECT_NE(why.find("model/data/0"), std::string::npos) << why;
  EXPECT_NE(why.find("CRC"), std::string::npos) << why;
}

// Within the limits a network sets (eval/model_file_limits.h): a storage, the pickle's bytes
// and its opcodes beyond them are refused from the archive's directory and the pickle alone,
// before any storage is read, each naming the bound.
TEST(TorchStateDictReader, RefusesWhatExceedsItsLimitsBeforeReading) {
  const std::string dir = test::scratch_dir("torch_limits");
  const std::string path = write_model(dir, {{"w", "FloatStorage", "0", 4, 0, {4}, {1}}},
                                       {{"model/data/0", test::float_bytes({1, 2, 3, 4})}});
  const auto refusal = [&](const TorchStateDictLimits& limits) {
    try {
      TorchStateDict dict(path, limits);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  TorchStateDictLimits limits;
  limits.bound = "the network N";
  limits.storage_bytes = 8;
  std::string why = refusal(limits);
  EXPECT_NE(why.find("tensor 'w': its storage model/data/0 holds 16 bytes, more than the 8 "
                     "bytes of the network N"),
            std::string::npos)
      << why;
  limits.storage_bytes = UINT64_MAX;
  limits.pickle_bytes = 10;
  why = refusal(limits);
  EXPECT_NE(why.find("model/data.pkl holds"), std::string::npos) << why;
  limits.pickle_bytes = UINT64_MAX;
  limits.pickle_opcodes = 5;
  why = refusal(limits);
  EXPECT_NE(why.find("more than 5 opcodes, more than a state_dict of the network N holds"),
            std::string::npos)
      << why;
  limits.pickle_opcodes = SIZE_MAX;
  limits.file = {100, "the 100 bytes a model file may hold"};
  why = refusal(limits);
  EXPECT_NE(why.find("more than the 100 bytes a model file may hold"), std::string::npos) << why;
}

// Only the storages of the tensors asked for are read: a damaged one no one asks for is not
// even opened; asked for, it is refused.
TEST(TorchStateDictReader, ReadsOnlyTheTensorsNamed) {
  const std::string dir = test::scratch_dir("torch_named");
  const std::string path =
      write_model(dir,
                  {{"w", "FloatStorage", "0", 2, 0, {2}, {1}},
                   {"other", "FloatStorage", "1", 4, 0, {4}, {1}}},
                  {{"model/data/0", test::float_bytes({1, 2})},
                   {"model/data/1", test::float_bytes({1, 2, 3, 4})}});
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(f)), {});
  const std::size_t at = whole.find(std::string("\x00\x00\x40\x40", 4));  // 3.0f: "other"
  ASSERT_NE(at, std::string::npos);
  f.seekp(static_cast<std::streamoff>(at + 3));
  f.put('\x41');
  f.close();
  const TorchStateDict dict(path, {});
  ASSERT_EQ(dict.entries().size(), 2u);
  EXPECT_EQ(dict.entries()[1].name, "other");
  EXPECT_EQ(dict.entries()[1].shape, Shape{4});
  const std::vector<NamedTensor> read = dict.read({"w"});
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(values(read[0].value), (std::vector<float>{1, 2}));
  EXPECT_NE(test::usage_error([&] { dict.read({"other"}); }).find("CRC"), std::string::npos);
}

}  // namespace
}  // namespace pfc
