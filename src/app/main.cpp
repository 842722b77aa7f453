// pfc: train face-recognition models over millions of identities (see README.md).
#include <spdlog/spdlog.h>

#include <vector>

#include "app/address_space_floor.h"
#include "app/commands.h"
#include "app/process_context.h"
#include "app/thread_layout.h"
#include "core/build_revision.h"
#include "core/error.h"

namespace {

// Before any library's start-up code (app/address_space_floor.h).
void check_address_space_before_libraries_start(int, char**, char** environment) {
  pfc::refuse_too_small_address_space(environment);
}
[[gnu::used, gnu::section(".preinit_array")]] void (*const check_address_space)(
    int, char**, char**) = check_address_space_before_libraries_start;

}  // namespace

int main(int argc, char** argv) {
  pfc::ProcessContext process(argc, argv);
  CLI::App app{"pfc: PartialFC face-recognition training over MPI, on CPU or CUDA"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("{} ({})", PFC_VERSION, pfc::git_revision()));

  std::vector<std::pair<CLI::App*, pfc::CommandRunner>> commands;
  auto add = [&](pfc::CommandRunner (*adder)(CLI::App&)) {
    const auto before = app.get_subcommands({}).size();
    pfc::CommandRunner runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).at(before), std::move(runner));
  };
  add(pfc::add_info_command);
  add(pfc::add_golden_command);
  add(pfc::add_train_command);
  add(pfc::add_plan_command);
  add(pfc::add_pack_command);
  add(pfc::add_report_command);
  add(pfc::add_verify_command);
  add(pfc::add_embed_command);
  add(pfc::add_export_command);
  add(pfc::add_import_command);
  add(pfc::add_ijb_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return process.finish(app.exit(e) == 0 ? pfc::kExitOk : pfc::kExitUsage);
  }
  return process.run([&] {
    pfc::set_up_threads();
    for (auto& [sub, runner] : commands)
      if (sub->parsed()) return runner();
    return static_cast<int>(pfc::kExitUsage);
  });
}
