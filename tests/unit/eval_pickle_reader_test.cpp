// The restricted pickle reader: files written by python3's own pickle (HIGHEST_PROTOCOL with
// frames and MEMOIZE, and protocol 2 with Python 2's byte strings), generated at run time;
// Python 2's exact bytes; hostile pickles (code, truncation, bad counts, bad frames, unknown
// memo keys); and every truncation and many bit flips of a valid file: a message, never a
// crash or an object from nowhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "eval/pickle_reader.h"
#include "support/face_images.h"
#include "support/test_paths.h"
#include "support/verification_bins.h"

namespace pfc {
namespace {

using test::Bytes;
using Kind = PickleObject::Kind;

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

// The bytes of a string literal, NULs included.
#define RAW(literal) bytes_of(std::string(literal, sizeof(literal) - 1))

std::string error_of(const Bytes& data) {
  try {
    parse_pickle(data);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Runs python3 with `script` (a program text); false when there is no python3.
bool run_python(const std::string& script, const std::string& dir) {
  if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0) return false;
  const std::string file = dir + "/script.py";
  test::write_file(file, bytes_of(script));
  const int rc = std::system(("python3 " + file).c_str());
  EXPECT_EQ(rc, 0) << "python3 failed on " << file;
  return true;
}

// The objects python writes in every case below: a list of byte strings of several lengths
// (empty, short, over 255, over a 64 KiB frame), one of them twice (a memo reference), and a
// list of booleans.
constexpr const char* kPythonObjects = R"(
blob = bytes(range(256)) * 300
shared = b'shared image'
data = ([b'', b'abc', bytes(range(200)), bytes(300), blob, shared, shared],
        [True, False, True] * 400)
)";

void expect_python_objects(const Bytes& file) {
  const PickleDocument doc = parse_pickle(file);
  const PickleObject& root = doc.at(doc.root);
  ASSERT_EQ(root.kind, Kind::tuple);
  ASSERT_EQ(root.items.size(), 2u);
  const PickleObject& bins = doc.at(root.items[0]);
  ASSERT_EQ(bins.kind, Kind::list);
  ASSERT_EQ(bins.items.size(), 7u);
  const std::size_t sizes[] = {0, 3, 200, 300, 256 * 300, 12, 12};
  for (std::size_t i = 0; i < 7; ++i) {
    const PickleObject& b = doc.at(bins.items[i]);
    ASSERT_EQ(b.kind, Kind::bytes) << i;
    EXPECT_EQ(b.size, sizes[i]) << i;
  }
  const PickleObject& blob = doc.at(bins.items[4]);
  for (std::size_t k = 0; k < blob.size; k += 997)
    EXPECT_EQ(file[blob.offset + k], k % 256) << "blob byte " << k;
  EXPECT_EQ(std::string(file.begin() + static_cast<std::ptrdiff_t>(doc.at(bins.items[1]).offset),
                        file.begin() + static_cast<std::ptrdiff_t>(doc.at(bins.items[1]).offset +
                                                                   3)),
            "abc");
  EXPECT_EQ(bins.items[5], bins.items[6]) << "the memo reference is the same object";
  const PickleObject& flags = doc.at(root.items[1]);
  ASSERT_EQ(flags.kind, Kind::list);
  ASSERT_EQ(flags.items.size(), 1200u);
  for (std::size_t i = 0; i < 1200; ++i)
    EXPECT_EQ(doc.at(flags.items[i]).value, i % 3 != 1) << i;
}

TEST(PickleReader, ReadsPython3HighestProtocol) {
  const std::string dir = test::scratch_dir("python3");
  const std::string out = dir + "/highest.pickle";
  if (!run_python(std::string("import pickle\n") + kPythonObjects +
                      "open('" + out + "', 'wb').write(pickle.dumps(data, "
                      "protocol=pickle.HIGHEST_PROTOCOL))\n",
                  dir))
    GTEST_SKIP() << "no python3";
  const Bytes file = test::read_file(out);
  ASSERT_GE(file.size(), 2u);
  EXPECT_GE(file[1], 4) << "HIGHEST_PROTOCOL frames its data";
  expect_python_objects(file);
}

TEST(PickleReader, ReadsEveryProtocolFrom2To5WithPython2Strings) {
  // Python 3's own pickler at each protocol, with Python 2's rule for byte strings at
  // protocol 2 (tests/integration/learning/write_verification_bin.py explains why).
  const std::string dir = test::scratch_dir("protocols");
  const std::string script =
      test::source_dir() + "/tests/integration/learning/write_verification_bin.py";
  std::string program = "import importlib.util, pickle\n"
                        "spec = importlib.util.spec_from_file_location('m', '" + script +
                        "')\nm = importlib.util.module_from_spec(spec)\n"
                        "spec.loader.exec_module(m)\n" + kPythonObjects +
                        "import io\n"
                        "for p in range(3, pickle.HIGHEST_PROTOCOL + 1):\n"
                        "    open('" + dir + "/p%d.pickle' % p, 'wb').write(pickle.dumps(data, "
                        "protocol=p))\n"
                        "f = open('" + dir + "/p2.pickle', 'wb')\n"
                        "m.Python2Pickler(f, protocol=2).dump(data)\nf.close()\n";
  if (!run_python(program, dir)) GTEST_SKIP() << "no python3";
  for (int p = 2; p <= 5; ++p) {
    const std::string path = dir + "/p" + std::to_string(p) + ".pickle";
    if (!std::filesystem::exists(path)) continue;  // a python3 older than 3.8 has no 5
    SCOPED_TRACE(path);
    expect_python_objects(test::read_file(path));
  }
}

// Python 3's pickle at protocol 2 writes each bytes object as the call
// _codecs.encode(str, 'latin1') (GLOBAL, the text as UTF-8, REDUCE): that one global, with
// that one encoding, is read as the bytes it makes, nothing being called; and small integers
// (BININT1, BININT2, BININT) are numbers.
TEST(PickleReader, ReadsPython3Protocol2Bytes) {
  const std::string dir = test::scratch_dir("python3_protocol2");
  const std::string out = dir + "/p2.pickle";
  if (!run_python(std::string("import pickle\n") + R"(
blob = bytes(range(256)) * 300
shared = b'shared image'
data = ([b'abc', bytes(range(200)), bytes(300), blob, shared, shared, bytes([0x80, 0xff])],
        [True, False, True] * 400)
)" + "open('" + out + "', 'wb').write(pickle.dumps(data, protocol=2))\n",
                  dir))
    GTEST_SKIP() << "no python3";
  const Bytes file = test::read_file(out);
  ASSERT_NE(std::string(file.begin(), file.end()).find("c_codecs\nencode\n"), std::string::npos)
      << "python3 did not write bytes as _codecs.encode";
  const PickleDocument doc = parse_pickle(file);
  const PickleObject& bins = doc.at(doc.at(doc.root).items[0]);
  ASSERT_EQ(bins.items.size(), 7u);
  const auto bytes_at = [&](std::size_t i) {
    const auto span = doc.bytes(doc.at(bins.items[i]), file);
    return Bytes(span.begin(), span.end());
  };
  EXPECT_EQ(bytes_at(0), RAW("abc"));
  Bytes counting(200);
  for (std::size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(bytes_at(1), counting);
  EXPECT_EQ(bytes_at(2), Bytes(300, 0));
  const Bytes blob = bytes_at(3);
  ASSERT_EQ(blob.size(), 256u * 300u);
  for (std::size_t k = 0; k < blob.size(); ++k) ASSERT_EQ(blob[k], k % 256) << k;
  EXPECT_EQ(bytes_at(4), RAW("shared image"));
  EXPECT_EQ(bins.items[4], bins.items[5]) << "the memo reference is the same object";
  EXPECT_EQ(bytes_at(6), (Bytes{0x80, 0xff}));
  const PickleObject& flags = doc.at(doc.at(doc.root).items[1]);
  ASSERT_EQ(flags.items.size(), 1200u);
  EXPECT_TRUE(doc.at(flags.items[0]).value);

  const PickleDocument ints = parse_pickle(RAW("\x80\x02(K\x00K\x01M\x00\x01J\xff\xff\xff\xfft."));
  const PickleObject& tuple = ints.at(ints.root);
  ASSERT_EQ(tuple.items.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(ints.at(tuple.items[i]).kind, Kind::integer);
  EXPECT_EQ(ints.at(tuple.items[0]).integer, 0);
  EXPECT_EQ(ints.at(tuple.items[1]).integer, 1);
  EXPECT_EQ(ints.at(tuple.items[2]).integer, 256);
  EXPECT_EQ(ints.at(tuple.items[3]).integer, -1);
}

TEST(PickleReader, AcceptsNoOtherGlobalOrCall) {
  const std::pair<Bytes, std::string> cases[] = {
      {RAW("\x80\x02" "c_codecs\ndecode\nX\x01\x00\x00\x00" "aX\x06\x00\x00\x00latin1\x86R."),
       "names _codecs.decode"},
      {RAW("\x80\x02" "cbuiltins\nbytes\n)R."), "names builtins.bytes"},
      {RAW("\x80\x02" "c_codecs\nencode\nX\x01\x00\x00\x00" "aX\x05\x00\x00\x00utf-8\x86R."),
       "_codecs.encode with the encoding 'utf-8'"},
      {RAW("\x80\x02" "c_codecs\nencode\nX\x02\x00\x00\x00\xc4\x80X\x06\x00\x00\x00latin1\x86R."),
       "character U+0100"},
      {RAW("\x80\x02" "c_codecs\nencode\nX\x02\x00\x00\x00\xc3(X\x06\x00\x00\x00latin1\x86R."),
       "not UTF-8"},
      {RAW("\x80\x02" "c_codecs\nencode\n]R."), "REDUCE ('R') calls _codecs.encode with a list"},
      {RAW("\x80\x02" "c_codecs\nencode\nX\x01\x00\x00\x00" "a\x85R."),
       "REDUCE ('R') calls _codecs.encode with a tuple of 1"},
      {RAW("\x80\x02" "c_codecs\nencode\n."), "STOP: the value holds the function"},
      {RAW("\x80\x02" "c_codecs\nenc"), "truncated"},
      {RAW("\x80\x02X\x01\x00\x00\x00" "a)R."), "REDUCE ('R') calls a text string"},
  };
  for (const auto& [pickle, expected] : cases) {
    const std::string why = error_of(pickle);
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  }
}

TEST(PickleReader, ReadsPython2BytesExactly) {
  // The bytes Python 2's cPickle writes for (['ab', 'c' * 300], [True]) at protocol 2.
  Bytes file = {0x80, 2, ']', 'q', 0, '(', 'U', 2, 'a', 'b', 'q', 1, 'T', 0x2c, 1, 0, 0};
  file.insert(file.end(), 300, 'c');
  const Bytes tail = {'q', 2, 'e', ']', 'q', 3, 0x88, 'a', 0x86, 'q', 4, '.'};
  file.insert(file.end(), tail.begin(), tail.end());
  const PickleDocument doc = parse_pickle(file);
  const PickleObject& root = doc.at(doc.root);
  ASSERT_EQ(root.kind, Kind::tuple);
  EXPECT_EQ(doc.at(doc.at(root.items[0]).items[1]).size, 300u);
  EXPECT_TRUE(doc.at(doc.at(root.items[1]).items[0]).value);
  // The test writer produces the same bytes.
  EXPECT_EQ(test::python2_pickle({RAW("ab"), Bytes(300, 'c')}, {true}), file);
}

TEST(PickleReader, RefusesCodeByName) {
  // What pickle.dumps writes for an object whose __reduce__ returns (os.system, ('id',)).
  const Bytes protocol2 = RAW("\x80\x02" "cposix\nsystem\nq\x00X\x02\x00\x00"
                                               "\x00idq\x01\x85q\x02Rq\x03.");
  std::string why = error_of(protocol2);
  EXPECT_NE(why.find("GLOBAL ('c')"), std::string::npos) << why;
  EXPECT_NE(why.find("never"), std::string::npos) << why;
  const Bytes protocol4 = RAW("\x80\x04\x95\x1c\x00\x00\x00\x00\x00\x00\x00"
                                               "\x8c\x05posix\x94\x8c\x06system\x94\x93\x94"
                                               "\x8c\x02id\x94\x85\x94R\x94.");
  why = error_of(protocol4);
  EXPECT_NE(why.find("STACK_GLOBAL"), std::string::npos) << why;
  const Bytes stack_global = RAW("\x80\x04]\x93.");
  EXPECT_NE(error_of(stack_global).find("STACK_GLOBAL"), std::string::npos);
  const Bytes reduce = RAW("\x80\x02])R.");
  EXPECT_NE(error_of(reduce).find("REDUCE"), std::string::npos);
  for (const char* op : {"\x80\x02]b.", "\x80\x02]\x81.", "\x80\x02(i", "\x80\x02\x82\x01."}) {
    const std::string e = error_of(bytes_of(op));
    EXPECT_NE(e.find("import or call code"), std::string::npos) << e;
  }
}

TEST(PickleReader, RefusesOtherObjectsByName) {
  EXPECT_NE(error_of(RAW("\x80\x02G\x3f\xf0\x00\x00\x00\x00\x00\x00.")).find("BINFLOAT"),
            std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02\x8a\x01\x05.")).find("LONG1"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02}.")).find("EMPTY_DICT"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02N.")).find("NONE"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02\xff.")).find("not a pickle opcode"), std::string::npos);
}

