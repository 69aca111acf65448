// kiln: the command-line face of the runtime. Each subcommand is a few calls
// into the public C++ API (commands.hpp), so a host app can do the same.
#include "commands.hpp"

#include <kiln/version.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>
#include <exception>

namespace kiln::cli {

void fail(const kiln::Error& error) { throw CommandFailed(error.to_string()); }

kiln::Runtime open_runtime(const GlobalOptions& global, const std::vector<std::string>& only_for) {
  std::optional<std::filesystem::path> file;
  if (!global.config_file.empty()) file = global.config_file;
  kiln::Result<kiln::Config> config = kiln::load_config(file);
  if (!config) fail(config.error());
  const bool every_plugin =
      only_for.empty() || std::any_of(only_for.begin(), only_for.end(), [](const std::string& id) { return id.empty(); });
  if (!every_plugin)
    for (kiln::PluginConfig& plugin : config->plugins) {
      const bool named = std::any_of(only_for.begin(), only_for.end(), [&](const std::string& id) {
        return id.substr(0, id.find(':')) == plugin.name;
      });
      if (!named) plugin.enabled = false;
    }
  kiln::Result<kiln::Runtime> runtime = kiln::Runtime::create(std::move(config).value());
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
  add_bench_command(app, global);

  // Both before parsing: CLI11 would ask for a subcommand first.
  // `kiln --version`, also listed in --help.
  bool version_flag = false;  // handled before parsing; declared so --help lists it
  app.add_flag("--version", version_flag, "Print kiln's version and exit");
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    fmt::print("kiln {}\n", kiln::version());
    return 0;
  }
  // `kiln help SUBCOMMAND` is `kiln SUBCOMMAND --help`, so the text is the same.
  app.add_subcommand("help", "Print a subcommand's help: kiln help SUBCOMMAND (as kiln SUBCOMMAND --help)");
  std::vector<std::string> args(argv, argv + argc);
  if (argc >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    if (args.size() == 1) {
      fmt::print("{}", app.help());
      return 0;
    }
    const std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
    const bool known = std::any_of(commands.begin(), commands.end(),
                                   [&](CLI::App* c) { return c->get_name() == args[1] && c->get_name() != "help"; });
    if (!known) {
      fmt::print(stderr, "kiln: error: help: no subcommand '{}' (kiln --help lists them)\n", args[1]);
      return 1;
    }
    args.resize(2);
    args.push_back("--help");
  }
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());

  try {
    app.parse(static_cast<int>(pointers.size()), pointers.data());
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
