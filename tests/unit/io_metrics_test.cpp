// MetricsWriter: the documented layout of metrics.h5 (units, Slurm attributes), the summary
// figures, rows that survive a killed run, resuming without duplicate steps (after a kill too),
// and reading the file with h5py, after the run and while it is written (SWMR).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "io/hdf5.h"
#include "io/metrics_writer.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

Config test_config() {
  Config cfg;
  cfg.method = "pfc";
  cfg.network = "r50";
  cfg.num_classes = 125000;
  cfg.sample_rate = 0.1;
  cfg.batch_size = 128;
  cfg.embedding_size = 512;
  cfg.fp16 = true;
  cfg.device = "cuda";
  return cfg;
}

RunInfo test_info(std::int64_t world_size) {
  RunInfo info;
  info.command_line = "pfc train --config input/base.toml";
  info.world_size = world_size;
  info.gpu_names = "NVIDIA H200,NVIDIA H200";
  info.hosts = "node1,node1";
  info.cuda_version = "13.0";
  info.slurm_job_id = "4242";
  info.slurm_job_nodelist = "node[1-2]";
  info.slurm_restart_count = "1";
  return info;
}

// Row i of a two-rank run: step 10 (i + 1), samples/s 100 (i + 1), rank step times
// 0.01 (i + 1) and 0.02 (i + 1), peak memory 1000 + i and 2000 + i.
StepMetrics row(int i, int ranks = 2) {
  StepMetrics m;
  m.step = 10 * (i + 1);
  m.wall_time_s = 1.5 * (i + 1);
  m.loss = 40.0 - i;
  m.lr = 0.2;
  m.loss_scale = 128;
  m.samples_per_s = 100.0 * (i + 1);
  m.skipped_records = i / 3;
  m.comm_time_s = 0.001 * (i + 1);
  for (int r = 0; r < ranks; ++r) {
    m.step_time_s.push_back(0.01 * (r + 1) * (i + 1));
    m.mem_in_use_bytes.push_back(500 * (r + 1) + i);
    m.mem_peak_bytes.push_back(1000 * (r + 1) + i);
  }
  return m;
}

std::vector<std::int64_t> ints(const h5::File& file, const std::string& path) {
  const Tensor t = h5::read_tensor(file.id(), path, DType::i64);
  return {t.data<std::int64_t>(), t.data<std::int64_t>() + t.numel()};
}

std::string summary_text(const h5::File& file, const char* name) {
  return h5::read_attribute_string(file.id(), "/summary", name);
}

double summary_number(const h5::File& file, const char* name) {
  return h5::read_attribute_double(file.id(), "/summary", name);
}

// Runs a Python script with /usr/bin/python3; its exit status, and what it printed.
int run_python(const fs::path& dir, const std::string& name, const std::string& code,
               std::string& printed) {
  const fs::path script = dir / (name + ".py");
  const fs::path output = dir / (name + ".txt");
  std::ofstream(script) << code;
  const int status = std::system(
      ("/usr/bin/python3 " + script.string() + " > " + output.string() + " 2>&1").c_str());
  std::stringstream text;
  text << std::ifstream(output).rdbuf();
  printed = text.str();
  return status;
}

bool have_h5py() { return std::system("/usr/bin/python3 -c 'import h5py' > /dev/null 2>&1") == 0; }

