// kiln devices [--json]: every plugin the config names, with its devices or
// the exact reason it was skipped.
#include "commands.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace kiln::cli {

namespace {

std::string human_bytes(std::uint64_t bytes) {
  if (bytes == 0) return "?";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.{}f} {}", value, unit == 0 ? 0 : 1, units[unit]);
}

std::string join_widths(const kiln::DeviceInfo& d) {
  std::string out;
  for (std::uint32_t w : d.vector_widths()) out += (out.empty() ? "" : ",") + std::to_string(w);
  return out;
}

// What a CPU device's processor has for bf16 matrix products, and whether
// kiln uses it (DOT_BF16 claimed: the compiler targets it too).
std::string bf16_units(const kiln::DeviceInfo& d) {
  std::string out;
  if (d.has_feature(KILN_FEATURE_CPU_AVX512_BF16))
    out += d.supports_op_kind(KILN_OP_DOT_BF16, KILN_DTYPE_F32) ? "avx512_bf16 (dot_bf16)" : "avx512_bf16 (not targeted)";
  if (d.has_feature(KILN_FEATURE_CPU_AMX_BF16)) out += std::string(out.empty() ? "" : " ") + "amx_bf16 (unused)";
  if (out.empty() && d.kind == kiln::DeviceKind::Cpu) out = "no bf16 units";
  return out.empty() ? "" : ", " + out;
}

void print_table(const kiln::Runtime& runtime) {
  fmt::print("config: {}\n", runtime.config().source());
  for (const std::string& w : runtime.warnings()) fmt::print("warning: {}\n", w);
  std::size_t name_width = 6;
  for (const kiln::PluginRecord& p : runtime.plugins()) name_width = std::max(name_width, p.name.size());
  fmt::print("\n{:<{}}  {:<8}  {:<8}  {:<7}  {}\n", "PLUGIN", name_width, "STATUS", "VERSION", "COMPILE", "LIBRARY");
  for (const kiln::PluginRecord& p : runtime.plugins()) {
    const bool loaded = p.status == kiln::PluginStatus::Loaded;
    fmt::print("{:<{}}  {:<8}  {:<8}  {:<7}  {}\n", p.name, name_width, kiln::plugin_status_name(p.status),
               p.version.empty() ? "-" : p.version, loaded ? (p.can_compile() ? "yes" : "no") : "-",
               p.library.empty() ? "(none)" : p.library.string());
    if (!loaded) {
      // The library column already shows the path a "not found" names.
      const bool not_found = p.reason == "library not found: " + p.library.string();
      fmt::print("    reason: {}\n", not_found ? "library not found (not built, or not installed there)" : p.reason);
    }
    for (const kiln::DeviceInfo& d : p.devices)
      fmt::print("    {}  {:<11} {}  [{} units, warp {}, {} threads/group, {}, vectors {}{}{}]\n", d.id,
                 kiln::device_kind_name(d.kind), d.name, d.compute_units, d.warp_size, d.max_local_threads,
                 human_bytes(d.memory_bytes), join_widths(d), bf16_units(d), d.can_compile() ? "" : ", cannot compile yet");
    if (loaded && p.devices.empty()) fmt::print("    (no devices)\n");
    for (const std::string& w : p.warnings) fmt::print("    warning: {}\n", w);
    for (const kiln::LogLine& line : p.log)
      // Info lines too: they say what a plugin found and what it set up
      // (e.g. the environment variables it set for its driver).
      if (line.level >= kiln::LogLevel::Info)
        fmt::print("    {}: {}\n", kiln::log_level_name(line.level), line.text);
  }
}

}  // namespace

void add_devices_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand("devices", "List the plugins the config names and their devices");
  auto json = std::make_shared<bool>(false);
  command->add_flag("--json", *json, "Print one JSON object instead of a table");
  command->callback([&global, json] {
    const kiln::Runtime runtime = open_runtime(global);
    if (*json) {
      fmt::print("{}", kiln::devices_report_json(runtime));
    } else {
      print_table(runtime);
    }
  });
}

}  // namespace kiln::cli
