// kiln: the command-line face of the runtime. Each subcommand is a few calls
// into the public C++ API (commands.hpp), so a host app can do the same.
#include "commands.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <exception>

namespace kiln::cli {

void fail(const kiln::Error& error) { throw CommandFailed(error.to_string()); }

kiln::Runtime open_runtime(const GlobalOptions& global) {
  std::optional<std::filesystem::path> file;
  if (!global.config_file.empty()) file = global.config_file;
  kiln::Result<kiln::Runtime> runtime = kiln::Runtime::open(file);
  if (!runtime) fail(runtime.error());
  return std::move(runtime).value();
}

}  // namespace kiln::cli

int main(int argc, char** argv) {
  using namespace kiln::cli;
  CLI::App app{"kiln: a kernel runtime with backend plugins and an autotuner"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  GlobalOptions global;
  app.add_option("--config", global.config_file,
                 "config.json to use (default: $KILN_CONFIG, $XDG_CONFIG_HOME/kiln/config.json, "
                 "~/.config/kiln/config.json, else the built-in default)");

  add_devices_command(app, global);
  add_run_command(app, global);
  add_ir_command(app, global);
  add_tune_command(app, global);
  add_cache_command(app, global);
  add_conformance_command(app, global);
  // Later issues add: bench.

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is success; usage errors exit 1 like every error, but 2 for
    // `kiln conformance`, whose 1 means "a case failed" (CI tells them apart).
    if (app.exit(e) == 0) return 0;
    return app.get_subcommand("conformance")->parsed() ? 2 : 1;
  } catch (const CommandExit& e) {
    return e.code;
  } catch (const CommandFailed& e) {
    fmt::print(stderr, "kiln: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln: internal error: {}\n", e.what());
    return 1;
  } catch (...) {
    fmt::print(stderr, "kiln: internal error: unknown exception\n");
    return 1;
  }
  return 0;
}