TEST(MetricsWriter, WritesTheDocumentedLayout) {
  const std::string path = test::scratch_dir("metrics_layout") + "/run/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
    for (int i = 0; i < 10; ++i) writer.append(row(i));
    MemoryPeaks first{}, second{};
    first[0] = 100;
    second[0] = 50;
    second[1] = 70;
    writer.record_memory({first, second});
    writer.record_memory({second, first});
    writer.record_device_overhead(700);
    writer.record_device_overhead(600);
    writer.finish({"ok", "", 0, 0});
  }
  const h5::File file(path, h5::Mode::read);
  const hid_t id = file.id();
  EXPECT_EQ(h5::read_attribute_string(id, "/", "pfc_version"), PFC_VERSION);
  EXPECT_EQ(h5::read_attribute_string(id, "/", "method"), "pfc");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "network"), "r50");
  EXPECT_EQ(h5::read_attribute_int(id, "/", "world_size"), 2);
  EXPECT_EQ(h5::read_attribute_int(id, "/", "emulated"), 0);
  EXPECT_EQ(h5::read_attribute_int(id, "/", "num_classes"), 125000);
  EXPECT_EQ(h5::read_attribute_double(id, "/", "sample_rate"), 0.1);
  EXPECT_EQ(h5::read_attribute_int(id, "/", "batch_size"), 128);
  EXPECT_EQ(h5::read_attribute_int(id, "/", "fp16"), 1);
  EXPECT_EQ(h5::read_attribute_string(id, "/", "gpu_names"), "NVIDIA H200,NVIDIA H200");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "command_line"), test_info(2).command_line);
  EXPECT_NE(h5::read_attribute_string(id, "/", "config").find("num_classes"), std::string::npos);
  EXPECT_NE(h5::read_attribute_string(id, "/", "mpi_version"), "");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "hdf5_version").substr(0, 2), "1.");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "cuda_version"), "13.0");
  EXPECT_TRUE(h5::has_attribute(id, "/", "git_revision"));
  EXPECT_TRUE(h5::has_attribute(id, "/", "nccl_version"));
  EXPECT_EQ(h5::read_attribute_string(id, "/", "start_time").back(), 'Z');
  EXPECT_FALSE(h5::has_attribute(id, "/", "resumed_from_steps"));
  EXPECT_EQ(h5::read_attribute_string(id, "/", "slurm_job_id"), "4242");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "slurm_job_nodelist"), "node[1-2]");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "slurm_restart_count"), "1");
  EXPECT_EQ(h5::read_attribute_string(id, "/", "slurm_job_partition"), "");
  for (const auto& [name, units] : std::vector<std::pair<std::string, std::string>>{
           {"step", "1"}, {"wall_time_s", "s"}, {"loss", "1"}, {"samples_per_s", "samples/s"},
           {"skipped_records", "records"}, {"step_time_s", "s"},
           {"mem_peak_bytes", "bytes"}}) {
    EXPECT_EQ(h5::read_attribute_string(id, "/steps/" + name, "units"), units) << name;
    EXPECT_NE(h5::read_attribute_string(id, "/steps/" + name, "description"), "") << name;
  }
  EXPECT_EQ(h5::read_attribute_string(id, "/memory/peak_bytes_by_purpose", "units"), "bytes");

  EXPECT_EQ(ints(file, "/steps/step"),
            (std::vector<std::int64_t>{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}));
  EXPECT_EQ(ints(file, "/steps/skipped_records")[9], 3);
  for (const char* name : {"wall_time_s", "loss", "lr", "loss_scale", "samples_per_s",
                           "comm_time_s"})
    EXPECT_EQ(h5::dataset_shape(id, std::string("/steps/") + name), (Shape{10})) << name;
  for (const char* name : {"step_time_s", "mem_in_use_bytes", "mem_peak_bytes"})
    EXPECT_EQ(h5::dataset_shape(id, std::string("/steps/") + name), (Shape{10, 2})) << name;
  EXPECT_EQ(ints(file, "/steps/mem_peak_bytes")[2 * 9 + 1], 2009);

  const Tensor memory = h5::read_tensor(id, "/memory/peak_bytes_by_purpose", DType::i64);
  ASSERT_EQ(memory.shape(), (Shape{2, static_cast<std::int64_t>(kMemoryPurposeCount)}));
  EXPECT_EQ(memory.data<std::int64_t>()[0], 100);  // the maximum of the two records
  EXPECT_EQ(memory.data<std::int64_t>()[1], 70);
  EXPECT_EQ(h5::read_attribute_string(id, "/memory/peak_bytes_by_purpose", "purposes"),
            "weights,optimizer,gradients,activations,workspace,comm,data");

  // Medians over rows 2..9 (the first 20 % left out).
  EXPECT_EQ(summary_text(file, "status"), "ok");
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "steps"), 100);
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "timed_rows"), 8);
  EXPECT_DOUBLE_EQ(summary_number(file, "samples_per_s"), 650.0);
  EXPECT_NEAR(summary_number(file, "step_time_s"), 0.13, 1e-12);  // the slower rank
  EXPECT_NEAR(summary_number(file, "comm_time_s"), 0.0065, 1e-12);
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "mem_peak_bytes"), 2009);
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "device_overhead_bytes"), 700);  // largest
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "mem_needed_bytes"), 0);
}

