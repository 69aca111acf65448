// The dummy plugin's ABI table, init, shutdown and cache key.
#include "dummy.hpp"

#include "kiln/sdk/handles.hpp"
#include "kiln/sdk/plugin_entry.hpp"
#include "kiln/sdk/plugin_state.hpp"
#include "kiln/sdk/plugin_table.hpp"

namespace kiln::dummy {

namespace {

sdk::PluginState<PluginState> g_state(kPluginName);

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [](const sdk::Options& options) { g_state.set(parse_options(options)); });
}

void shutdown() { g_state.reset(); }

// Each simulated device has its own key: its options are part of it.
kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::answer_cache_key(raw, [](kiln_device* device) -> const std::string& { return device_of(device).cache_key; });
}


}  // namespace

PluginState& state() { return g_state.get(); }

Device& device_of(kiln_device* handle) { return sdk::checked_device(handle, state().devices, ""); }

kiln_plugin_api make_table() {
  return sdk::plugin_table({.name = kPluginName,
                            .version = kPluginVersion,
                            .description = "simulated device from config options: runs kernels on the reference "
                                           "interpreter, models their time"},
                           {init, shutdown, cache_key}, kDeviceFunctions, kPoolFunctions, kCompileFunctions,
                           kLaunchFunctions);
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

KILN_SDK_PLUGIN_QUERY(kiln::dummy::make_table)
