#include "kiln/version.hpp"
#include "kiln/runtime/report.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace kiln {

namespace json = boost::json;

namespace {

json::array string_array(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& s : items) out.emplace_back(s);
  return out;
}

template <class T, std::size_t N>
json::array number_array(const std::array<T, N>& items) {
  json::array out;
  for (T v : items) out.emplace_back(v);
  return out;
}

json::object device_json(const DeviceInfo& d) {
  json::object o;
  o["id"] = d.id;
  o["name"] = d.name;
  o["kind"] = device_kind_name(d.kind);
  o["memory_bytes"] = d.memory_bytes;
  o["compute_units"] = d.compute_units;
  o["warp_size"] = d.warp_size;
  o["max_local_threads"] = d.max_local_threads;
  json::array widths;
  for (std::uint32_t w : d.vector_widths()) widths.emplace_back(w);
  o["vector_widths"] = std::move(widths);
  o["vendor"] = d.vendor;
  o["driver_version"] = d.driver_version;
  o["pci_bus_id"] = d.pci_bus_id;
  o["can_compile"] = d.can_compile();
  o["host_memory"] = d.host_memory();
  o["device_timer"] = d.device_timer();
  o["local_memory_bytes"] = d.local_memory_bytes;
  o["register_bytes"] = d.register_bytes;
  o["max_register_bytes"] = d.max_register_bytes;
  o["max_local_dims"] = number_array(d.max_local_dims);
  o["max_grid_dims"] = number_array(d.max_grid_dims);
  o["clock_mhz"] = d.clock_mhz;
  o["cache_bytes"] = number_array(d.cache_bytes);
  o["peak_gflops"] = d.peak_gflops;
  o["memory_bandwidth_gbps"] = d.memory_bandwidth_gbps;
  return o;
}

json::object plugin_json(const PluginRecord& p) {
  json::object o;
  o["name"] = p.name;
  o["library"] = p.library.string();
  o["version"] = p.version;
  o["status"] = plugin_status_name(p.status);
  o["reason"] = p.reason;
  o["can_compile"] = p.can_compile();
  o["priority"] = p.priority;
  o["required"] = p.required;
  o["origin"] = p.origin.to_string();
  json::array devices;
  for (const DeviceInfo& d : p.devices) devices.emplace_back(device_json(d));
  o["devices"] = std::move(devices);
  o["warnings"] = string_array(p.warnings);
  json::array log;
  for (const LogLine& line : p.log) log.emplace_back(json::object{{"level", log_level_name(line.level)}, {"text", line.text}});
  o["log"] = std::move(log);
  return o;
}

bool is_scalar(const json::value& v) { return !v.is_object() && !v.is_array(); }

// Indented output; arrays of scalars stay on one line.
void write_indented(std::string& out, const json::value& v, int depth) {
  const std::string pad(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string close_pad(static_cast<std::size_t>(depth) * 2, ' ');
  if (const json::object* o = v.if_object()) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (const auto& [key, item] : *o) {
      if (!first) out += ",\n";
      first = false;
      out += pad + json::serialize(json::string(key)) + ": ";
      write_indented(out, item, depth + 1);
    }
    out += "\n" + close_pad + "}";
  } else if (const json::array* a = v.if_array()) {
    if (a->empty() || std::all_of(a->begin(), a->end(), is_scalar)) {
      out += json::serialize(*a);
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (i != 0) out += ",\n";
      out += pad;
      write_indented(out, (*a)[i], depth + 1);
    }
    out += "\n" + close_pad + "]";
  } else {
    out += json::serialize(v);
  }
}

}  // namespace

std::string devices_report_json(const Runtime& runtime) {
  json::object report;
  report["kiln_version"] = version();
  report["config"] = runtime.config().source();
  report["warnings"] = string_array(runtime.warnings());
  json::array plugins;
  for (const PluginRecord& p : runtime.plugins()) plugins.emplace_back(plugin_json(p));
  report["plugins"] = std::move(plugins);
  std::string out;
  write_indented(out, report, 0);
  return out + "\n";
}

}  // namespace kiln