TEST(MetricsWriter, OutOfMemoryOutcome) {
  const std::string path = test::scratch_dir("metrics_oom") + "/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(1));
    writer.finish({"out_of_memory", "class centres do not fit", 40000000000, 30000000000});
  }
  const h5::File file(path, h5::Mode::read);
  EXPECT_EQ(summary_text(file, "status"), "out_of_memory");
  EXPECT_EQ(summary_text(file, "message"), "class centres do not fit");
  EXPECT_EQ(h5::read_attribute_int(file.id(), "/summary", "steps"), 0);
  EXPECT_EQ(h5::read_attribute_int(file.id(), "/summary", "timed_rows"), 0);
  EXPECT_TRUE(std::isnan(summary_number(file, "samples_per_s")));  // not measured, not 0
  // The memory table exists from the start (a live file gains no objects), all zeros.
  const Tensor memory = h5::read_tensor(file.id(), "/memory/peak_bytes_by_purpose", DType::i64);
  EXPECT_EQ(memory.shape(), (Shape{1, static_cast<std::int64_t>(kMemoryPurposeCount)}));
  EXPECT_EQ(memory.data<std::int64_t>()[0], 0);
  EXPECT_EQ(h5::read_attribute_int(file.id(), "/summary", "mem_needed_bytes"), 40000000000);
  EXPECT_EQ(h5::read_attribute_int(file.id(), "/summary", "mem_available_bytes"), 30000000000);
}

TEST(MetricsWriterDeathTest, AKilledRunKeepsItsRows) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = test::scratch_dir("metrics_killed") + "/metrics.h5";
  // The child dies without closing the file or running a destructor.
  EXPECT_EXIT(
      {
        MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
        for (int i = 0; i < 3; ++i) writer.append(row(i));
        _exit(7);
      },
      ::testing::ExitedWithCode(7), "");
  {
    // The dead writer's mark stays in the file: it reads as live (SWMR), as h5py swmr=True.
    const h5::File file(path, h5::Mode::live_read);
    EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{10, 20, 30}));
    EXPECT_EQ(summary_text(file, "status"), "running");
    EXPECT_EQ(h5::read_attribute_int(file.id(), "/summary", "steps"), 30);
  }
  // A requeued job continues the file the killed one left.
  {
    MetricsWriter writer = MetricsWriter::resume(path, test_config(), test_info(2), 20);
    writer.append(row(2));
    writer.finish({"ok", "", 0, 0});
  }
  const h5::File file(path, h5::Mode::read);
  EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{10, 20, 30}));
  EXPECT_EQ(summary_text(file, "status"), "ok");
}

