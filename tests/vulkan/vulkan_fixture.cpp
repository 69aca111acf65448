#include "vulkan_fixture.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace kiln::test {

void prefer_lavapipe_for_tests() {
  if (std::getenv("VK_DRIVER_FILES") != nullptr || std::getenv("VK_ICD_FILENAMES") != nullptr ||
      std::getenv("KILN_VULKAN_TEST_ALL_DRIVERS") != nullptr)
    return;
  for (const char* path : {"/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", "/usr/share/vulkan/icd.d/lvp_icd.json"}) {
    if (std::filesystem::exists(path)) {
      setenv("VK_DRIVER_FILES", path, 0);
      return;
    }
  }
}

VulkanSession& vulkan_session() {
  static VulkanSession session = [] {
    VulkanSession s;
    prefer_lavapipe_for_tests();
    const std::string path = plugin_path("vulkan");
    if (!std::filesystem::exists(path)) {
      s.skip_reason = "the vulkan plugin was not built (" + path + ")";
      return s;
    }
    try {
      s.plugin = std::make_unique<AbiPlugin>(path, "{}");
      s.info = s.plugin->info(0);
      s.device = s.plugin->open(0);
    } catch (const AbiError& e) {
      if (e.status != KILN_STATUS_UNAVAILABLE) throw;
      s.plugin.reset();
      s.skip_reason = std::string("no usable Vulkan: ") + e.what();
    }
    return s;
  }();
  return session;
}

std::string private_plugin_copy() {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln-vulkan-test-" + std::to_string(getpid()));
  static int copies = 0;
  static const struct Cleanup {
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup;
  std::filesystem::create_directories(dir);
  const auto copy = dir / ("libkiln-vulkan-" + std::to_string(copies++) + ".so");
  std::filesystem::copy_file(plugin_path("vulkan"), copy, std::filesystem::copy_options::overwrite_existing);
  return copy.string();
}

}  // namespace kiln::test