// A vocabulary of objects and named globals, as the PyTorch state_dict reader gives it.
PickleVocabulary calls_of(std::vector<std::string> globals) {
  PickleVocabulary v;
  v.file_kind = "a test file";
  v.contents = "what the test allows";
  v.objects = true;
  v.persistent_ids = true;
  v.globals = std::move(globals);
  return v;
}

TEST(PickleReader, ReadsObjectsAndRecordsCallsWithoutMakingThem) {
  // OrderedDict() filled by SETITEMS, then BUILD with a state; a persistent id of a tuple of
  // text and integers; None; a dict; LONG1 and negative BININT.
  const Bytes data = RAW("\x80\x02" "ccollections\nOrderedDict\nq\x00)Rq\x01("
                         "X\x01\x00\x00\x00" "a(X\x07\x00\x00\x00" "storageK\x07M\x00\x01" "tQ"
                         "X\x01\x00\x00\x00" "bN"
                         "\x8c\x01" "c\x8a\x02\xff\x7f"
                         "X\x01\x00\x00\x00" "dJ\xfe\xff\xff\xff"
                         "u}X\x01\x00\x00\x00" "e}sb.");
  const PickleDocument doc = parse_pickle(data, calls_of({"collections.OrderedDict"}));
  const PickleObject& root = doc.at(doc.root);
  ASSERT_EQ(root.kind, Kind::call);
  EXPECT_EQ(doc.at(root.items[0]).kind, Kind::global);
  EXPECT_EQ(doc.at(root.items[0]).text, "collections.OrderedDict");
  EXPECT_TRUE(doc.at(root.items[1]).items.empty());
  ASSERT_EQ(root.entries.size(), 4u);
  EXPECT_EQ(doc.at(root.entries[0].first).text, "a");
  const PickleObject& id = doc.at(root.entries[0].second);
  ASSERT_EQ(id.kind, Kind::persistent_id);
  const PickleObject& record = doc.at(id.items[0]);
  ASSERT_EQ(record.items.size(), 3u);
  EXPECT_EQ(doc.at(record.items[0]).text, "storage");
  EXPECT_EQ(doc.at(record.items[1]).integer, 7);
  EXPECT_EQ(doc.at(record.items[2]).integer, 256);
  EXPECT_EQ(doc.at(root.entries[1].second).kind, Kind::none);
  EXPECT_EQ(doc.at(root.entries[2].first).text, "c");
  EXPECT_EQ(doc.at(root.entries[2].second).integer, 32767);
  EXPECT_EQ(doc.at(root.entries[3].second).integer, -2);
  ASSERT_TRUE(root.state);
  const PickleObject& state = doc.at(*root.state);
  ASSERT_EQ(state.kind, Kind::dict);
  ASSERT_EQ(state.entries.size(), 1u);
  EXPECT_EQ(doc.at(state.entries[0].second).kind, Kind::dict);
}

