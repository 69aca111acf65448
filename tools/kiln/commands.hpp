// tools/kiln/commands.hpp - how a subcommand joins the kiln CLI.
//
// Each subcommand lives in its own file and exposes one function,
//   void add_<name>_command(CLI::App& app, const GlobalOptions& global);
// that adds the subcommand and its callback; main.cpp calls it. A callback
// reports failure by throwing CommandFailed (message to stderr, exit 1),
// returning a kiln::Error through fail(), or, for a command with its own
// exit codes, throwing CommandExit; it never lets another exception
// escape (main catches them anyway, as a last resort).
#pragma once

#include <kiln/runtime.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cli {

// Options every subcommand sees (given before or after the subcommand).
struct GlobalOptions {
  std::string config_file;  // --config; empty: the search order
};

// Ends the command with exit code 1 after printing the message to stderr.
struct CommandFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const kiln::Error& error);

// Ends the command with this exit code, the command having printed what it
// had to say (kiln conformance: 0 passed, 1 failed, 2 nothing tested).
struct CommandExit {
  int code;
  explicit CommandExit(int c) : code(c) {}
};

// The Runtime the global options describe (--config or the search order).
// With `only_for`, device ids ("cuda:0", "c"), only the plugins those ids
// name are loaded, the others kept as disabled ("not needed by this
// command"): a command on one device does not pay for starting every
// driver (CUDA, OpenCL and Vulkan each take a share of a second on the
// GPU machine), which `kiln tune --budget` charges to its budget. An empty
// id (the default device) loads them all.
kiln::Runtime open_runtime(const GlobalOptions& global, const std::vector<std::string>& only_for = {});

void add_devices_command(CLI::App& app, const GlobalOptions& global);
void add_run_command(CLI::App& app, const GlobalOptions& global);
void add_ir_command(CLI::App& app, const GlobalOptions& global);
void add_tune_command(CLI::App& app, const GlobalOptions& global);
void add_cache_command(CLI::App& app, const GlobalOptions& global);
void add_conformance_command(CLI::App& app, const GlobalOptions& global);
void add_bench_command(CLI::App& app, const GlobalOptions& global);

}  // namespace kiln::cli
