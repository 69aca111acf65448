// kiln conformance --library PATH | --plugin NAME [--options JSON] [--json]
// [--quick] [--cases REGEX] [--case-timeout S]: the plugin conformance kit (tools/conformance)
// on one plugin library, through the ABI alone, with what passed, failed
// and was unsupported and why. Exit codes (the only command with three):
// 0 every case that ran passed and one at least did; 1 a case failed;
// 2 usage error, plugin not loaded or unavailable, or nothing tested.
//
// The kit runs in a child process: a plugin that crashes (a NULL it
// dereferences, an abort) takes the child down, and the parent still
// reports every case that ended, the case the crash happened in (failed,
// with the signal) and exit code 1. A case that gives no result within
// --case-timeout (a plugin that hangs) is failed alike and the child killed.
#include "commands.hpp"
#include "conformance_child.hpp"

#include <kiln/conformance/kit.hpp>

#include <boost/json.hpp>
#include <fmt/core.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>

namespace kiln::cli {

namespace {

namespace conf = kiln::conformance;

struct ConformanceOptions {
  std::string library;
  std::string plugin;
  std::string options_json;
  std::string cases;
  bool json = false;
  bool quick = false;
  double case_timeout_s = 600;  // the longest wait for a case's result (0: none)
};

[[noreturn]] void usage_error(const std::string& message) {
  fmt::print(stderr, "kiln conformance: error: {}\n", message);
  throw CommandExit(conf::kExitNotTested);
}

// --plugin NAME: the library and options the config (--config, or the
// search order, else the built-in default) gives that plugin. Nothing is
// loaded here; the kit loads the library itself.
void resolve_plugin(const GlobalOptions& global, ConformanceOptions& o) {
  std::optional<std::filesystem::path> file;
  if (!global.config_file.empty()) file = global.config_file;
  kiln::Result<kiln::Config> config = kiln::load_config(file);
  if (!config) usage_error(config.error().to_string());
  const kiln::PluginConfig* plugin = config->plugin(o.plugin);
  if (plugin == nullptr) {
    std::string names;
    for (const kiln::PluginConfig& p : config->plugins) names += (names.empty() ? "" : ", ") + p.name;
    usage_error(fmt::format("no plugin '{}' in the config ({}); it names: {}", o.plugin, config->source(), names));
  }
  if (plugin->library.empty())
    usage_error(fmt::format("plugin '{}' has no library in the config ({}) and no libkiln-{}.so is in its plugin paths",
                            o.plugin, config->source(), o.plugin));
  o.library = plugin->library.string();
  if (o.options_json.empty()) o.options_json = plugin->options_json;
}

void print_case(const conf::CaseResult& c) {
  const char* label = c.status == conf::CaseStatus::passed ? "pass" : c.status == conf::CaseStatus::failed ? "FAIL" : "skip";
  const std::string where = c.device ? fmt::format("device {}", *c.device) : std::string("plugin");
  fmt::print("  {}  {:<9} {}{}{}\n", label, where, c.name, c.reason.empty() ? "" : ": ", c.reason);
  std::fflush(stdout);
}

boost::json::object report_json(const conf::Report& r) {
  boost::json::array devices;
  for (const conf::DeviceReport& d : r.devices)
    devices.push_back({{"index", d.index}, {"name", d.name}, {"kind", d.kind}, {"max_local_threads", d.max_local_threads}});
  boost::json::array cases;
  for (const conf::CaseResult& c : r.cases) {
    boost::json::object o{{"name", c.name}, {"status", conf::status_name(c.status)}, {"reason", c.reason}};
    o["device"] = c.device ? boost::json::value(*c.device) : boost::json::value(nullptr);
    cases.push_back(std::move(o));
  }
  const conf::Totals t = r.totals();
  return {{"library", r.library},
          {"plugin", r.plugin},
          {"version", r.version},
          {"outcome", conf::outcome_name(r.outcome)},
          {"reason", r.reason},
          {"devices", std::move(devices)},
          {"cases", std::move(cases)},
          {"totals", {{"passed", t.passed}, {"failed", t.failed}, {"unsupported", t.unsupported}}},
          {"exit_code", r.exit_code()}};
}

// The report of a child that died of `signal`, or was stopped after the case
// timeout: the cases it ended, then the one it died or hung in (or, outside
// any case, the plugin's loading, init, device open/close or shutdown),
// failed.
conf::Report crashed_report(const std::string& library, StreamedCases cases, int signal, double timeout_s) {
  conf::Report report;
  report.library = library;
  report.outcome = conf::Outcome::tested;
  report.cases = std::move(cases.ended);
  const std::string what =
      cases.timed_out
          ? fmt::format("no result for {} s (--case-timeout): the kit's process was stopped", timeout_s)
          : fmt::format("the plugin crashed the kit's process (signal {}, {})", signal, strsignal(signal));
  if (cases.running) {
    cases.running->reason = what + "; the cases after it did not run";
    report.cases.push_back(std::move(*cases.running));
  } else {
    report.cases.push_back({cases.timed_out ? "plugin hung" : "plugin crashed", std::nullopt, conf::CaseStatus::failed,
                            what + " outside any case: loading it, in init, device_open, device_close or shutdown"});
  }
  report.reason = what;
  return report;
}

void print_report(const ConformanceOptions& o, const conf::Report& report) {
  if (o.json) {
    fmt::print("{}\n", boost::json::serialize(report_json(report)));
  } else {
    if (!report.plugin.empty())
      fmt::print("plugin: {} {} ({})\n", report.plugin, report.version.empty() ? "?" : report.version, report.description);
    for (const conf::DeviceReport& d : report.devices)
      fmt::print("device {}:{}: {} ({}, {} threads/group)\n", report.plugin, d.index, d.name, d.kind, d.max_local_threads);
    fmt::print("{}\n", report.summary());
  }
  std::fflush(stdout);  // the report first, then why nothing was tested
  if (report.exit_code() == conf::kExitNotTested)
    fmt::print(stderr, "kiln conformance: nothing tested: {}\n",
               report.outcome != conf::Outcome::tested ? report.reason : "no case passed");
}

// In the child: the kit, its progress (text mode) and its report; the case
// stream to the parent. Ends by throwing CommandExit, as every command does.
[[noreturn]] void run_kit(const ConformanceOptions& o, const CaseStream& stream) {
  conf::Options kit;
  kit.options_json = o.options_json;
  kit.cases = o.cases;
  kit.quick = o.quick;
  kit.on_case_start = [&](const std::string& name, std::uint32_t device) { stream.started(name, device); };
  kit.on_case = [&](const conf::CaseResult& c) {
    stream.ended(c);
    if (!o.json) print_case(c);  // as each case ends: progress on slow devices
  };
  if (!o.json) {
    fmt::print("kiln conformance: {}\n", o.library);
    std::fflush(stdout);  // before the plugin may crash the process
  }
  const conf::Report report = conf::run_conformance(o.library, kit);  // --cases checked by the parent
  print_report(o, report);
  throw CommandExit(report.exit_code());
}

void run(const GlobalOptions& global, ConformanceOptions o) {
  if (o.library.empty() == o.plugin.empty()) usage_error("give one of --library PATH or --plugin NAME");
  if (!o.plugin.empty()) resolve_plugin(global, o);
  if (o.options_json.empty()) o.options_json = "{}";
  boost::system::error_code ec;
  const boost::json::value options = boost::json::parse(o.options_json, ec);
  if (ec || !options.is_object()) usage_error("--options must be a JSON object, got: " + o.options_json);

  if (!o.cases.empty()) {
    try {
      const std::regex check(o.cases, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      usage_error(fmt::format("--cases '{}' is not a regular expression: {}", o.cases, e.what()));
    }
  }

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) usage_error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) usage_error(fmt::format("cannot start the kit's process: {}", std::strerror(errno)));
  if (child == 0) {
    ::close(fds[0]);
    run_kit(o, CaseStream(fds[1]));
  }
  ::close(fds[1]);
  StreamedCases cases = read_cases(fds[0], o.case_timeout_s);
  if (cases.timed_out) ::kill(child, SIGKILL);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!cases.timed_out && WIFEXITED(status)) throw CommandExit(WEXITSTATUS(status));
  const conf::Report report =
      crashed_report(o.library, std::move(cases), WIFSIGNALED(status) ? WTERMSIG(status) : 0, o.case_timeout_s);
  if (!o.json) print_case(report.cases.back());
  print_report(o, report);
  throw CommandExit(report.exit_code());
}

}  // namespace

