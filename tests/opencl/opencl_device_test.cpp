// OpenCL plugin: init, options, discovery, DeviceInfo fields, cache key.
#include <gtest/gtest.h>

#include "support/abi_host.hpp"

#include <string>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::plugin_path;

namespace {

std::string opencl_path() { return plugin_path("opencl"); }

}  // namespace

TEST(OpenclDevice, TableIdentifiesThePlugin) {
  AbiPlugin plugin(opencl_path());
  EXPECT_STREQ(plugin.api().name, "opencl");
  EXPECT_EQ(plugin.api().struct_size, KILN_PLUGIN_API_STRUCT_SIZE);
  EXPECT_EQ(plugin.api().buffer_host_pointer, nullptr);  // device memory is not host memory
}

TEST(OpenclDevice, DiscoveryFillsSaneInfo) {
  AbiPlugin plugin(opencl_path());
  const std::uint32_t n = plugin.device_count();
  ASSERT_GE(n, 1u);
  for (std::uint32_t i = 0; i < n; ++i) {
    const kiln_device_info info = plugin.info(i);
    SCOPED_TRACE(info.name);
    EXPECT_GT(std::string(info.name).size(), 0u);
    EXPECT_GT(std::string(info.vendor).size(), 0u);
    EXPECT_GT(std::string(info.driver_version).size(), 0u);
    EXPECT_NE(info.kind, KILN_DEVICE_KIND_UNKNOWN);
    EXPECT_TRUE(info.flags & KILN_DEVICE_CAN_COMPILE);
    EXPECT_TRUE(info.flags & KILN_DEVICE_DEVICE_TIMER);
    EXPECT_FALSE(info.flags & KILN_DEVICE_HOST_MEMORY);
    EXPECT_GT(info.memory_bytes, 1u << 20);
    EXPECT_GE(info.local_memory_bytes, 16u * 1024);  // the OpenCL 1.2 minimum for full profiles
    EXPECT_GE(info.max_local_threads, 1u);
    for (int axis = 0; axis < 3; ++axis) {
      EXPECT_GE(info.max_local_dims[axis], 1u);
      EXPECT_LE(info.max_local_dims[axis], info.max_local_threads);
      EXPECT_GE(info.max_grid_dims[axis], 65535u);
    }
    EXPECT_GE(info.compute_units, 1u);
    EXPECT_GE(info.warp_size, 1u);
    if (info.kind == KILN_DEVICE_KIND_CPU) {
      EXPECT_EQ(info.warp_size, 1u);
    }
    EXPECT_GT(info.clock_mhz, 0u);
    EXPECT_TRUE(info.vector_widths & (1u << 1));
    EXPECT_TRUE(info.vector_widths & (1u << 4));
    EXPECT_GT(info.peak_gflops, 0.0);
    // Every device computes f32 and i32 with the whole IR; f16/bf16 are
    // stored as 16 bits and computed in f32, so they are there too.
    EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_UNARY(KILN_UNARY_EXP2));
    EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_BINARY(KILN_BINARY_POW));
    EXPECT_FALSE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_BINARY(KILN_BINARY_SHL));
    EXPECT_TRUE(info.dtype_ops[KILN_DTYPE_I32] & KILN_CAP_BINARY(KILN_BINARY_SHL));
    EXPECT_NE(info.dtype_ops[KILN_DTYPE_F16], 0u);
    EXPECT_NE(info.dtype_ops[KILN_DTYPE_BF16], 0u);
    EXPECT_EQ(info.dtype_ops[KILN_DTYPE_INVALID], 0u);
    EXPECT_EQ(info.pci_bus_id[sizeof(info.pci_bus_id) - 1], '\0');
  }
}

TEST(OpenclDevice, DeviceInfoRejectsABadIndex) {
  AbiPlugin plugin(opencl_path());
  try {
    plugin.info(plugin.device_count());
    FAIL() << "no error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("index"), std::string::npos) << e.what();
  }
}

TEST(OpenclDevice, OpeningTwiceGivesTheSameHandle) {
  AbiPlugin plugin(opencl_path());
  kiln_device* a = plugin.open(0);
  kiln_device* b = plugin.open(0);
  EXPECT_EQ(a, b);
  kiln_cache_key_args key{};
  key.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  key.device = a;
  kiln::test::check(plugin.api().cache_key(&key));
  ASSERT_NE(key.key, nullptr);
  EXPECT_NE(std::string(key.key).find("opencl"), std::string::npos);
  EXPECT_NE(std::string(key.key).find(plugin.info(0).name), std::string::npos);
  kiln::test::check(plugin.api().device_synchronize(a));
  plugin.api().device_close(a);
}

TEST(OpenclDevice, FiltersThatMatchNothingLeaveNoDeviceAndSayWhy) {
  try {
    AbiPlugin plugin(opencl_path(), R"({"devices": ["no such device anywhere"]})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("not in option 'devices'"), std::string::npos) << e.what();
  }
  try {
    AbiPlugin plugin(opencl_path(), R"({"platforms": ["no such platform"]})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("not in option 'platforms'"), std::string::npos) << e.what();
  }
}

TEST(OpenclDevice, BadOptionsNameTheKey) {
  try {
    AbiPlugin plugin(opencl_path(), R"({"devices": "not a list"})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("devices"), std::string::npos) << e.what();
  }
}

TEST(OpenclDevice, UnknownOptionsAreWarnings) {
  kiln::test::test_log_lines().clear();
  AbiPlugin plugin(opencl_path(), R"({"build_options": "", "colour": "blue", /* comment */})");
  EXPECT_GT(kiln::test::test_log_count("colour"), 0u);
}

TEST(OpenclDevice, AMissingLoaderIsUnavailableWithTheReason) {
  try {
    AbiPlugin plugin(opencl_path(), R"({"library": "libOpenCL-does-not-exist.so.9"})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("libOpenCL-does-not-exist.so.9"), std::string::npos) << e.what();
  }
}