TEST(PickleReader, AGlobalOutsideTheVocabularyIsRefusedByName) {
  const auto error = [](const Bytes& data, const PickleVocabulary& v) -> std::string {
    try {
      parse_pickle(data, v);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  const PickleVocabulary v = calls_of({"collections.OrderedDict"});
  const std::string why = error(RAW("\x80\x02" "cposix\nsystem\n)R."), v);
  EXPECT_NE(why.find("GLOBAL ('c') 'posix.system' is refused"), std::string::npos) << why;
  EXPECT_NE(why.find("a test file names only collections.OrderedDict"), std::string::npos)
      << why;
  const std::string stacked = error(RAW("\x80\x04\x8c\x05posix\x8c\x06system\x93)R."), v);
  EXPECT_NE(stacked.find("STACK_GLOBAL (0x93) 'posix.system' is refused"), std::string::npos)
      << stacked;
  // REDUCE calls only a named global, with a tuple; BUILD applies only to a call's result.
  EXPECT_NE(error(RAW("\x80\x02])R."), v).find("only a named global"), std::string::npos);
  EXPECT_NE(error(RAW("\x80\x02" "ccollections\nOrderedDict\n]R."), v).find("tuple"),
            std::string::npos);
  EXPECT_NE(error(RAW("\x80\x02]}b."), v).find("BUILD on a list"), std::string::npos);
  EXPECT_NE(error(RAW("\x80\x02](K\x01u."), v).find("not key-value pairs"), std::string::npos);
  EXPECT_NE(error(RAW("\x80\x02]K\x01K\x02s."), v).find("not a dict"), std::string::npos);
  EXPECT_NE(error(RAW("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00."), v)
                .find("64 bits"),
            std::string::npos);
  // Without persistent ids in the vocabulary, BINPERSID stays refused.
  PickleVocabulary no_ids = v;
  no_ids.persistent_ids = false;
  EXPECT_NE(error(RAW("\x80\x02K\x01Q."), no_ids).find("BINPERSID"), std::string::npos);
  // And the objects of this vocabulary are no verification file's: the default refuses them.
  EXPECT_NE(error_of(RAW("\x80\x02}.")).find("EMPTY_DICT"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02N.")).find("NONE"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02" "ccollections\nOrderedDict\n.")).find("OrderedDict"),
            std::string::npos);
}

TEST(PickleReader, RefusesWhatIsNotAProtocol2Pickle) {
  EXPECT_NE(error_of({}).find("empty"), std::string::npos);
  EXPECT_NE(error_of(RAW("(lp0\n.")).find("protocol 2 or later"), std::string::npos);
  EXPECT_NE(error_of({0xff, 0xd8, 0xff}).find("protocol 2 or later"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x01]."))
                .find("pickle protocol 1"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x06]."))
                .find("pickle protocol 6"), std::string::npos);
}

TEST(PickleReader, RefusesBrokenStructure) {
  EXPECT_NE(error_of(RAW("\x80\x02]")).find("without STOP"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02].x")).find("follow STOP"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02]].")).find("2 objects"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02(].")).find("MARK still open"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02]e.")).find("without a MARK"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02)\x88" "a.")).find("not a list"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02]\x86.")).find("needs 2 objects"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02](\x85.")).find("above the MARK"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02h\x07.")).find("memo key 7"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02T\xff\xff\xff\xff."))
                .find("negative length"), std::string::npos);
  EXPECT_NE(error_of(RAW("\x80\x02U\x10" "abc.")).find("truncated"),
            std::string::npos);
  const Bytes huge = RAW("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f.");
  EXPECT_NE(error_of(huge).find("truncated"), std::string::npos);
}