void add_conformance_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand(
      "conformance", "Run the plugin conformance kit (ABI checks and the kernel suite) on one plugin library");
  auto o = std::make_shared<ConformanceOptions>();
  auto* library = command->add_option("--library", o->library, "The plugin library to test (any file name)");
  command->add_option("--plugin", o->plugin, "A plugin the config names (its library and options)")->excludes(library);
  command->add_option("--options", o->options_json,
                      "JSON object handed to the plugin's init (default: the config's options with --plugin, else {})");
  command->add_flag("--json", o->json, "Print one JSON object (plugin, version, devices, cases, totals)");
  command->add_flag("--quick", o->quick, "The kernel suite on f32 and i32 only (every kernel shape, fewer dtypes)");
  command->add_option("--cases", o->cases, "Only the cases whose name this regular expression finds");
  command->add_option("--case-timeout", o->case_timeout_s,
                      "Seconds to wait for a case's result; a case past it fails and the kit stops (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  command->footer(
      "Exit codes: 0 every case that ran passed (and at least one did); 1 a case failed;\n"
      "2 usage error, the plugin could not be loaded, its init failed (e.g. UNAVAILABLE: no driver or device),\n"
      "or nothing was tested (no case passed).");
  command->callback([&global, o] { run(global, *o); });
}

}  // namespace kiln::cli
