// The subcommands of the pfc executable. Each file app/command_NAME.cpp adds one to the
// CLI11 app and returns the function that runs it once the command line is parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace pfc {

using CommandRunner = std::function<int()>;

CommandRunner add_info_command(CLI::App& app);
CommandRunner add_golden_command(CLI::App& app);
CommandRunner add_train_command(CLI::App& app);
CommandRunner add_plan_command(CLI::App& app);
CommandRunner add_pack_command(CLI::App& app);
CommandRunner add_report_command(CLI::App& app);
CommandRunner add_verify_command(CLI::App& app);
CommandRunner add_embed_command(CLI::App& app);
CommandRunner add_export_command(CLI::App& app);
CommandRunner add_import_command(CLI::App& app);
CommandRunner add_ijb_command(CLI::App& app);

}  // namespace pfc
