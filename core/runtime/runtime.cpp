// Runtime: turns a Config into plugin records (loaded / skipped / disabled)
// and hands out devices of the loaded ones.
#include "kiln/runtime/runtime.hpp"

#include "device_state.hpp"
#include "loaded_library.hpp"
#include "plugin_loader.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace kiln {

struct Runtime::State {
  Config config;
  std::vector<PluginRecord> records;
  std::vector<detail::LoadedLibrary*> libraries;  // parallel to records; NULL unless loaded
  std::vector<std::string> warnings;
};

namespace {

// Of several enabled plugins with one name, the highest priority loads (the
// first listed on a tie); the others are skipped, and a warning names all.
void resolve_duplicate_names(const Config& config, std::vector<PluginRecord>& records,
                             std::vector<std::string>& warnings) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < config.plugins.size(); ++i)
    if (config.plugins[i].enabled) by_name[config.plugins[i].name].push_back(i);
  for (const auto& [name, indices] : by_name) {
    if (indices.size() < 2) continue;
    std::size_t winner = indices.front();
    for (std::size_t i : indices)
      if (config.plugins[i].priority > config.plugins[winner].priority) winner = i;
    const PluginConfig& win = config.plugins[winner];
    std::string warning = "two or more plugins are named '" + name + "': ";
    for (std::size_t i : indices) {
      const PluginConfig& p = config.plugins[i];
      if (i != indices.front()) warning += ", ";
      warning += p.library.string() + " (priority " + std::to_string(p.priority) + ", from " +
                 p.origin.to_string() + ")";
      if (i == winner) continue;
      records[i].status = PluginStatus::Skipped;
      records[i].reason = "shadowed by " + win.library.string() + " (priority " + std::to_string(win.priority) +
                          "), another plugin named '" + name + "' with a higher priority";
    }
    warnings.push_back(warning + "; using " + win.library.string());
  }
}

std::string known_plugin_names(const std::vector<PluginRecord>& records) {
  std::string names;
  for (const PluginRecord& r : records) {
    if (names.find("'" + r.name + "'") != std::string::npos) continue;
    names += (names.empty() ? "'" : ", '") + r.name + "'";
  }
  return names.empty() ? "none" : names;
}

}  // namespace

Result<Runtime> Runtime::create(Config config) {
  auto state = std::make_shared<State>();
  state->warnings = config.warnings;
  state->records.resize(config.plugins.size());
  state->libraries.assign(config.plugins.size(), nullptr);

  for (std::size_t i = 0; i < config.plugins.size(); ++i) {
    const PluginConfig& plugin = config.plugins[i];
    PluginRecord& record = state->records[i];
    record.name = plugin.name;
    record.library = plugin.library;
    record.priority = plugin.priority;
    record.required = plugin.required;
    record.origin = plugin.origin;
    record.status = PluginStatus::Loaded;  // until proven otherwise, below
    if (!plugin.enabled) {
      record.status = PluginStatus::Disabled;
      record.reason = plugin.origin.file.empty()
                          ? "disabled by default (enable it with \"plugins\": {\"" + plugin.name +
                                "\": {\"enabled\": true}})"
                          : "disabled in " + plugin.origin.to_string();
    }
  }
  resolve_duplicate_names(config, state->records, state->warnings);

  std::vector<bool> wanted(config.plugins.size());
  for (std::size_t i = 0; i < config.plugins.size(); ++i) wanted[i] = state->records[i].status == PluginStatus::Loaded;
  detail::DiscoveryProbes probes(config.plugins, wanted, state->warnings);
  for (std::size_t i = 0; i < config.plugins.size(); ++i) {
    PluginRecord& record = state->records[i];
    if (record.status == PluginStatus::Loaded) {
      if (detail::ProbeVerdict crashed = probes.verdict(i)) {
        record.status = PluginStatus::Skipped;
        record.reason = std::move(*crashed);
      } else {
        state->libraries[i] = detail::load_plugin(config.plugins[i], config.plugin_paths, record);
      }
    }
    if (record.required && record.status != PluginStatus::Loaded) {
      Error e = make_error(ErrorCode::PluginLoad, "required plugin '" + record.name + "' (" +
                                                      record.origin.to_string() + ") is " +
                                                      std::string(plugin_status_name(record.status)) + ": " +
                                                      record.reason);
      e.plugin = record.name;
      return e;
    }
  }
  state->config = std::move(config);
  return Runtime(std::move(state));
}

