#include "kiln/sdk/host_cpu.hpp"

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string_view>

namespace kiln::sdk {

namespace {

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const auto end = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(begin, end - begin + 1));
}

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

// "48K", "2048K", "32M" -> bytes.
std::uint64_t parse_size(const std::string& text) {
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + static_cast<unsigned>(text[i] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  else if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  else if (i < text.size() && (text[i] == 'G' || text[i] == 'g')) value <<= 30;
  return value;
}

void read_cpuinfo(HostCpu& cpu) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool seen_flags = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      if (!cpu.name.empty()) break;  // end of the first processor's block
      continue;
    }
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string value = trim(std::string_view(line).substr(colon + 1));
    if ((key == "model name" || key == "Hardware") && cpu.name.empty()) cpu.name = value;
    else if ((key == "vendor_id" || key == "CPU implementer") && cpu.vendor.empty()) cpu.vendor = value;
    else if (key == "cpu MHz" && cpu.clock_mhz == 0) cpu.clock_mhz = static_cast<unsigned>(std::stod(value) + 0.5);
    else if (key == "CPU part" && cpu.name.empty()) cpu.name = "Arm CPU part " + value;
    else if (key == "flags" && !seen_flags) {
      seen_flags = true;
      const std::string padded = " " + value + " ";
      cpu.avx512_bf16 = padded.find(" avx512_bf16 ") != std::string::npos;
      cpu.amx_bf16 = padded.find(" amx_bf16 ") != std::string::npos;
    }
  }
}

}  // namespace

HostCpu read_host_cpu() {
  HostCpu cpu;
  try {
    read_cpuinfo(cpu);
  } catch (const std::exception&) {
    // A malformed number in /proc/cpuinfo leaves the fields it could not read at 0.
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) cpu.cores = static_cast<unsigned>(CPU_COUNT(&set));

  const std::filesystem::path cpu0 = "/sys/devices/system/cpu/cpu0";
  const std::string max_khz = read_line(cpu0 / "cpufreq" / "cpuinfo_max_freq");
  if (!max_khz.empty()) cpu.clock_mhz = static_cast<unsigned>(parse_size(max_khz) / 1000);

  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu0 / "cache", ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string level = read_line(entry.path() / "level");
    const std::string type = read_line(entry.path() / "type");
    const std::uint64_t size = parse_size(read_line(entry.path() / "size"));
    if (type == "Instruction") continue;
    if (level == "1") cpu.cache_bytes[0] = size;
    if (level == "2") cpu.cache_bytes[1] = size;
    if (level == "3") cpu.cache_bytes[2] = size;
  }
  return cpu;
}

}  // namespace kiln::sdk
