// The "plugin table" case: what the kit (and any host) needs of the table
// to call init, then to test the devices (of a table of this ABI major: kit.cpp turns
// another major away as "not loaded", as the runtime's loader does). The struct_size floor is ABI 1.0's table (up to
// cache_key): later minors only append, so a 1.0 plugin stays conformant.
#include "cases.hpp"

#include <regex>

namespace kiln::conformance::detail {

Verdict check_table(const kiln_plugin_api& api, bool before_init) {
  constexpr std::size_t kMinSize = KILN_STRUCT_SIZE(kiln_plugin_api, cache_key);
  if (api.struct_size < kMinSize)
    return Verdict::fail("struct_size is " + std::to_string(api.struct_size) + ", smaller than ABI 1.0's " +
                         std::to_string(kMinSize));
  Problems problems;
  const auto expect = [&](bool ok, const std::string& what) { problems.expect(ok, what); };
  expect(api.name != nullptr && std::regex_match(api.name, std::regex("[a-z0-9_-]+")),
         "name must be [a-z0-9_-]+, is " + (api.name != nullptr ? "\"" + std::string(api.name) + "\"" : "NULL"));
  expect(api.version != nullptr, "version is NULL");
  // Before init, what init needs; after it, every function the kit calls
  // but those of kernels (missing_kernel_functions) and buffer_host_pointer
  // (checked per device: only HOST_MEMORY devices need it). A plugin whose init fails UNAVAILABLE is judged on the first.
  expect(api.init != nullptr, "init is NULL");
  expect(api.device_count != nullptr, "device_count is NULL");
  expect(api.device_info != nullptr, "device_info is NULL");
  if (before_init) return problems.verdict();
  const std::pair<const char*, bool> functions[] = {
      {"device_open", api.device_open != nullptr},
      {"buffer_alloc", api.buffer_alloc != nullptr},
      {"buffer_free", api.buffer_free != nullptr},
      {"copy_to_device", api.copy_to_device != nullptr},
      {"copy_to_host", api.copy_to_host != nullptr},
      {"event_wait", api.event_wait != nullptr},
      {"event_release", api.event_release != nullptr},
  };
  for (const auto& [name, present] : functions) expect(present, std::string(name) + " is NULL");
  return problems.verdict();
}

// A plugin that does not compile yet may leave these NULL (the example
// plugin does); a CAN_COMPILE device may not ("device info" checks that).
std::string missing_kernel_functions(const kiln_plugin_api& api) {
  std::string missing;
  const std::pair<const char*, bool> functions[] = {
      {"compile", api.compile != nullptr},
      {"program_source", api.program_source != nullptr},
      {"program_release", api.program_release != nullptr},
      {"launch", api.launch != nullptr},
  };
  for (const auto& [name, present] : functions)
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return missing;
}

}  // namespace kiln::conformance::detail
