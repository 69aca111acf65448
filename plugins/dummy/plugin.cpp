// The dummy plugin's ABI table, init and shutdown.
#include "dummy.hpp"
#include "kiln/sdk/host_memory.hpp"
#include "kiln/sdk/plugin_entry.hpp"

namespace kiln::dummy {

namespace {

std::unique_ptr<PluginState> g_state;

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [](const sdk::Options& options) { set_state(parse_options(options)); });
}

void shutdown() { g_state.reset(); }

constexpr kiln_plugin_api kApi = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = kPluginName,
    .version = kPluginVersion,
    .description = "simulated device from config options: runs kernels on the reference interpreter, "
                   "models their time",
    .init = init,
    .shutdown = shutdown,
    .device_count = device_count,
    .device_info = device_info,
    .device_open = device_open,
    .device_close = device_close,
    .device_synchronize = sdk::host_device_synchronize,
    .memory_info = memory_info,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_host_pointer = sdk::host_buffer_host_pointer,
    .copy_to_device = sdk::host_copy_to_device,
    .copy_to_host = sdk::host_copy_to_host,
    .copy_device_to_device = sdk::host_copy_device_to_device,
    .event_wait = sdk::host_event_wait,
    .event_release = sdk::host_event_release,
    .compile = compile,
    .program_source = program_source,
    .program_release = program_release,
    .launch = launch,
    .launch_timed = launch_timed,
    .cache_key = cache_key,
    .extensions = nullptr,
    .shutdown2 = nullptr,      // the 1.0 forms above are used
    .device_close2 = nullptr,
    .buffer_free2 = nullptr,
    .event_query = sdk::host_event_query,
};

}  // namespace

PluginState& state() {
  if (!g_state) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "the dummy plugin is not initialised (init not called or failed)");
  return *g_state;
}

void set_state(std::unique_ptr<PluginState> state) { g_state = std::move(state); }

Device& device_of(kiln_device* handle) {
  if (handle == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "device is NULL");
  for (const auto& device : state().devices)
    if (reinterpret_cast<kiln_device*>(device.get()) == handle) return *device;
  sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "not a device of the dummy plugin");
}

std::uint64_t hash_bytes(const void* data, std::size_t size, std::uint64_t h) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace kiln::dummy

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_max_minor;  // minor 0 is all this plugin uses
  return host_major == KILN_ABI_MAJOR ? &kiln::dummy::kApi : nullptr;
}