TEST(MetricsWriter, ResumeDropsLaterRowsAndAppends) {
  const std::string path = test::scratch_dir("metrics_resume") + "/metrics.h5";
  std::string start_time;
  {
    MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
    for (int i = 0; i < 5; ++i) writer.append(row(i));  // steps 10..50
  }
  {
    const h5::File file(path, h5::Mode::read);
    start_time = h5::read_attribute_string(file.id(), "/", "start_time");
  }
  {
    // Resumed from the checkpoint of step 30, on three ranks.
    MetricsWriter writer = MetricsWriter::resume(path, test_config(), test_info(3), 30);
    writer.append(row(3, 3));
  }
  const h5::File file(path, h5::Mode::read);
  const hid_t id = file.id();
  EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(h5::dataset_shape(id, "/steps/samples_per_s"), (Shape{4}));
  EXPECT_EQ(h5::dataset_shape(id, "/steps/mem_peak_bytes"), (Shape{4, 3}));
  const auto peaks = ints(file, "/steps/mem_peak_bytes");
  EXPECT_EQ(peaks[2], -1);          // rank 2 did not exist before the resume
  EXPECT_EQ(peaks[3 * 3 + 2], 3003);
  EXPECT_EQ(h5::read_attribute_ints(id, "/", "resumed_from_steps"),
            (std::vector<std::int64_t>{30}));
  EXPECT_EQ(h5::read_attribute_int(id, "/", "world_size"), 3);
  EXPECT_EQ(h5::read_attribute_string(id, "/", "start_time"), start_time);
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "steps"), 40);
  EXPECT_EQ(h5::read_attribute_int(id, "/summary", "mem_peak_bytes"), 3003);
  EXPECT_EQ(summary_text(file, "status"), "running");
}

// A writer killed inside an append can leave its tables grown by rows it never wrote, which
// read the fill value (-1 for the step). A resume drops them with the rows after its step.
TEST(MetricsWriter, ResumeDropsRowsAKilledWriterGrewButNeverWrote) {
  const std::string path = test::scratch_dir("metrics_resume_unwritten") + "/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
    for (int i = 0; i < 3; ++i) writer.append(row(i));  // steps 10..30
  }
  {
    // Every /steps table three rows longer, nothing written into them.
    const h5::File file(path, h5::Mode::read_write);
    for (const std::string& name : h5::children(file.id(), "/steps")) {
      const std::string table = "/steps/" + name;
      Shape extent = h5::dataset_shape(file.id(), table);
      extent[0] += 3;
      std::vector<hsize_t> dims(extent.begin(), extent.end());
      const hid_t dataset = H5Dopen2(file.id(), table.c_str(), H5P_DEFAULT);
      ASSERT_GE(dataset, 0) << table;
      EXPECT_GE(H5Dset_extent(dataset, dims.data()), 0) << table;
      H5Dclose(dataset);
    }
    EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{10, 20, 30, -1, -1, -1}));
  }
  {
    MetricsWriter writer = MetricsWriter::resume(path, test_config(), test_info(2), 30);
    writer.append(row(3));
  }
  const h5::File file(path, h5::Mode::read);
  EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(h5::dataset_shape(file.id(), "/steps/mem_peak_bytes"), (Shape{4, 2}));
}

TEST(MetricsWriter, ResumeWithoutAFileStartsOne) {
  const std::string path = test::scratch_dir("metrics_resume_missing") + "/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::resume(path, test_config(), test_info(1), 100);
    writer.append(row(10, 1));
  }
  const h5::File file(path, h5::Mode::read);
  EXPECT_EQ(ints(file, "/steps/step"), (std::vector<std::int64_t>{110}));
}

// The five lines of metrics_writer.h's h5py example, then checks of what they read.
TEST(MetricsWriter, ReadableWithH5py) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 has no h5py";
  const fs::path dir = test::scratch_dir("metrics_h5py");
  const std::string path = (dir / "metrics.h5").string();
  {
    MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
    for (int i = 0; i < 10; ++i) writer.append(row(i));
    writer.record_memory({MemoryPeaks{}, MemoryPeaks{}});
    writer.finish({"ok", "", 0, 0});
  }
  std::string printed;
  ASSERT_EQ(run_python(dir, "read",
                       "import h5py\n"
                       "f = h5py.File(\"" + path + "\", \"r\", swmr=True)\n"
                       "print(f.attrs[\"method\"], f.attrs[\"num_classes\"], "
                       "f[\"summary\"].attrs[\"samples_per_s\"])\n"
                       "s = f[\"steps\"]\n"
                       "print(s[\"step\"][:], s[\"samples_per_s\"][:], "
                       "s[\"mem_peak_bytes\"][:].max(axis=1))\n"
                       "assert list(s['step'][:]) == list(range(10, 101, 10))\n"
                       "assert s['mem_peak_bytes'].shape == (10, 2)\n"
                       "assert f['summary'].attrs['status'] == 'ok'\n"
                       "assert f.attrs['world_size'] == 2\n"
                       "assert s['samples_per_s'].attrs['units'] == 'samples/s'\n"
                       "purposes = f['memory/peak_bytes_by_purpose'].attrs['purposes']\n"
                       "assert purposes.split(',')[0] == 'weights'\n"
                       // A finished run also reads without swmr=True.
                       "g = h5py.File(\"" + path + "\", \"r\")\n"
                       "assert g['steps/step'].shape == (10,)\n",
                       printed),
            0)
      << printed;
  EXPECT_NE(printed.find("pfc 125000 650.0"), std::string::npos) << printed;
}

