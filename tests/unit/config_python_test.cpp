// arcface_torch's config files: the statement reader (every form its configs use, and the
// code it must refuse) and the import over base.py with its translations into pfc's keys.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/arcface_config.h"
#include "config/load_config.h"
#include "config/network_layers.h"
#include "config/python_assignments.h"
#include "core/error.h"
#include "support/test_paths.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

std::vector<PythonAssignment> read(std::string_view text) {
  return read_python_assignments(text, "x.py");
}

// The value of the last assignment of `key`.
PyValue value_of(const std::vector<PythonAssignment>& all, std::string_view key) {
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->key == key) return it->value;
  ADD_FAILURE() << key << " not assigned";
  return {};
}

constexpr std::string_view kHeader = "from easydict import EasyDict as edict\nconfig = edict()\n";

std::string with_header(std::string_view body) { return std::string(kHeader) + std::string(body); }

TEST(PythonAssignments, ReadsTheFormsArcfaceTorchConfigsUse) {
  const auto a = read(with_header(R"(
# Margin Base Softmax
config.margin_list = (1.0, 0.5, 0.0)
config.network = "r50"
config.resume = False
config.output = None
config.sample_rate = 1
config.lr = 0.1  # batch size is 512
config.weight_decay = 5e-4
config.rec = '/train_tmp/ms1m-retinaface-t1'
config.num_classes = 93431
config.num_image = 5179510
config.num_epoch = 20
config.warmup_epoch = config.num_epoch // 10
config.decay_epoch = [8, 12, 15, 18]
config.val_targets = ['lfw', 'cfp_fp', "agedb_30"]
config.num_image_big = 300 * 10000
config.empty = []
config.fp16 = True
)"));
  EXPECT_EQ(python_repr(value_of(a, "margin_list")), "(1.0, 0.5, 0.0)");
  EXPECT_EQ(value_of(a, "network").string, "r50");
  EXPECT_EQ(value_of(a, "resume").kind, PyValue::Kind::boolean);
  EXPECT_FALSE(value_of(a, "resume").boolean);
  EXPECT_EQ(value_of(a, "output").kind, PyValue::Kind::none);
  EXPECT_EQ(value_of(a, "sample_rate").integer, 1);
  EXPECT_DOUBLE_EQ(value_of(a, "weight_decay").floating, 5e-4);
  EXPECT_EQ(value_of(a, "rec").string, "/train_tmp/ms1m-retinaface-t1");
  EXPECT_EQ(value_of(a, "warmup_epoch").integer, 2);
  EXPECT_EQ(python_repr(value_of(a, "decay_epoch")), "[8, 12, 15, 18]");
  EXPECT_EQ(python_repr(value_of(a, "val_targets")), "['lfw', 'cfp_fp', 'agedb_30']");
  EXPECT_EQ(value_of(a, "num_image_big").integer, 3000000);
  EXPECT_TRUE(value_of(a, "empty").items.empty());
  EXPECT_TRUE(value_of(a, "fp16").boolean);
  EXPECT_EQ(a.front().key, "margin_list");
  EXPECT_EQ(a.front().line, 5);
}

TEST(PythonAssignments, ArithmeticFollowsPython) {
  const auto a = read(with_header(R"(
config.floor = -7 // 2
config.mod = -7 % 3
config.true_div = 7 / 2
config.power = 2 ** 10
config.right_assoc = 2 ** 3 ** 2
config.neg_power = -2 ** 2
config.mixed = 1 + 2 * 3 - (4 - 1)
config.float_floor = 7.5 // 2
config.sci = 1e-4 * 2
config.sep = 1_000_000
config.hex = 0x10
config.concat = "ab" "cd" + 'ef'
config.tuple_one = (3,)
config.bare_tuple = 1, 2
config.paren = (5)
config.continued = 1 + \
    2
config.multi_line = [
    1,  # one
    2,
]
config.ref = config.mod + config.power
config.repeat = [0] * 3
config.twice = 1
config.twice = 2
)"));
  EXPECT_EQ(value_of(a, "floor").integer, -4);
  EXPECT_EQ(value_of(a, "mod").integer, 2);
  EXPECT_DOUBLE_EQ(value_of(a, "true_div").floating, 3.5);
  EXPECT_EQ(value_of(a, "power").integer, 1024);
  EXPECT_EQ(value_of(a, "right_assoc").integer, 512);
  EXPECT_EQ(value_of(a, "neg_power").integer, -4);
  EXPECT_EQ(value_of(a, "mixed").integer, 4);
  EXPECT_DOUBLE_EQ(value_of(a, "float_floor").floating, 3.0);
  EXPECT_DOUBLE_EQ(value_of(a, "sci").floating, 2e-4);
  EXPECT_EQ(value_of(a, "sep").integer, 1000000);
  EXPECT_EQ(value_of(a, "hex").integer, 16);
  EXPECT_EQ(value_of(a, "concat").string, "abcdef");
  EXPECT_EQ(python_repr(value_of(a, "tuple_one")), "(3,)");
  EXPECT_EQ(python_repr(value_of(a, "bare_tuple")), "(1, 2)");
  EXPECT_EQ(value_of(a, "paren").integer, 5);
  EXPECT_EQ(value_of(a, "continued").integer, 3);
  EXPECT_EQ(python_repr(value_of(a, "multi_line")), "[1, 2]");
  EXPECT_EQ(value_of(a, "ref").integer, 1026);
  EXPECT_EQ(python_repr(value_of(a, "repeat")), "[0, 0, 0]");
  EXPECT_EQ(value_of(a, "twice").integer, 2);
}

TEST(PythonAssignments, AcceptsDocstringsOtherAliasesAndSemicolons) {
  const auto a = read(R"("""A config."""
from easydict import EasyDict
cfg = EasyDict()
cfg.a = 1; cfg.b = 'two'
)");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].value.string, "two");
}

// A file is read as Python decodes a source file: a UTF-8 byte-order mark at its start is not
// part of the text, and CR LF or a lone CR ends a line as LF does (files saved on Windows or
// old Macs); string escapes mean what they mean in Python 3.
TEST(PythonAssignments, ReadsTheBytesAsPythonDecodesThem) {
  const std::string body = "config.lr = 0.1\nconfig.name = 'r50'\n";
  const std::string unix_text = with_header(body);
  std::string crlf, cr;
  for (char c : unix_text) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  for (const std::string& text : {"\xEF\xBB\xBF" + unix_text, crlf, cr, "\xEF\xBB\xBF" + cr}) {
    SCOPED_TRACE(::testing::PrintToString(text));
    const auto a = read(text);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_DOUBLE_EQ(value_of(a, "lr").floating, 0.1);
    EXPECT_EQ(value_of(a, "name").string, "r50");
    EXPECT_EQ(a[1].line, 4);
  }
  // A comment on a CR-only line ends at its CR, not at the end of the file.
  const auto commented = read(with_header("# a comment\rconfig.a = 1\rconfig.b = 2\r"));
  EXPECT_EQ(value_of(commented, "b").integer, 2);

  const auto e = read(with_header(R"(config.hex = "\x41\x62"
config.octal = '\101\0\7'
config.bell = "\a\b\f\v\t\n\r"
config.u16 = "\u00e9\u4e2d"
config.u32 = "\U0001F600"
config.quotes = '\'\"\\'
config.unknown = "\d\q"
config.raw = r"\x41\n"
config.joined = "a\
b"
)"));
  EXPECT_EQ(value_of(e, "hex").string, "Ab");
  EXPECT_EQ(value_of(e, "octal").string, std::string("A\0\x07", 3));
  EXPECT_EQ(value_of(e, "bell").string, "\a\b\f\v\t\n\r");
  EXPECT_EQ(value_of(e, "u16").string, "\xC3\xA9\xE4\xB8\xAD");
  EXPECT_EQ(value_of(e, "u32").string, "\xF0\x9F\x98\x80");
  EXPECT_EQ(value_of(e, "quotes").string, "'\"\\");
  EXPECT_EQ(value_of(e, "unknown").string, "\\d\\q");
  EXPECT_EQ(value_of(e, "raw").string, "\\x41\\n");
  EXPECT_EQ(value_of(e, "joined").string, "ab");

  const std::pair<std::string, std::string> bad[] = {
      {"config.a = '\\x4'\n", "x.py:3: truncated \\xXX escape"},
      {"config.a = '\\u12'\n", "x.py:3: truncated \\uXXXX escape"},
      {"config.a = '\\U00110000'\n", "x.py:3: \\U00110000 is beyond Unicode"},
      {"config.a = '\\ud800'\n", "x.py:3: \\ud800 is a lone surrogate"},
      {"config.a = '\\N{DIGIT ONE}'\n", "x.py:3: \\N{...} names a character"},
  };
  for (const auto& [body_text, expected] : bad) {
    SCOPED_TRACE(body_text);
    const std::string message = test::usage_error([&] { read(with_header(body_text)); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

// What no config needs and a hostile one uses to crash, hang or exhaust the reader: values
// nested thousands deep, powers with enormous exponents, values multiplied beyond any size.
// Each is answered at once: a value, or a refusal naming the line.
TEST(PythonAssignments, NestingPowersAndSizesAreBounded) {
  const int deep = 10000;
  const std::string nested[] = {
      "config.a = " + std::string(deep, '(') + "1" + std::string(deep, ')') + "\n",
      "config.a = " + std::string(deep, '[') + "1" + std::string(deep, ']') + "\n",
      "config.a = " + std::string(deep, '-') + "1\n",
      "config.a = 2" + [&] {
        std::string s;
        for (int i = 0; i < deep; ++i) s += " ** 1";
        return s;
      }() + "\n",
  };
  for (const std::string& body : nested) {
    const std::string message = test::usage_error([&] { read(with_header(body)); });
    EXPECT_NE(message.find("x.py:3: the value nests more than 100 levels deep"),
              std::string::npos)
        << message;
  }
  // A value built up by statements that each wrap the one before.
  std::string wrapping = "config.a0 = 1\n";
  for (int i = 1; i <= 200; ++i) wrapping += fmt::format("config.a{} = [config.a{}]\n", i, i - 1);
  const std::string wrapped = test::usage_error([&] { read(with_header(wrapping)); });
  EXPECT_NE(wrapped.find("x.py:104: the value nests more than 100 levels deep"),
            std::string::npos)
      << wrapped;
  // 100 levels are still a value.
  const auto hundred = read(with_header("config.a = " + std::string(99, '[') + "1" +
                                        std::string(99, ']') + "\n"));
  EXPECT_EQ(value_of(hundred, "a").kind, PyValue::Kind::list);

  const auto powers = read(with_header(R"(config.one = 1 ** 9223372036854775807
config.zero = 0 ** 9223372036854775807
config.minus = (-1) ** 9223372036854775807
config.plus = (-1) ** 9223372036854775806
config.big = 3 ** 39
config.half = 2 ** -1
)"));
  EXPECT_EQ(value_of(powers, "one").integer, 1);
  EXPECT_EQ(value_of(powers, "zero").integer, 0);
  EXPECT_EQ(value_of(powers, "minus").integer, -1);
  EXPECT_EQ(value_of(powers, "plus").integer, 1);
  EXPECT_EQ(value_of(powers, "big").integer, 4052555153018976267);
  EXPECT_DOUBLE_EQ(value_of(powers, "half").floating, 0.5);
  const std::pair<std::string, std::string> refused[] = {
      {"config.a = 2 ** 9223372036854775807\n", "x.py:3: integer '**' overflows 64 bits"},
      {"config.a = 3 ** 40\n", "x.py:3: integer '**' overflows 64 bits"},
      {"config.a = 0 ** -1\n", "x.py:3: 0 cannot be raised to a negative power"},
      {"config.a = 10.0 ** 400\n", "x.py:3: '**' overflows a float"},
      {"config.a = (-8.0) ** 0.5\n", "x.py:3: a negative number to a fractional power"},
      {"config.a = [\"lfw\"] * 4096 * 4096 * 4096\n",
       "x.py:3: the value would hold 67108865 items and characters; a config value holds "
       "at most 65536"},
      {"config.a = 'x' * 100000\n", "a config value holds at most 65536"},
      {"config.a = [0] * 40000 + [0] * 40000\n", "a config value holds at most 65536"},
  };
  for (const auto& [body, expected] : refused) {
    SCOPED_TRACE(body);
    const std::string message = test::usage_error([&] { read(with_header(body)); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  // Many statements of the largest value: the file as a whole is bounded too.
  std::string many;
  for (int i = 0; i < 40; ++i) many += fmt::format("config.a{} = [0] * 60000\n", i);
  const std::string total = test::usage_error([&] { read(with_header(many)); });
  EXPECT_NE(total.find("the values of this file hold more than 1048576 items and characters"),
            std::string::npos)
      << total;
}

// Each hostile or unsupported file is refused naming its line and the reason.
TEST(PythonAssignments, RefusesCodeWithTheLineAndTheReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"import os\n", "x.py:1: 'import os' loads code"},
      {"from os import path\n", "x.py:1: 'from os import ...' loads code"},
      {"config.a = 1\n", "x.py:1: 'config' is not the config object"},
      {with_header("config.a = __import__('os').system('true')\n"),
       "x.py:3: '__import__(...' refers to code"},
      {with_header("config.a = open('/etc/passwd')\n"), "x.py:3: 'open(...' refers to code"},
      {with_header("config.a = os.path.join('a', 'b')\n"), "x.py:3: 'os...."},
      {with_header("x = 3\n"), "x.py:3: 'x = ...' sets a variable"},
      {with_header("config.a = x\n"), "x.py:3: name 'x' is not a value"},
      {with_header("if True:\n    config.a = 1\n"), "x.py:3: 'if' is a Python statement"},
      {with_header("for i in range(3): pass\n"), "x.py:3: 'for' is a Python statement"},
      {with_header("config.a = 1 if True else 2\n"), "x.py:3: 'if' makes a condition"},
      {with_header("config.a = [i for i in (1, 2)]\n"), "x.py:3: name 'i' is not a value"},
      {with_header("config.a = {'k': 1}\n"), "x.py:3: dictionaries and sets"},
      {with_header("config.a = f'{1}'\n"), "x.py:3: an f-string evaluates code"},
      {with_header("config.a = lambda: 1\n"), "x.py:3: name 'lambda' is not a value"},
      {with_header("config.update(a=1)\n"), "x.py:3: config.update(...) is a call"},
      {with_header("config.a += 1\n"), "x.py:3: '+=' changes a key in place"},
      {with_header("config.a = config.b\n"), "x.py:3: config.b is used before this file sets it"},
      {with_header("config.a = 1 / 0\n"), "x.py:3: float division by zero"},
      {with_header("config.a = 1 // 0\n"), "x.py:3: integer division or modulo by zero"},
      {with_header("config.a = 2 ** 64\n"), "x.py:3: integer '**' overflows 64 bits"},
      {with_header("config.a = 99999999999999999999\n"), "x.py:3: number '99999999999999999999' "
                                                         "is out of range"},
      {with_header("config.a = 'never closed\n"), "x.py:3: a string that starts here is never "
                                                   "closed on its line"},
      {with_header("config.a = [1, 2\n"), "x.py:4: a bracket opened in this file is never closed"},
      {with_header("config.a = 'a' - 'b'\n"), "x.py:3: '-' between a string and a string"},
      {with_header("config.a = 1 == 1\n"), "x.py:3: operator '==' is not config arithmetic"},
      {with_header("config = edict()\n"), "x.py:3: a second config object"},
      {with_header("config.a = 1 config.b = 2\n"), "x.py:3: unexpected 'config' after the"},
      {with_header("config.a =\n"), "x.py:3: a value is missing"},
      {with_header("config.a = 3j\n"), "x.py:3: '3j' is not a number this reader takes"},
      {with_header("config.a = b'x'\n"), "x.py:3: a bytes literal"},
      {with_header("config.a = 1\n  config.b = 2\n"), "x.py:4: an indented line"},
      {with_header("config.a = 1 $ 2\n"), "x.py:3: character '$'"},
      {with_header("config.a = 010\n"), "x.py:3: '010': Python 3 has no leading-zero"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    const std::string message = test::usage_error([&] { read(text); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

// Every prefix of a valid file, and the file with any one byte replaced, either reads or is
// refused with a UsageError naming the file: never a crash or another exception.
TEST(PythonAssignments, TruncatedOrDamagedFilesAreRefusedCleanly) {
  const std::string text = with_header(R"(config.margin_list = (1.0, 0.0, 0.4)
config.rec = "/train_tmp/WebFace42M"  # data
config.warmup_epoch = config.num_epoch // 10 if False else [1, 2.5e-3, 'x']
)");
  auto try_read = [](const std::string& t) {
    try {
      read(t);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x.py:", 0), 0u) << e.what();
    }
  };
  for (std::size_t n = 0; n <= text.size(); ++n) try_read(text.substr(0, n));
  for (std::size_t i = 0; i < text.size(); ++i)
    for (char c : {'\0', '(', '"', '\\', '\n', 'x', '#', '\xff'}) {
      std::string damaged = text;
      damaged[i] = c;
      try_read(damaged);
    }
}

// A folder of arcface_torch-style configs written by the test.
class ArcfaceConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(test::scratch_dir("arcface_config")) / "configs";
    fs::create_directories(dir_);
    write("base.py", R"(from easydict import EasyDict as edict

config = edict()
config.margin_list = (1.0, 0.5, 0.0)
config.network = "r50"
config.resume = False
config.save_all_states = False
config.output = "ms1mv3_arcface_r50"
config.embedding_size = 512
# Partial FC
config.sample_rate = 1
config.interclass_filtering_threshold = 0
config.fp16 = False
config.batch_size = 128
# For SGD
config.optimizer = "sgd"
config.lr = 0.1
config.momentum = 0.9
config.weight_decay = 5e-4
# For AdamW
# config.optimizer = "adamw"
# config.lr = 0.001
# config.weight_decay = 0.1
config.frequent = 10
config.dali = False
# Gradient ACC
config.gradient_acc = 1
config.seed = 2048
config.num_workers = 2
config.wandb_key = "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
config.suffix_run_name = None
config.using_wandb = False
)");
  }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  fs::path dir_;
};

TEST_F(ArcfaceConfig, TheFileOverridesBasePyAndOutputNoneIsWorkDirs) {
  const fs::path file = write("ms1mv3_r18.py", with_header(R"(
config.network = "r18"
config.output = None
config.fp16 = True
config.rec = "/train_tmp/ms1m-retinaface-t1"
config.num_classes = 93431
config.num_image = 5179510
config.num_epoch = 20
config.warmup_epoch = config.num_epoch // 10
)"));
  const Config cfg = load_config(file.string(), {});
  EXPECT_EQ(cfg.network, "r18");
  EXPECT_TRUE(cfg.fp16);
  EXPECT_EQ(cfg.output, "work_dirs/ms1mv3_r18");
  EXPECT_EQ(cfg.num_classes, 93431);
  EXPECT_DOUBLE_EQ(cfg.warmup_epoch, 2.0);
  EXPECT_EQ(cfg.batch_size, 128);  // from base.py
  EXPECT_EQ(cfg.data_workers, 2);  // num_workers
  EXPECT_EQ(cfg.lr_schedule, "polynomial_warmup");  // train_v2.py's PolynomialLRWarmup
  EXPECT_DOUBLE_EQ(cfg.lr_power, 1.0);               // its default power: a linear decay
  EXPECT_EQ(cfg.lr_scaling, "none");  // train_v2.py's lr is the rate applied
  EXPECT_EQ(cfg.device, "cuda");
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.5, 0.0}));
  // base.py's optimiser keys are pfc's own (its integer threshold 0 reads as a number).
  EXPECT_EQ(cfg.optimizer, "sgd");
  EXPECT_EQ(cfg.gradient_acc, 1);
  EXPECT_EQ(cfg.interclass_filtering_threshold, 0.0);
  ASSERT_EQ(cfg.notes.size(), 1u);
  for (const char* key : {"dali (", "save_all_states (", "wandb_key (", "suffix_run_name (",
                          "using_wandb ("})
    EXPECT_NE(cfg.notes[0].find(key), std::string::npos) << cfg.notes[0];
  for (const char* key : {"optimizer", "gradient_acc", "interclass_filtering_threshold"})
    EXPECT_EQ(cfg.notes[0].find(key), std::string::npos) << cfg.notes[0];

  // The source text is TOML that reads back to the same config (checkpoints keep it).
  const Config again = parse_config(cfg.source_text, "source_text", {});
  EXPECT_EQ(again.network, "r18");
  EXPECT_EQ(again.output, "work_dirs/ms1mv3_r18");
  EXPECT_EQ(again.data_workers, 2);
  EXPECT_EQ(again.lr_schedule, "polynomial_warmup");
  EXPECT_DOUBLE_EQ(again.lr_power, 1.0);
  EXPECT_NE(cfg.source_text.find("ms1mv3_r18.py:4"), std::string::npos) << cfg.source_text;
}

// The optimiser keys of train_v2.py's configs (wf42m_pfc03_40epoch_8gpu_vit_t.py's AdamW and
// gradient accumulation, wf12m_*_filter04's filtering) are pfc's own, and override base.py's.
TEST_F(ArcfaceConfig, OptimiserKeysAreRead) {
  const fs::path file = write("wf12m_adamw_acc.py", with_header(R"(
config.optimizer = "adamw"
config.lr = 0.001
config.weight_decay = 0.1
config.gradient_acc = 12 # total batchsize is 256 * 12
config.interclass_filtering_threshold = 0.4
config.num_classes = 617970
config.num_image = 12720066
config.num_epoch = 20
)"));
  const Config cfg = load_config(file.string(), {});
  EXPECT_EQ(cfg.optimizer, "adamw");
  EXPECT_DOUBLE_EQ(cfg.lr, 0.001);
  EXPECT_DOUBLE_EQ(cfg.weight_decay, 0.1);
  EXPECT_EQ(cfg.gradient_acc, 12);
  EXPECT_DOUBLE_EQ(cfg.interclass_filtering_threshold, 0.4);
  EXPECT_EQ(cfg.lr_scaling, "none");
  // Bad values are refused naming the key and the file's line.
  for (const auto& [line, key] : {std::pair{"config.optimizer = \"lamb\"\n", "optimizer"},
                                  std::pair{"config.gradient_acc = 0\n", "gradient_acc"},
                                  std::pair{"config.interclass_filtering_threshold = 1\n",
                                            "interclass_filtering_threshold"}}) {
    const fs::path bad = write("bad.py", with_header(line));
    const std::string message = test::usage_error([&] { load_config(bad.string(), {}); });
    EXPECT_NE(message.find(fmt::format("key '{}' in {}:3", key, bad.string())),
              std::string::npos)
        << message;
  }
}

// arcface_torch's ViT configs (wf42m_pfc03_40epoch_8gpu_vit_t.py, wf42m_pfc02_vit_h.py) load:
// their networks are in the table, their AdamW keys pfc's own, dali_aug dropped with a note.
TEST_F(ArcfaceConfig, VisionTransformerConfigsLoad) {
  const fs::path vit_t = write("wf42m_pfc03_40epoch_8gpu_vit_t.py", with_header(R"(
config.margin_list = (1.0, 0.0, 0.4)
config.network = "vit_t_dp005_mask0"
config.resume = False
config.output = None
config.embedding_size = 512
config.sample_rate = 0.3
config.fp16 = True
config.weight_decay = 0.1
config.batch_size = 512
config.optimizer = "adamw"
config.lr = 0.001
config.verbose = 2000
config.dali = False
config.rec = "/train_tmp/WebFace42M"
config.num_classes = 2059906
config.num_image = 42474557
config.num_epoch = 40
config.warmup_epoch = config.num_epoch // 10
config.val_targets = []
)"));
  const Config t = load_config(vit_t.string(), {});
  EXPECT_EQ(t.network, "vit_t_dp005_mask0");
  EXPECT_EQ(vit_shape(t).embed_dim, 256);
  EXPECT_EQ(t.optimizer, "adamw");
  EXPECT_DOUBLE_EQ(t.warmup_epoch, 4);
  const fs::path vit_h = write("wf42m_pfc02_vit_h.py", with_header(R"(
config.network = "vit_h"
config.sample_rate = 0.5
config.batch_size = 768
config.optimizer = "adamw"
config.lr = 0.001
config.weight_decay = 0.1
config.dali = True
config.num_classes = 2059906
config.num_image = 42474557
config.num_epoch = 16
config.warmup_epoch = config.num_epoch // 8
config.val_targets = []
config.dali_aug = True
)"));
  const Config h = load_config(vit_h.string(), {});
  EXPECT_EQ(vit_shape(h).depth, 48);
  EXPECT_TRUE(vit_shape(h).using_checkpoint);
}

TEST_F(ArcfaceConfig, OldStyleKeysAreTranslated) {
  const fs::path file = write("glint360k_mbf_like.py", with_header(R"(
config.loss = "cosface"
config.network = "r100"
config.warmup_epoch = -1
config.decay_epoch = [8, 12, 15, 18]
config.num_classes = 360232
)"));
  const Config cfg = load_config(file.string(), {"batch_size=64", "device=cpu"});
  EXPECT_EQ(cfg.device, "cpu");
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.0, 0.4}));
  EXPECT_DOUBLE_EQ(cfg.warmup_epoch, 0.0);
  EXPECT_EQ(cfg.lr_schedule, "step");
  EXPECT_EQ(cfg.decay_epoch, (std::vector<double>{8, 12, 15, 18}));
  EXPECT_EQ(cfg.batch_size, 64);
}

// The MobileFaceNet configs in both of arcface_torch's forms: margin_list (ms1mv3_mbf.py) and
// the older loss/decay_epoch one (glint360k_mbf.py).
TEST_F(ArcfaceConfig, MobileFaceNetConfigsLoad) {
  const fs::path ms1mv3 = write("ms1mv3_mbf_like.py", with_header(R"(
config.margin_list = (1.0, 0.5, 0.0)
config.network = "mbf"
config.resume = False
config.output = None
config.embedding_size = 512
config.sample_rate = 1.0
config.fp16 = True
config.momentum = 0.9
config.weight_decay = 1e-4
config.batch_size = 128
config.lr = 0.1
config.verbose = 2000
config.dali = False
config.rec = "/train_tmp/ms1m-retinaface-t1"
config.num_classes = 93431
config.num_image = 5179510
config.num_epoch = 40
config.warmup_epoch = 0
config.val_targets = ['lfw', 'cfp_fp', "agedb_30"]
)"));
  const Config cfg = load_config(ms1mv3.string(), {"device=cpu"});
  EXPECT_EQ(cfg.network, "mbf");
  EXPECT_EQ(cfg.image_size, 112);
  EXPECT_EQ(cfg.embedding_size, 512);
  EXPECT_EQ(cfg.val_targets, (std::vector<std::string>{"lfw", "cfp_fp", "agedb_30"}));

  const fs::path glint = write("glint360k_mbf_like.py", with_header(R"(
config.loss = "arcface"
config.network = "mbf"
config.resume = False
config.output = None
config.embedding_size = 512
config.sample_rate = 1.0
config.fp16 = True
config.momentum = 0.9
config.weight_decay = 5e-4
config.batch_size = 128
config.lr = 0.1  # batch size is 512

config.rec = "/train_tmp/glint360k"
config.num_classes = 360232
config.num_image = 17091657
config.num_epoch = 20
config.warmup_epoch = -1
config.decay_epoch = [8, 12, 15, 18]
config.val_targets = ["lfw", "cfp_fp", "agedb_30"]
)"));
  const Config old_style = load_config(glint.string(), {"device=cpu"});
  EXPECT_EQ(old_style.network, "mbf");
  EXPECT_EQ(old_style.margin_list, (std::array<double, 3>{1.0, 0.5, 0.0}));
  EXPECT_EQ(old_style.lr_schedule, "step");
}

// arcface_torch's wf42m_pfc0008_32gpu_r100.py as it is: sample_rate 0 (PartialFC_V2's
// positives only), CosFace, 32 GPUs of batch 512.
TEST_F(ArcfaceConfig, PositivesOnlyConfigLoads) {
  const fs::path file = write("wf42m_pfc0008_32gpu_r100.py", R"(from easydict import EasyDict as edict

# make training faster
# our RAM is 256G
# mount -t tmpfs -o size=140G  tmpfs /train_tmp

config = edict()
config.margin_list = (1.0, 0.0, 0.4)
config.network = "r100"
config.resume = False
config.output = None
config.embedding_size = 512
config.sample_rate = 0
config.fp16 = True
config.momentum = 0.9
config.weight_decay = 5e-4
config.batch_size = 512
config.lr = 0.4
config.verbose = 2000
config.dali = False

config.rec = "/train_tmp/WebFace42M"
config.num_classes = 2059906
config.num_image = 42474557
config.num_epoch = 20
config.warmup_epoch = config.num_epoch // 10
config.val_targets = ["lfw", "cfp_fp", "agedb_30"]
)");
  const Config cfg = load_config(file.string(), {});
  EXPECT_EQ(cfg.sample_rate, 0.0);
  EXPECT_EQ(cfg.method, "pfc");
  EXPECT_EQ(cfg.network, "r100");
  EXPECT_EQ(cfg.margin_list, (std::array<double, 3>{1.0, 0.0, 0.4}));
  EXPECT_EQ(cfg.batch_size, 512);
  EXPECT_EQ(cfg.num_classes, 2059906);
  EXPECT_DOUBLE_EQ(cfg.warmup_epoch, 2.0);
  EXPECT_EQ(cfg.output, "work_dirs/wf42m_pfc0008_32gpu_r100");
  // train_v2.py's classifier.
  EXPECT_EQ(cfg.classifier_update, "dense");
  EXPECT_EQ(cfg.margin_gradient, "straight_through");
  EXPECT_EQ(cfg.classifier_precision, "fp32");
}

// An imported config takes today's classifier (PartialFC_V2, CombinedMarginLoss, fp32) unless
// the file or an override chooses otherwise.
TEST_F(ArcfaceConfig, TodaysClassifierUnlessChosen) {
  const fs::path plain = write("ms1mv3_r50_like.py", with_header("config.num_classes = 1000\n"));
  const Config v2 = load_config(plain.string(), {});
  EXPECT_EQ(v2.classifier_update, "dense");
  EXPECT_EQ(v2.margin_gradient, "straight_through");
  EXPECT_EQ(v2.classifier_precision, "fp32");
  const Config overridden =
      load_config(plain.string(), {"classifier_update=sampled", "margin_gradient=exact"});
  EXPECT_EQ(overridden.classifier_update, "sampled");
  EXPECT_EQ(overridden.margin_gradient, "exact");

  const fs::path chosen = write("seed_like.py", with_header(R"(
config.classifier_update = "sampled"
config.classifier_precision = "fp16"
config.num_classes = 1000
)"));
  const Config seed = load_config(chosen.string(), {});
  EXPECT_EQ(seed.classifier_update, "sampled");
  EXPECT_EQ(seed.margin_gradient, "straight_through");
  EXPECT_EQ(seed.classifier_precision, "fp16");
}

TEST_F(ArcfaceConfig, MobileFaceNetAtAnotherImageSizeIsRefused) {
  const fs::path file = write("mbf_96.py", with_header(R"(
config.network = "mbf"
config.num_classes = 1000
)"));
  const std::string why =
      test::usage_error([&] { load_config(file.string(), {"device=cpu", "image_size=96"}); });
  EXPECT_NE(why.find("needs image_size = 112"), std::string::npos) << why;
}

TEST_F(ArcfaceConfig, MistakesNameTheFileAndLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"config.network = \"vit_q\"\n", "network"},
      {"config.batch_szie = 4\n", "unknown key 'batch_szie' in " + (dir_ / "bad.py").string() +
                                      ":3; did you mean 'batch_size'?"},
      {"config.lr = 'fast'\n", "key 'lr' in " + (dir_ / "bad.py").string() + ":3 must be a number"},
      {"config.lr = \"0.1\"\n", "key 'lr' in " + (dir_ / "bad.py").string() +
                                   ":3 must be a number, got string \"0.1\""},
      {"config.batch_size = '128'\n", "key 'batch_size' in " + (dir_ / "bad.py").string() +
                                          ":3 must be an integer, got string \"128\""},
      {"config.num_classes = None\n", "key 'num_classes' in " + (dir_ / "bad.py").string() +
                                          ":3 is None"},
      {"config.loss = 'softmax'\n", "key 'loss' in " + (dir_ / "bad.py").string() + ":3 is 'softmax'"},
      {"config.sample_rate = 1.5\n", "sample_rate"},
  };
  for (const auto& [body, expected] : cases) {
    SCOPED_TRACE(body);
    const fs::path file = write("bad.py", with_header(body));
    const std::string message = test::usage_error([&] { load_config(file.string(), {}); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST_F(ArcfaceConfig, BasePyMustBeBesideTheFile) {
  const fs::path alone = fs::path(test::scratch_dir("arcface_config_alone")) / "x.py";
  std::ofstream(alone) << with_header("config.lr = 0.1\n");
  const std::string message = test::usage_error([&] { load_config(alone.string(), {}); });
  EXPECT_NE(message.find("base.py"), std::string::npos) << message;
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
}

TEST_F(ArcfaceConfig, BasePyAloneIsAConfigToo) {
  const Config cfg = load_config((dir_ / "base.py").string(), {});
  EXPECT_EQ(cfg.output, "ms1mv3_arcface_r50");
  EXPECT_FALSE(cfg.fp16);
}

}  // namespace
}  // namespace pfc
