// run_conformance: load, check the table, init, and run every case on every
// device, turning whatever a case throws into its result.
#include <kiln/conformance/kit.hpp>

#include "cases.hpp"

#include <memory>
#include <regex>

namespace kiln::conformance {

namespace {

std::string_view status_text(kiln_status s) {
  switch (s) {
    case KILN_STATUS_OK: return "OK";
    case KILN_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case KILN_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case KILN_STATUS_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case KILN_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case KILN_STATUS_COMPILE_FAILED: return "COMPILE_FAILED";
    case KILN_STATUS_LAUNCH_FAILED: return "LAUNCH_FAILED";
    case KILN_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case KILN_STATUS_DEVICE_LOST: return "DEVICE_LOST";
    case KILN_STATUS_INTERNAL: return "INTERNAL";
    case KILN_STATUS_TIMEOUT: return "TIMEOUT";
  }
  return "unknown status";
}

std::string describe(const AbiError& e) { return std::string(status_text(e.status)) + ": " + e.what(); }

std::string_view kind_name(std::uint32_t kind) {
  switch (kind) {
    case KILN_DEVICE_KIND_CPU: return "cpu";
    case KILN_DEVICE_KIND_GPU: return "gpu";
    case KILN_DEVICE_KIND_ACCELERATOR: return "accelerator";
    case KILN_DEVICE_KIND_VIRTUAL: return "virtual";
    default: return "unknown";
  }
}

std::string c_string(const char* s) { return s != nullptr ? s : ""; }

// A case's verdict, or what it threw as one. UNSUPPORTED and
// NOT_IMPLEMENTED (a plugin that does not compile yet) are legal answers.
detail::Verdict run_case(const detail::Case& c, const detail::Target& target) {
  try {
    return c.run(target);
  } catch (const AbiError& e) {
    if (e.status == KILN_STATUS_UNSUPPORTED || e.status == KILN_STATUS_NOT_IMPLEMENTED)
      return detail::Verdict::unsupported(std::string("the plugin answered ") + describe(e));
    return detail::Verdict::fail(describe(e));
  } catch (const std::exception& e) {
    return detail::Verdict::fail(std::string("exception: ") + e.what());
  }
}

class Run {
 public:
  Run(const Options& options, Report& report)
      : options_(options), report_(report) {
    if (!options.cases.empty()) filter_.emplace(options.cases, std::regex::ECMAScript);
  }

  bool wanted(const std::string& name) const { return !filter_ || std::regex_search(name, *filter_); }

  void record(CaseResult result) {
    report_.cases.push_back(std::move(result));
    if (options_.on_case) options_.on_case(report_.cases.back());
  }

  void run_device(const AbiPlugin& plugin, std::uint32_t index) {
    DeviceReport& d = report_.devices.emplace_back();
    d.index = index;
    kiln_device_info info{};
    kiln_device* device = nullptr;
    try {
      info = plugin.info(index);
      d.name = info.name;
      d.kind = kind_name(info.kind);
      d.max_local_threads = info.max_local_threads;
      device = plugin.open(index);
    } catch (const AbiError& e) {
      record({"device open", index, CaseStatus::failed, describe(e)});
      return;
    }
    const detail::Target target{plugin, device, index, info};
    std::vector<detail::Case> cases = detail::abi_cases(info);
    for (detail::Case& c : detail::suite_cases(info, options_.quick, options_.seed)) cases.push_back(std::move(c));
    for (const detail::Case& c : cases) {
      if (!wanted(c.name)) continue;
      if (options_.on_case_start) options_.on_case_start(c.name, index);
      detail::Verdict v = run_case(c, target);
      record({c.name, index, v.status, std::move(v.reason)});
    }
    if (plugin.api().device_close != nullptr) plugin.api().device_close(device);
  }

 private:
  const Options& options_;
  Report& report_;
  std::optional<std::regex> filter_;
};

}  // namespace

Report run_conformance(const std::string& library, const Options& options) {
  Report report;
  report.library = library;
  Run run(options, report);
  const kiln_plugin_api* api = nullptr;
  try {
    api = query_plugin(library);
  } catch (const std::exception& e) {
    report.outcome = Outcome::not_loaded;
    report.reason = e.what();
    return report;
  }
  if (api->abi_major != KILN_ABI_MAJOR) {
    // Not a broken plugin: one for another ABI, which no host of this one loads.
    report.outcome = Outcome::not_loaded;
    report.reason = "the plugin was built for ABI " + std::to_string(api->abi_major) + "." +
                    std::to_string(api->abi_minor) + "; this kit speaks ABI " + std::to_string(KILN_ABI_MAJOR) + "." +
                    std::to_string(KILN_ABI_MINOR);
    return report;
  }
  report.plugin = c_string(api->name);
  report.version = c_string(api->version);
  report.description = c_string(api->description);
  // The table gates everything else, so a bad one is reported even when
  // --cases leaves its case out.
  auto table_ok = [&](const detail::Verdict& table) {
    if (table.status == CaseStatus::passed) return true;
    run.record({"plugin table", std::nullopt, table.status, table.reason});
    report.outcome = Outcome::bad_table;
    report.reason = "the plugin table is unusable: " + table.reason;
    return false;
  };
  if (!table_ok(detail::check_table(*api, true))) return report;

  std::unique_ptr<AbiPlugin> plugin;
  try {
    plugin = std::make_unique<AbiPlugin>(api, options.options_json);
  } catch (const AbiError& e) {
    report.outcome = e.status == KILN_STATUS_UNAVAILABLE ? Outcome::unavailable : Outcome::init_failed;
    report.reason = "init: " + describe(e);
    return report;
  }
  if (!table_ok(detail::check_table(*api, false))) return report;
  if (run.wanted("plugin table")) run.record({"plugin table", std::nullopt, CaseStatus::passed, {}});
  std::uint32_t count = 0;
  try {
    count = plugin->device_count();
  } catch (const AbiError& e) {
    run.record({"device count", std::nullopt, CaseStatus::failed, describe(e)});
    return report;
  }
  if (count == 0) {
    report.outcome = Outcome::no_devices;
    report.reason = "init succeeded but device_count is 0";
    return report;
  }
  for (std::uint32_t index = 0; index < count; ++index) run.run_device(*plugin, index);
  return report;  // ~AbiPlugin shuts the plugin down
}

}  // namespace kiln::conformance
