// The CUDA plugin loaded and its first device opened for a test, or the test
// skipped (visibly) where no CUDA device is present. Shared by the device
// tests that drive the plugin through its ABI.
#pragma once

#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"

#include <memory>
#include <string>

namespace kiln::test {

class CudaPluginTest : public ::testing::Test {
 protected:
  void SetUp() override { open_plugin("{}"); }

  // (Re)loads the plugin with `options` (JSON) and opens its device 0.
  void open_plugin(const std::string& options) {
    try {
      plugin = std::make_unique<AbiPlugin>(plugin_path("cuda"), options);
    } catch (const AbiError& e) {
      if (e.status == KILN_STATUS_UNAVAILABLE) GTEST_SKIP() << "no CUDA device: " << e.what();
      throw;
    }
    device = plugin->open(0);
  }

  std::unique_ptr<AbiPlugin> plugin;
  kiln_device* device = nullptr;
};

}  // namespace kiln::test
