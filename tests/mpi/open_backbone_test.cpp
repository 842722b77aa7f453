// open_backbone on the checkpoint of a real run (trained here on 1 or 2 ranks): the network
// its config names, with exactly the saved tensors, infers; a run folder and a step folder
// open alike; another network than asked for, or tensors that are not the config's network,
// are messages naming both. Resuming a run from a checkpoint of another network is refused
// with the tensor and the config keys that differ.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "comm/mpi_comm.h"
#include "config/load_config.h"
#include "eval/open_backbone.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"
#include "support/gradient_checker.h"
#include "support/usage_error.h"
#include "train/trainer.h"

namespace pfc {
namespace {

using namespace pfc::test;

Config tiny_run(const std::filesystem::path& output, const std::string& layers) {
  return parse_config(fmt::format("network = \"custom\"\nlayers = {}\nwidths = [8, 8, 16, 16]\n"
                                  "image_size = 32\nembedding_size = 12\nnum_classes = 50\n"
                                  "num_image = 400\nbatch_size = 4\nsynthetic_labels = "
                                  "\"uniform\"\nfp16 = false\nsteps = 3\nfrequent = 3\n"
                                  "output = \"{}\"\n",
                                  layers, output.string()),
                      "test config", {});
}

// Trains the tiny run once per world size; every test opens its checkpoint.
std::filesystem::path trained_run() {
  static const std::filesystem::path output = [] {
    const std::filesystem::path dir = shared_scratch("open_backbone_run") / "run";
    MpiComm comm;
    CpuBackend backend;
    const Config cfg = tiny_run(dir, "[1, 1, 1, 1]");
    train(cfg, decide_run_start(cfg), comm, backend, "open_backbone_test");
    return dir;
  }();
  return output;
}

TEST(OpenBackbone, OpensARunsLatestCheckpointWithItsTensors) {
  const std::filesystem::path run = trained_run();
  CpuBackend backend;
  const OpenedBackbone opened = open_backbone(run, backend);
  EXPECT_EQ(opened.checkpoint.step, 3);
  EXPECT_EQ(opened.config.layers, (std::vector<std::int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(opened.backbone->embedding_size(), 12);
  EXPECT_EQ(opened.backbone->image_size(), 32);
  const CheckpointBackbone saved = read_checkpoint_backbone(opened.checkpoint.path);
  ASSERT_EQ(saved.parameters.size(), opened.backbone->parameters().size());
  for (const NamedTensor& t : saved.parameters) {
    const Parameter* p = opened.backbone->find_parameter(t.name);
    ASSERT_NE(p, nullptr) << t.name;
    expect_same_tensor(opened.backbone->export_parameter(*p), t.value, t.name);
  }
  for (const NamedTensor& t : saved.buffers)
    expect_same_tensor(backend.to_host(opened.backbone->find_buffer(t.name)->value), t.value,
                       t.name);

  // The step folder opens the same network; one image is enough in inference mode.
  const OpenedBackbone again = open_backbone(opened.checkpoint.path, backend);
  const Tensor image = random_uniform({1, 32, 32, 3}, DType::f32, 1);
  const Tensor a = backend.to_host(opened.backbone->forward(image, ForwardMode::inference));
  const Tensor b = backend.to_host(again.backbone->forward(image, ForwardMode::inference));
  expect_same_tensor(a, b, "embedding of one image");
  for (std::int64_t i = 0; i < a.numel(); ++i) EXPECT_TRUE(std::isfinite(a.data<float>()[i]));
}

TEST(OpenBackbone, AnotherNetworkThanExpectedIsNamed) {
  CpuBackend backend;
  OpenBackboneOptions options;
  options.expected = tiny_run("unused", "[1, 1, 2, 1]");
  const std::string why = usage_error([&] { open_backbone(trained_run(), backend, options); });
  EXPECT_NE(why.find("holds the network custom (iresnet [1, 1, 1, 1]"), std::string::npos)
      << why;
  EXPECT_NE(why.find("asks for custom (iresnet [1, 1, 2, 1]"), std::string::npos) << why;
}

TEST(OpenBackbone, TensorsOfAnotherNetworkAreNamed) {
  // The fixture's checkpoint holds four small tensors, but its config names the default r50.
  const auto root = shared_scratch("open_backbone_foreign");
  MpiComm comm;
  write_checkpoint(comm, root, checkpoint_at(5, comm.rank(), comm.world_size()), 2);
  CpuBackend backend;
  const std::string why =
      usage_error([&] { open_backbone(root / checkpoint_folder_name(5), backend); });
  EXPECT_NE(why.find("does not hold the network iresnet [3, 4, 14, 3]"), std::string::npos)
      << why;
  EXPECT_NE(why.find("'conv1.weight' is [4, 3, 3, 3] there, [64, 3, 3, 3] in the network"),
            std::string::npos)
      << why;
}

TEST(OpenBackbone, WhatIsNotACheckpointIsNamed) {
  CpuBackend backend;
  const auto root = shared_scratch("open_backbone_empty");
  const std::string why = usage_error([&] { open_backbone(root, backend); });
  EXPECT_NE(why.find(root.string()), std::string::npos) << why;
}

TEST(OpenBackbone, ResumingFromAnotherNetworkIsRefused) {
  const auto dir = shared_scratch("open_backbone_resume") / "other";
  Config cfg = tiny_run(dir, "[1, 1, 2, 1]");
  cfg.resume_from = trained_run().string();
  MpiComm comm;
  CpuBackend backend;
  const std::string why =
      usage_error([&] { train(cfg, decide_run_start(cfg), comm, backend, "test"); });
  // The trainer's own check (train/checkpoint_model_match.h): the first tensor that differs
  // and the network keys in which the two configs differ.
  EXPECT_NE(why.find("does not fit this run's backbone"), std::string::npos) << why;
  EXPECT_NE(why.find("layers = "), std::string::npos) << why;
}

}  // namespace
}  // namespace pfc
