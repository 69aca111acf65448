// A host application: lists kiln's plugins and devices, then moves random
// bytes host -> device -> host on one device and checks them.
//   kiln-host-app [--config FILE] [DEVICE]     (DEVICE e.g. "c:0")
#include <kiln/runtime.hpp>

#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::optional<std::filesystem::path> config;
  std::string device_id;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) config = argv[++i];
    else device_id = arg;
  }

  kiln::Result<kiln::Runtime> runtime = kiln::Runtime::open(config);
  if (!runtime) {
    std::fprintf(stderr, "error: %s\n", runtime.error().to_string().c_str());
    return 1;
  }
  std::printf("config: %s\n", runtime->config().source().c_str());
  for (const kiln::PluginRecord& plugin : runtime->plugins()) {
    std::printf("plugin %-8s %-8s %s\n", plugin.name.c_str(), std::string(kiln::plugin_status_name(plugin.status)).c_str(),
                plugin.reason.c_str());
    for (const kiln::DeviceInfo& d : plugin.devices) std::printf("  device %s: %s\n", d.id.c_str(), d.name.c_str());
  }
  if (device_id.empty()) {
    const std::vector<kiln::DeviceInfo> devices = runtime->devices();
    if (devices.empty()) {
      std::fprintf(stderr, "error: no devices\n");
      return 1;
    }
    device_id = devices.front().id;
  }

  kiln::Result<kiln::Device> device = runtime->device(device_id);
  if (!device) {
    std::fprintf(stderr, "error: %s\n", device.error().to_string().c_str());
    return 1;
  }
  std::vector<std::byte> data(1 << 16);
  std::mt19937 rng(42);
  for (std::byte& b : data) b = static_cast<std::byte>(rng());
  kiln::Result<kiln::Buffer> buffer = device->allocate(data.size());
  if (!buffer) {
    std::fprintf(stderr, "error: %s\n", buffer.error().to_string().c_str());
    return 1;
  }
  std::vector<std::byte> back(data.size());
  if (kiln::Result<void> w = buffer->write(data); !w) {
    std::fprintf(stderr, "error: %s\n", w.error().to_string().c_str());
    return 1;
  }
  if (kiln::Result<void> r = buffer->read(back); !r) {
    std::fprintf(stderr, "error: %s\n", r.error().to_string().c_str());
    return 1;
  }
  if (back != data) {
    std::fprintf(stderr, "error: the bytes read back differ from those written\n");
    return 1;
  }
  std::printf("round trip ok: %zu bytes on %s\n", data.size(), device_id.c_str());
  return 0;
}