TEST(PickleReader, ChecksFrames) {
  // FRAME of 2 bytes holding EMPTY_LIST STOP: fine.
  EXPECT_NO_THROW(parse_pickle(RAW("\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00"
                                                    "\x00].")));
  // A frame longer than the file.
  EXPECT_NE(error_of(RAW("\x80\x04\x95\x09\x00\x00\x00\x00\x00\x00\x00]."))
                .find("runs past the end of the file"),
            std::string::npos);
  // A byte string that runs past its frame's end.
  EXPECT_NE(error_of(RAW("\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00"
                                          "C\x02" "ab."))
                .find("end of its frame"),
            std::string::npos);
  // A new frame before the current one ends.
  EXPECT_NE(error_of(RAW("\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00"
                                          "\x95\x01\x00\x00\x00\x00\x00\x00\x00]."))
                .find("new frame"),
            std::string::npos);
}

// A small valid verification-file pickle of real JPEGs for the fuzz-like tests.
Bytes small_bin() {
  const test::FacePairs pairs = test::face_pairs(2, 16);
  return test::python2_pickle(pairs.images, pairs.issame);
}

TEST(PickleReader, EveryTruncationIsAMessage) {
  const Bytes whole = small_bin();
  ASSERT_NO_THROW(parse_pickle(whole));
  for (std::size_t n = 0; n < whole.size(); ++n) {
    const Bytes part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string why = error_of(part);
    EXPECT_NE(why.find("pickle byte"), std::string::npos) << "prefix of " << n << " bytes";
  }
}

TEST(PickleReader, BitFlipsParseOrGiveAMessage) {
  const Bytes whole = small_bin();
  std::size_t refused = 0, parsed = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes flipped = whole;
      flipped[i] = static_cast<std::uint8_t>(flipped[i] ^ (1u << bit));
      try {
        const PickleDocument doc = parse_pickle(flipped);
        // Whatever parsed stays inside the file and refers only to objects it built.
        for (const PickleObject& o : doc.objects) {
          EXPECT_LE(o.offset + o.size, o.built ? doc.built.size() : flipped.size());
          for (const std::size_t item : o.items) EXPECT_LT(item, doc.objects.size());
        }
        ++parsed;
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("pickle byte"), std::string::npos) << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(parsed, 0u) << "flips inside the JPEG bytes leave a valid pickle";
}

}  // namespace
}  // namespace pfc
