// Discovery: device info fields, and options.
#include "vulkan_fixture.hpp"

#include <kiln/sdk/wire.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

namespace kiln::test {
namespace {

TEST_F(VulkanTest, DeviceInfoFieldsAreSane) {
  std::printf("device: %s | vendor %s | driver %s | pci '%s' | kind %u | flags 0x%x | memory %.1f GiB | local %llu B |"
              " warp %u | max local %u (%u,%u,%u) | compute units %u\n",
              info.name, info.vendor, info.driver_version, info.pci_bus_id, info.kind, info.flags,
              static_cast<double>(info.memory_bytes) / (1 << 30), static_cast<unsigned long long>(info.local_memory_bytes),
              info.warp_size, info.max_local_threads, info.max_local_dims[0], info.max_local_dims[1],
              info.max_local_dims[2], info.compute_units);
  EXPECT_GE(plugin->device_count(), 1u);
  EXPECT_GT(std::string(info.name).size(), 0u);
  EXPECT_GT(std::string(info.vendor).size(), 0u);
  EXPECT_GT(std::string(info.driver_version).size(), 0u);
  EXPECT_NE(info.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_VIRTUAL));
  EXPECT_TRUE(info.flags & KILN_DEVICE_CAN_COMPILE);
  EXPECT_FALSE(info.flags & KILN_DEVICE_HOST_MEMORY);
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_GE(info.local_memory_bytes, 16384u);  // Vulkan's required minimum
  EXPECT_GE(info.max_local_threads, 128u);
  EXPECT_GE(info.max_local_dims[0], 128u);
  EXPECT_GE(info.max_local_dims[2], 64u);
  EXPECT_GE(info.max_grid_dims[0], 65535u);
  EXPECT_GE(info.warp_size, 1u);
  EXPECT_EQ(info.vector_widths, (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4));
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_INVALID], 0u);
  EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_BINARY(KILN_BINARY_ADD));
  EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_UNARY(KILN_UNARY_EXP2));
  EXPECT_FALSE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_BINARY(KILN_BINARY_SHL));
  EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_I32] & KILN_CAP_BINARY(KILN_BINARY_SHL));
  if (info.dtype_ops[KILN_DTYPE_F64] != 0) {
    // GLSL has no double exp/sin/pow: the plugin must not claim them.
    EXPECT_FALSE(info.dtype_ops[KILN_DTYPE_F64] & KILN_CAP_UNARY(KILN_UNARY_EXP));
    EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_F64] & KILN_CAP_UNARY(KILN_UNARY_SQRT));
  }
}

TEST_F(VulkanTest, LavapipeFacts) {
  if (std::string(info.name).find("llvmpipe") == std::string::npos) GTEST_SKIP() << "not lavapipe: " << info.name;
  EXPECT_EQ(info.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_CPU));
  EXPECT_EQ(std::string(info.vendor), "Mesa");
  EXPECT_NE(std::string(info.driver_version).find("llvmpipe"), std::string::npos) << info.driver_version;
  EXPECT_TRUE(info.flags & KILN_DEVICE_DEVICE_TIMER);
  EXPECT_EQ(info.local_memory_bytes, 32768u);
  EXPECT_EQ(info.max_local_threads, 1024u);
  // lavapipe supports every kiln dtype.
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) EXPECT_NE(info.dtype_ops[dt], 0u) << sdk::dtype_name(dt);
}

TEST_F(VulkanTest, DeviceOpenTwiceGivesTheSameHandle) {
  EXPECT_EQ(plugin->open(0), device);
}

TEST_F(VulkanTest, DeviceIndexOutOfRangeIsAnError) {
  try {
    plugin->info(1000);
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
}

// Options tests init a private copy of the plugin (vulkan_fixture.hpp).
class VulkanOptionsTest : public VulkanTest {
 protected:
  static std::string private_copy() { return private_plugin_copy(); }
};

TEST_F(VulkanOptionsTest, UnknownOptionIsAWarning) {
  test_log_lines().clear();
  AbiPlugin p(private_copy(), R"({"devices": [0], "no_such_option": 1})");
  EXPECT_EQ(p.device_count(), 1u);
  EXPECT_GT(test_log_count("no_such_option"), 0u);
}

TEST_F(VulkanOptionsTest, DeviceFilterByName) {
  const std::string name = info.name;
  AbiPlugin p(private_copy(), R"({"devices": [")" + name.substr(0, 4) + R"("]})");
  EXPECT_GE(p.device_count(), 1u);
  EXPECT_EQ(std::string(p.info(0).name), name);
}

TEST_F(VulkanOptionsTest, FilterMatchingNothingIsUnavailable) {
  try {
    AbiPlugin p(private_copy(), R"({"devices": ["no such device anywhere"]})");
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("devices"), std::string::npos) << e.what();
  }
}

TEST_F(VulkanOptionsTest, BadOptionTypesNameTheKey) {
  for (const char* options : {R"({"devices": 3})", R"({"validation": "yes"})", R"({"devices": [)", R"({"wait_spin_us": -5})"}) {
    try {
      AbiPlugin p(private_copy(), options);
      FAIL() << "expected an error for " << options;
    } catch (const AbiError& e) {
      EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT) << options;
      EXPECT_GT(std::string(e.what()).size(), 0u);
    }
  }
}

}  // namespace
}  // namespace kiln::test
