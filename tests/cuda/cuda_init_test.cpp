// CUDA plugin init through the ABI: with a driver it lists devices with true
// info; without one (CI) it fails cleanly with UNAVAILABLE and the reason.
#include <gtest/gtest.h>

#include "support/abi_host.hpp"

#include <memory>
#include <string>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::plugin_path;

TEST(CudaInit, ReportsDevicesOrWhyThereAreNone) {
  std::unique_ptr<AbiPlugin> plugin;
  try {
    plugin = std::make_unique<AbiPlugin>(plugin_path("cuda"));
  } catch (const AbiError& e) {
    const std::string why = e.what();
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE) << why;
    EXPECT_TRUE(why.find("libcuda.so.1") != std::string::npos || why.find("cuInit") != std::string::npos) << why;
    std::cout << "[   INFO   ] no CUDA device here: " << why << "\n";
    return;
  }
  ASSERT_GE(plugin->device_count(), 1u);
  const kiln_device_info info = plugin->info(0);
  std::cout << "[   INFO   ] cuda:0 = " << info.name << ", " << info.driver_version << ", " << info.compute_units
            << " SMs, " << info.memory_bytes / (1u << 20) << " MiB, L2 " << info.cache_bytes[1] / (1u << 20)
            << " MiB, " << info.memory_bandwidth_gbps << " GB/s\n";
  EXPECT_STREQ(info.vendor, "NVIDIA");
  EXPECT_EQ(info.kind, KILN_DEVICE_KIND_GPU);
  EXPECT_EQ(info.warp_size, 32u);
  EXPECT_GE(info.max_local_threads, 1024u);
  EXPECT_EQ(info.max_local_dims[0], 1024u);
  EXPECT_GE(info.max_grid_dims[0], 65535u);
  EXPECT_GE(info.local_memory_bytes, 48u * 1024);
  EXPECT_GT(info.register_bytes, 0u);
  EXPECT_GT(info.compute_units, 0u);
  EXPECT_GT(info.clock_mhz, 0u);
  EXPECT_GT(info.cache_bytes[1], 0u);
  EXPECT_GT(info.memory_bandwidth_gbps, 100.0);
  EXPECT_GT(info.peak_gflops, 1000.0);
  EXPECT_NE(std::string(info.driver_version).find("sm_"), std::string::npos);
  EXPECT_EQ(std::string(info.pci_bus_id).size(), 12u) << info.pci_bus_id;  // "0000:65:00.0"
  EXPECT_TRUE(info.flags & KILN_DEVICE_CAN_COMPILE);
  EXPECT_TRUE(info.flags & KILN_DEVICE_DEVICE_TIMER);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_F16], 0u);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_BF16], 0u);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_F64], 0u);
}

TEST(CudaInit, AMissingDriverNamesTheLibrary) {
  try {
    AbiPlugin plugin(plugin_path("cuda"), R"({"driver_library": "libcuda-not-here.so.1"})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("libcuda-not-here.so.1 not found"), std::string::npos) << e.what();
  }
}

TEST(CudaInit, BadOptionsNameTheKey) {
  try {
    AbiPlugin plugin(plugin_path("cuda"), R"({"devices": [true]})");
    FAIL() << "init succeeded";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("devices"), std::string::npos) << e.what();
  }
}

TEST(CudaInit, QueryRefusesAnotherAbiMajor) {
  void* handle = dlopen(plugin_path("cuda").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto query = reinterpret_cast<kiln_plugin_query_fn>(dlsym(handle, KILN_PLUGIN_QUERY_SYMBOL));
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query(KILN_ABI_MAJOR + 1, 0), nullptr);
  const kiln_plugin_api* api = query(KILN_ABI_MAJOR, KILN_ABI_MINOR);
  ASSERT_NE(api, nullptr);
  EXPECT_STREQ(api->name, "cuda");
}
