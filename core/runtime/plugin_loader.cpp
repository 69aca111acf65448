#include "plugin_loader.hpp"

#include "host_api.hpp"

#include <algorithm>

namespace kiln::detail {

namespace fs = std::filesystem;

namespace {

LoadedLibrary* skip(PluginRecord& record, std::string reason) {
  record.status = PluginStatus::Skipped;
  record.reason = std::move(reason);
  return nullptr;
}

std::string describe(const Error& e) {
  std::string out = e.function.empty() ? std::string() : e.function + " failed: ";
  if (!e.function.empty() && e.code != ErrorCode::PluginLoad) out += std::string(error_code_name(e.code)) + ": ";
  return out + e.message;
}

// Keeps the devices the config's "devices" filter selects (all when empty),
// warning about selectors that match nothing.
std::vector<DeviceInfo> filter_devices(const PluginConfig& plugin, std::vector<DeviceInfo> devices,
                                       std::vector<std::string>& warnings) {
  if (plugin.devices.empty()) return devices;
  std::vector<bool> keep(devices.size(), false);
  for (std::size_t s = 0; s < plugin.devices.size(); ++s) {
    const DeviceSelector& selector = plugin.devices[s];
    bool matched = false;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const bool hit = std::holds_alternative<std::uint32_t>(selector)
                           ? devices[d].index == std::get<std::uint32_t>(selector)
                           : devices[d].name.find(std::get<std::string>(selector)) != std::string::npos;
      if (hit) keep[d] = matched = true;
    }
    if (!matched) {
      const std::string what = std::holds_alternative<std::uint32_t>(selector)
                                   ? "index " + std::to_string(std::get<std::uint32_t>(selector))
                                   : "name containing \"" + std::get<std::string>(selector) + "\"";
      warnings.push_back("devices[" + std::to_string(s) + "]: no device with " + what + " (the plugin has " +
                         std::to_string(devices.size()) + ")");
    }
  }
  std::vector<DeviceInfo> kept;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (keep[d]) kept.push_back(std::move(devices[d]));
  return kept;
}

}  // namespace

LoadedLibrary* load_plugin(const PluginConfig& plugin, const std::vector<fs::path>& plugin_paths,
                           PluginRecord& record) {
  if (plugin.library.empty()) {
    std::string folders;
    for (const fs::path& dir : plugin_paths) folders += (folders.empty() ? "" : ", ") + dir.string();
    return skip(record, "no library: plugins." + plugin.name + " has no \"library\", and no manifest or libkiln-" +
                            plugin.name + ".so is in the plugin paths (" + folders + ")");
  }
  Result<LoadedLibrary*> loaded = load_library(plugin.library);
  if (!loaded) return skip(record, loaded.error().message);
  LoadedLibrary& library = **loaded;
  record.version = library.version();
  record.description = library.description();
  const kiln_plugin_api& api = library.api();
  if (api.name != nullptr && plugin.name != library.name())
    record.warnings.push_back("the library calls itself '" + library.name() + "'; it is listed as '" + plugin.name +
                              "' as the config names it");

  std::string note;
  Result<void> init = library.initialize(plugin.name, plugin.options_json, note);
  record.log = library.log();
  if (!note.empty()) record.warnings.push_back(note);
  if (!init) return skip(record, describe(init.error()));

  kiln_device_count_args count{};
  count.struct_size = KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE;
  if (kiln_error* err = api.device_count(&count)) return skip(record, describe(take_error(err, plugin.name, "device_count")));

  // A count past any machine's is a plugin bug; believing it would loop
  // (and allocate) billions of times.
  constexpr std::uint32_t kMaxDevices = 4096;
  if (count.count > kMaxDevices)
    return skip(record, "device_count reports " + std::to_string(count.count) + " devices, more than the " +
                            std::to_string(kMaxDevices) + " kiln accepts from one plugin (a plugin bug)");
  std::vector<DeviceInfo> devices;
  for (std::uint32_t index = 0; index < count.count; ++index) {
    kiln_device_info info{};
    info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
    kiln_device_info_args args{};
    args.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
    args.index = index;
    args.info = &info;
    if (kiln_error* err = api.device_info(&args)) {
      record.warnings.push_back("device " + std::to_string(index) + " left out: " +
                                describe(take_error(err, plugin.name, "device_info")));
      continue;
    }
    devices.push_back(DeviceInfo::from_abi(info, plugin.name, index));
  }
  record.devices = filter_devices(plugin, std::move(devices), record.warnings);
  record.log = library.log();
  record.status = PluginStatus::Loaded;
  record.reason.clear();
  return &library;
}

DiscoveryProbes::DiscoveryProbes(const std::vector<PluginConfig>& plugins, const std::vector<bool>& wanted,
                                 std::vector<std::string>& warnings)
    : probes_(plugins.size()) {
  std::string problem;
  const ProbeSettings settings = probe_settings(problem);
  if (!problem.empty()) warnings.push_back(problem);
  if (!settings.enabled) return;
  bool any = false;
  for (std::size_t i = 0; i < plugins.size(); ++i) {
    const PluginConfig& plugin = plugins[i];
    if (!wanted[i] || plugin.library.empty() || library_loaded(plugin.library)) continue;
    std::error_code ec;
    if (!std::filesystem::exists(plugin.library, ec)) continue;  // the loader names the missing file
    any = true;
    if (settings.executable.empty()) continue;
    probes_[i].emplace(PluginProbe::start(settings, plugin.library, plugin.options_json, KILN_ABI_MINOR));
  }
  if (any && settings.executable.empty())
    warnings.push_back("the plugin probe (kiln/kiln-plugin-probe next to libkiln) is not installed: plugins load "
                       "without it, and one that crashes or hangs in init takes this process with it");
}

ProbeVerdict DiscoveryProbes::verdict(std::size_t index) {
  if (index >= probes_.size() || !probes_[index]) return std::nullopt;
  return probes_[index]->verdict();
}

}  // namespace kiln::detail