Result<Runtime> Runtime::open(const std::optional<std::filesystem::path>& config_file) {
  KILN_TRY_ASSIGN(Config config, load_config(config_file));
  return create(std::move(config));
}

const Config& Runtime::config() const { return state_->config; }
std::span<const PluginRecord> Runtime::plugins() const { return state_->records; }
std::vector<std::string> Runtime::warnings() const { return state_->warnings; }

const PluginRecord* Runtime::plugin(std::string_view name) const {
  const PluginRecord* found = nullptr;
  for (const PluginRecord& r : state_->records) {
    if (r.name != name) continue;
    if (r.status == PluginStatus::Loaded) return &r;
    if (found == nullptr) found = &r;
  }
  return found;
}

std::vector<DeviceInfo> Runtime::devices() const {
  std::vector<DeviceInfo> all;
  for (const PluginRecord& r : state_->records)
    if (r.status == PluginStatus::Loaded) all.insert(all.end(), r.devices.begin(), r.devices.end());
  return all;
}

Result<Device> Runtime::device(std::string_view id) const {
  const std::size_t colon = id.find(':');
  const std::string_view name = id.substr(0, colon);
  const PluginRecord* record = plugin(name);
  if (record == nullptr)
    return make_error(ErrorCode::NotFound, "device '" + std::string(id) + "': no plugin named '" + std::string(name) +
                                               "' (plugins: " + known_plugin_names(state_->records) + ")");
  if (record->status != PluginStatus::Loaded) {
    Error e = make_error(ErrorCode::Unavailable, "device '" + std::string(id) + "': plugin '" + record->name +
                                                     "' is " + std::string(plugin_status_name(record->status)) +
                                                     ": " + record->reason);
    e.plugin = record->name;
    return e;
  }
  const DeviceInfo* info = nullptr;
  if (colon == std::string_view::npos) {
    if (!record->devices.empty()) info = &record->devices.front();
  } else {
    const std::string_view digits = id.substr(colon + 1);
    std::uint32_t index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
      return make_error(ErrorCode::InvalidArgument,
                        "device '" + std::string(id) + "': expected <plugin>:<index>, e.g. '" + record->name + ":0'");
    for (const DeviceInfo& d : record->devices)
      if (d.index == index) info = &d;
  }
  if (info == nullptr) {
    std::string available;
    for (const DeviceInfo& d : record->devices) available += (available.empty() ? "" : ", ") + d.id;
    return make_error(ErrorCode::NotFound, "device '" + std::string(id) + "': no such device (plugin '" +
                                               record->name + "' exposes " +
                                               (available.empty() ? std::string("no devices") : available) + ")");
  }
  const std::size_t slot = static_cast<std::size_t>(record - state_->records.data());
  KILN_TRY_ASSIGN(std::shared_ptr<detail::DeviceState> device,
                  state_->libraries[slot]->open_device(record->name, info->index, *info));
  Device opened(std::move(device));
  opened.set_bounds_policy(state_->config.bounds);
  for (const PluginConfig& plugin : state_->config.plugins)
    if (plugin.name == record->name && plugin.priority == record->priority && plugin.isolate_compile) opened.set_isolate_compile(true);
  return opened;
}

Result<Device> Runtime::default_device() const {
  const PluginRecord* best = nullptr;
  std::string reasons;
  for (const PluginRecord& r : state_->records) {
    if (r.status == PluginStatus::Loaded && r.can_compile()) {
      if (best == nullptr || r.priority > best->priority) best = &r;
    } else if (r.status == PluginStatus::Loaded) {
      reasons += "\n  " + r.name + ": loaded, but " +
                 (r.devices.empty() ? std::string("it has no devices") : std::string("no device of it can compile"));
    } else {
      reasons += "\n  " + r.name + ": " + std::string(plugin_status_name(r.status)) + ": " + r.reason;
    }
  }
  if (best == nullptr)
    return make_error(ErrorCode::Unavailable, "no device can run kernels (config: " + state_->config.source() + "):" +
                                                  reasons);
  for (const DeviceInfo& d : best->devices)
    if (d.can_compile()) return device(d.id);
  return device(best->devices.front().id);
}

}  // namespace kiln
