// vulkan_fixture.hpp - one Vulkan plugin and one opened device shared by the
// tests of this binary (instance creation is the slow part on lavapipe).
// Tests skip, saying why, when the plugin finds no Vulkan loader or device.
#pragma once

#include "support/abi_host.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kiln::test {

// Points the Vulkan loader at lavapipe alone when it is installed (halves
// instance creation: PLATFORM.md), unless the environment already chose
// drivers or KILN_VULKAN_TEST_ALL_DRIVERS is set. The plugin never does this.
void prefer_lavapipe_for_tests();

struct VulkanSession {
  std::unique_ptr<AbiPlugin> plugin;
  kiln_device* device = nullptr;
  kiln_device_info info{};
  std::string skip_reason;  // non-empty: no usable plugin or device
};

// Loads and inits the plugin once (options "{}"), opens device 0.
VulkanSession& vulkan_session();

// A copy of the plugin library under a fresh name, so dlopen gives it its
// own static state: tests init it with other options while the shared
// session stays untouched. The file is removed at exit (the mapping stays).
std::string private_plugin_copy();

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VulkanSession& s = vulkan_session();
    if (!s.skip_reason.empty()) GTEST_SKIP() << s.skip_reason;
    plugin = s.plugin.get();
    device = s.device;
    info = s.info;
  }
  const AbiPlugin* plugin = nullptr;
  kiln_device* device = nullptr;
  kiln_device_info info{};
};

}  // namespace kiln::test
