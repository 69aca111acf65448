#include "kiln/runtime/device_info.hpp"
#include "kiln/runtime/launch.hpp"
#include "kiln/runtime/plugin_record.hpp"
#include "plugin_text.hpp"

#include <kiln/sdk/capabilities.hpp>

#include <cstring>

namespace kiln {

namespace {

template <std::size_t N>
std::string fixed_string(const char (&chars)[N]) {
  return detail::sanitize_plugin_text(std::string_view(chars, strnlen(chars, N)), detail::TextKind::Line);
}

}  // namespace

std::string_view device_kind_name(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::Accelerator: return "accelerator";
    case DeviceKind::Virtual: return "virtual";
    case DeviceKind::Unknown: break;
  }
  return "unknown";
}

std::vector<std::uint32_t> DeviceInfo::vector_widths() const {
  std::vector<std::uint32_t> widths{1};
  for (std::uint32_t n = 2; n < 32; ++n)
    if ((vector_width_mask >> n) & 1u) widths.push_back(n);
  return widths;
}

namespace {
bool mask_has(std::uint32_t mask, unsigned dtype) { return dtype < 32 && ((mask >> dtype) & 1u) != 0; }
}  // namespace

bool DeviceInfo::supports_op_kind(unsigned kind, unsigned dtype) const {
  return kind < KILN_CAP_SLOTS && mask_has(op_kind_dtypes[kind], dtype);
}
bool DeviceInfo::supports_unary(unsigned op, unsigned dtype) const {
  return op < KILN_CAP_SLOTS && mask_has(unary_dtypes[op], dtype);
}
bool DeviceInfo::supports_binary(unsigned op, unsigned dtype) const {
  return op < KILN_CAP_SLOTS && mask_has(binary_dtypes[op], dtype);
}
bool DeviceInfo::has_feature(unsigned feature) const {
  return KILN_FEATURE_WORD(feature) < KILN_FEATURE_WORDS &&
         (features[KILN_FEATURE_WORD(feature)] & KILN_FEATURE_MASK(feature)) != 0;
}

DeviceInfo DeviceInfo::from_abi(const kiln_device_info& given, std::string plugin, std::uint32_t index) {
  // A plugin of minor 0 wrote no capability arrays: derive them from its
  // per-dtype words, as plugin.h promises.
  kiln_device_info in = given;
  sdk::normalize_capabilities(in);
  DeviceInfo out;
  out.id = plugin + ":" + std::to_string(index);
  out.plugin = std::move(plugin);
  out.index = index;
  out.name = fixed_string(in.name);
  out.vendor = fixed_string(in.vendor);
  out.driver_version = fixed_string(in.driver_version);
  out.pci_bus_id = fixed_string(in.pci_bus_id);
  out.kind = in.kind <= KILN_DEVICE_KIND_VIRTUAL ? static_cast<DeviceKind>(in.kind) : DeviceKind::Unknown;
  out.flags = in.flags;
  out.memory_bytes = in.memory_bytes;
  out.local_memory_bytes = in.local_memory_bytes;
  out.register_bytes = in.register_bytes;
  out.max_register_bytes = in.max_register_bytes != 0 ? in.max_register_bytes : kDefaultMaxRegisterBytes;
  for (int axis = 0; axis < 3; ++axis) {
    out.max_grid_dims[axis] = in.max_grid_dims[axis];
    out.max_local_dims[axis] = in.max_local_dims[axis];
    out.cache_bytes[axis] = in.cache_bytes[axis];
  }
  out.max_local_threads = in.max_local_threads;
  out.compute_units = in.compute_units;
  out.warp_size = in.warp_size;
  out.clock_mhz = in.clock_mhz;
  out.vector_width_mask = in.vector_widths | 2u;  // width 1 is always supported
  std::memcpy(out.op_kind_dtypes.data(), in.op_kind_dtypes, sizeof(in.op_kind_dtypes));
  std::memcpy(out.unary_dtypes.data(), in.unary_dtypes, sizeof(in.unary_dtypes));
  std::memcpy(out.binary_dtypes.data(), in.binary_dtypes, sizeof(in.binary_dtypes));
  std::memcpy(out.features.data(), in.features, sizeof(in.features));
  out.peak_gflops = in.peak_gflops;
  out.memory_bandwidth_gbps = in.memory_bandwidth_gbps;
  return out;
}

std::string_view plugin_status_name(PluginStatus status) {
  switch (status) {
    case PluginStatus::Loaded: return "loaded";
    case PluginStatus::Skipped: return "skipped";
    case PluginStatus::Disabled: return "disabled";
  }
  return "unknown";
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "unknown";
}

std::string_view timer_kind_name(TimerKind kind) {
  switch (kind) {
    case TimerKind::Host: return "host";
    case TimerKind::Device: return "device";
    case TimerKind::Model: return "model";
  }
  return "unknown";
}

bool PluginRecord::can_compile() const {
  for (const DeviceInfo& d : devices)
    if (d.can_compile()) return true;
  return false;
}

}  // namespace kiln