// While the writer holds the file, h5py reads it with swmr=True (the README's snippet): the
// rows so far, the running status, and after refresh() the rows appended since. Without
// swmr=True HDF5 refuses, rather than read a file in the middle of a write.
TEST(MetricsWriter, ReadWhileTheRunWritesIt) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 has no h5py";
  const fs::path dir = test::scratch_dir("metrics_live");
  const std::string path = (dir / "metrics.h5").string();
  MetricsWriter writer = MetricsWriter::create(path, test_config(), test_info(2));
  for (int i = 0; i < 3; ++i) writer.append(row(i));
  writer.record_memory({MemoryPeaks{}, MemoryPeaks{}});
  std::string printed;
  ASSERT_EQ(run_python(dir, "live",
                       "import h5py, sys\n"
                       "try:\n"
                       "    h5py.File(\"" + path + "\", \"r\")\n"
                       "    sys.exit('opened without swmr=True while being written')\n"
                       "except OSError as e:\n"
                       "    print('without swmr:', e)\n"
                       "f = h5py.File(\"" + path + "\", \"r\", swmr=True)\n"
                       "s = f['steps/step']\n"
                       "assert list(s[:]) == [10, 20, 30], s[:]\n"
                       "assert f['summary'].attrs['status'] == 'running'\n"
                       "assert f['summary'].attrs['steps'] == 30\n"
                       "assert f['steps/mem_peak_bytes'].shape == (3, 2)\n",
                       printed),
            0)
      << printed;
  // The same reader process sees later rows after refresh(): a second script keeps the file
  // open across appends made between its two reads.
  const fs::path started = dir / "started";
  const fs::path go_on = dir / "go_on";
  const std::string follower =
      "import h5py, os, time\n"
      "f = h5py.File(\"" + path + "\", \"r\", swmr=True)\n"
      "s = f['steps/step']\n"
      "n = s.shape[0]\n"
      "open(\"" + started.string() + "\", 'w').close()\n"
      "while not os.path.exists(\"" + go_on.string() + "\"): time.sleep(0.05)\n"
      "s.refresh()\n"
      "print(n, s.shape[0], list(s[:]))\n";
  std::ofstream(dir / "follow.py") << follower;
  const std::string follow_out = (dir / "follow.txt").string();
  ASSERT_EQ(std::system(("/usr/bin/python3 " + (dir / "follow.py").string() + " > " +
                         follow_out + " 2>&1 &")
                            .c_str()),
            0);
  for (int i = 0; i < 200 && !fs::exists(started); ++i) usleep(50000);
  ASSERT_TRUE(fs::exists(started)) << "the reader did not start";
  for (int i = 3; i < 5; ++i) writer.append(row(i));
  std::ofstream(go_on) << "";
  std::string followed;
  for (int i = 0; i < 200 && followed.find(']') == std::string::npos; ++i) {
    usleep(50000);
    std::stringstream text;
    text << std::ifstream(follow_out).rdbuf();
    followed = text.str();
  }
  EXPECT_EQ(followed, "3 5 [10, 20, 30, 40, 50]\n");
  writer.finish({"ok", "", 0, 0});
}

}  // namespace
}  // namespace pfc
