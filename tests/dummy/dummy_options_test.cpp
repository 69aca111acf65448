// The dummy's DeviceInfo comes entirely from its options; bad options fail
// init naming the key; unknown keys are warned about; memory_bytes is a budget.
#include <gtest/gtest.h>

#include <cstring>

#include "dummy_util.hpp"
#include "kiln/sdk/capabilities.hpp"
#include "kiln/sdk/op_rules.hpp"

using namespace kiln;
using namespace kiln::test;

TEST(DummyOptions, DefaultIsOneGpuShapedDevice) {
  auto plugin = load_dummy();
  EXPECT_STREQ(plugin->api().name, "dummy");
  ASSERT_EQ(plugin->device_count(), 1u);
  const kiln_device_info info = plugin->info(0);
  EXPECT_STREQ(info.name, "dummy-gpu");
  EXPECT_EQ(info.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_VIRTUAL));
  EXPECT_EQ(info.warp_size, 32u);
  EXPECT_EQ(info.max_local_threads, 1024u);
  EXPECT_GT(info.compute_units, 1u);
  EXPECT_EQ(info.flags, KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_NATIVE_EXP2);
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) EXPECT_EQ(info.dtype_ops[dt], sdk::all_op_caps(dt)) << dt;
  EXPECT_GT(info.peak_gflops, 0.0);
  EXPECT_GT(info.memory_bandwidth_gbps, 0.0);
}

TEST(DummyOptions, EveryInfoFieldComesFromTheOptions) {
  auto plugin = load_dummy(R"({
    "simulate": [
      {"name": "sim-a", "vendor": "acme", "driver_version": "9.9", "pci_bus_id": "0000:01:00.0",
       "kind": "gpu", "warp_size": 64, "max_local_threads": 512, "max_local_dims": [512, 256, 8],
       "max_grid_dims": [1000, 2000, 3000], "local_memory_bytes": 65536, "register_bytes": 2048,
       "compute_units": 7, "clock_mhz": 1234, "memory_bytes": 123456789, "cache_bytes": [1, 2, 3],
       "vector_widths": [2, 8], "native_exp2": false, "dtypes": ["f32", "f16", "u8"],
       "unsupported_ops": {"f16": ["exp", "pow"], "u8": ["shl"]},
       "peak_gflops": 4321.5, "memory_bandwidth_gbps": 345.25},
      {"name": "sim-b", "kind": "cpu", "warp_size": 1}
    ],
    "noise": 0.1, "seed": 7
  })");
  ASSERT_EQ(plugin->device_count(), 2u);
  const kiln_device_info a = plugin->info(0);
  EXPECT_STREQ(a.name, "sim-a");
  EXPECT_STREQ(a.vendor, "acme");
  EXPECT_STREQ(a.driver_version, "9.9");
  EXPECT_STREQ(a.pci_bus_id, "0000:01:00.0");
  EXPECT_EQ(a.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_GPU));
  EXPECT_EQ(a.flags, KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY);  // no native exp2
  EXPECT_EQ(a.warp_size, 64u);
  EXPECT_EQ(a.max_local_threads, 512u);
  EXPECT_EQ(a.max_local_dims[0], 512u);
  EXPECT_EQ(a.max_local_dims[1], 256u);
  EXPECT_EQ(a.max_local_dims[2], 8u);
  EXPECT_EQ(a.max_grid_dims[0], 1000u);
  EXPECT_EQ(a.max_grid_dims[1], 2000u);
  EXPECT_EQ(a.max_grid_dims[2], 3000u);
  EXPECT_EQ(a.local_memory_bytes, 65536u);
  EXPECT_EQ(a.register_bytes, 2048u);
  EXPECT_EQ(a.compute_units, 7u);
  EXPECT_EQ(a.clock_mhz, 1234u);
  EXPECT_EQ(a.memory_bytes, 123456789u);
  EXPECT_EQ(a.cache_bytes[0], 1u);
  EXPECT_EQ(a.cache_bytes[1], 2u);
  EXPECT_EQ(a.cache_bytes[2], 3u);
  EXPECT_EQ(a.vector_widths, (1u << 1) | (1u << 2) | (1u << 8));  // 1 is always there
  EXPECT_EQ(a.peak_gflops, 4321.5);
  EXPECT_EQ(a.memory_bandwidth_gbps, 345.25);
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32));
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_F16],
            sdk::all_op_caps(KILN_DTYPE_F16) & ~KILN_CAP_UNARY(KILN_UNARY_EXP) & ~KILN_CAP_BINARY(KILN_BINARY_POW));
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_U8], sdk::all_op_caps(KILN_DTYPE_U8) & ~KILN_CAP_BINARY(KILN_BINARY_SHL));
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_F64], 0u);
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_I32], 0u);
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_I64], sdk::all_op_caps(KILN_DTYPE_I64));  // the index type: always
  EXPECT_EQ(a.dtype_ops[KILN_DTYPE_BOOL], sdk::all_op_caps(KILN_DTYPE_BOOL));
  const kiln_device_info b = plugin->info(1);
  EXPECT_STREQ(b.name, "sim-b");
  EXPECT_EQ(b.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_CPU));
  EXPECT_EQ(b.warp_size, 1u);
}

// The ABI 1.1 math ops: claimed on every float dtype by default (the
// interpreter runs them), none with "math_ops": false, one by one through
// unsupported_ops; never on integers, and never in the 1.0 word.
TEST(DummyOptions, MathOpsAreClaimedUnlessTurnedOff) {
  auto plugin = load_dummy(
      R"({"simulate": [{"name": "on"}, {"name": "off", "math_ops": false}, {"name": "no-erf", "unsupported_ops": {"f32": ["erf"]}}]})");
  const kiln_device_info on = plugin->info(0), off = plugin->info(1), no_erf = plugin->info(2);
  for (unsigned u = KILN_UNARY_TANH; u < KILN_UNARY_COUNT; ++u) {
    for (unsigned dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F64}) {
      EXPECT_TRUE(sdk::has_unary(on, dt, u)) << sdk::unary_name(u);
      EXPECT_FALSE(sdk::has_unary(off, dt, u)) << sdk::unary_name(u);
    }
    EXPECT_FALSE(sdk::has_unary(on, KILN_DTYPE_I32, u)) << sdk::unary_name(u);
    EXPECT_EQ(sdk::has_unary(no_erf, KILN_DTYPE_F32, u), u != KILN_UNARY_ERF) << sdk::unary_name(u);
  }
  EXPECT_EQ(on.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32));
  EXPECT_EQ(off.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32));
}

TEST(DummyOptions, InfoHonoursAnOlderHostsStructSize) {
  auto plugin = load_dummy(R"({"simulate": [{"name": "short", "warp_size": 16}]})");
  kiln_device_info info;
  std::memset(&info, 0xab, sizeof(info));
  info.struct_size = offsetof(kiln_device_info, kind);  // an imaginary minor that ended at pci_bus_id
  kiln_device_info_args args{};
  args.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
  args.index = 0;
  args.info = &info;
  check(plugin->api().device_info(&args));
  EXPECT_STREQ(info.name, "short");
  EXPECT_EQ(info.warp_size, 0xababababu);  // beyond struct_size: untouched
}

TEST(DummyOptions, WrongTypesFailInitNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"simulate": [{"warp_size": "wide"}]})", "option 'simulate[0].warp_size' must be an integer, got a string"},
      {R"({"simulate": [{}, {"native_exp2": 1}]})", "option 'simulate[1].native_exp2' must be true or false"},
      {R"({"simulate": {"name": "x"}})", "option 'simulate' must be an array of objects, got an object"},
      {R"({"simulate": [3]})", "option 'simulate[0]' must be an object"},
      {R"({"noise": "loud"})", "option 'noise' must be a number"},
      {R"({"simulate": [{"max_local_dims": [64, 64]}]})", "option 'simulate[0].max_local_dims' must list 3 values"},
      {R"({"simulate": [{"warp_size": 0}]})", "option 'simulate[0].warp_size' must be between 1 and 1024, got 0"},
      {R"({"simulate": [{"vector_widths": [4, 32]}]})", "option 'simulate[0].vector_widths' lane counts must be 1..16, got 32"},
      {R"({"simulate": [{"kind": "toaster"}]})", "option 'simulate[0].kind' must be cpu, gpu, accelerator, virtual or unknown"},
      {R"({"simulate": [{"dtypes": ["f32", "f128"]}]})", "option 'simulate[0].dtypes' names an unknown dtype 'f128'"},
      {R"({"simulate": [{"unsupported_ops": {"f32": ["frobnicate"]}}]})",
       "option 'simulate[0].unsupported_ops.f32' names an unknown op 'frobnicate'"},
      {R"({"simulate": [{"sector_bytes": 48}]})", "option 'simulate[0].sector_bytes' must be a power of two"},
      {R"({"simulate": []})", "option 'simulate' lists no device"},
      {R"({"noise": -1})", "option 'noise' must be between 0 and 10"},
      {R"({not json)", "options are not valid JSON"},
  };
  for (const auto& [json, fragment] : cases)
    expect_abi_error([&] { load_dummy(json); }, KILN_STATUS_INVALID_ARGUMENT, fragment);
}

// "devices" is the filter every plugin reads, here over what "simulate" makes.
TEST(DummyOptions, DevicesFiltersTheSimulatedDevicesAsInEveryPlugin) {
  auto plugin = load_dummy(R"({"simulate": [{"name": "sim-a"}, {"name": "sim-b"}, {"name": "sim-c"}], "devices": ["b", 2]})");
  ASSERT_EQ(plugin->device_count(), 2u);
  EXPECT_STREQ(plugin->info(0).name, "sim-b");
  EXPECT_STREQ(plugin->info(1).name, "sim-c");
  expect_abi_error([&] { load_dummy(R"({"simulate": [{"name": "sim-a"}], "devices": [5]})"); },
                   KILN_STATUS_UNAVAILABLE, "option 'devices' keeps none of the simulated devices");
  expect_abi_error([&] { load_dummy(R"({"devices": [true]})"); }, KILN_STATUS_INVALID_ARGUMENT, "option 'devices[0]'");
}

TEST(DummyOptions, UnknownKeysAreWarnings) {
  test_log_lines().clear();
  auto plugin = load_dummy(R"({"colour": "red", "simulate": [{"name": "x", "speed": 3,
                                 "unsupported_ops": {"f33": ["exp"]}}]})");
  EXPECT_EQ(plugin->device_count(), 1u);
  EXPECT_EQ(test_log_count("dummy: unknown option 'colour' ignored"), 1u);
  EXPECT_EQ(test_log_count("dummy: unknown option 'simulate[0].speed' ignored"), 1u);
  EXPECT_EQ(test_log_count("dummy: unknown option 'simulate[0].unsupported_ops.f33' ignored"), 1u);
}

TEST(DummyOptions, MemoryBytesIsTheDevicesBudget) {
  auto plugin = load_dummy(R"({"simulate": [{"memory_bytes": 1000000}]})");
  kiln_device* device = plugin->open(0);
  EXPECT_EQ(plugin->open(0), device);  // opening again gives the same handle
  auto memory = [&] {
    kiln_memory_info_args a{};
    a.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
    a.device = device;
    check(plugin->api().memory_info(&a));
    return a;
  };
  EXPECT_EQ(memory().total_bytes, 1000000u);
  EXPECT_EQ(memory().free_bytes, 1000000u);
  kiln_buffer* big = plugin->alloc(device, 600000);
  EXPECT_EQ(memory().free_bytes, 400000u);
  expect_abi_error([&] { plugin->alloc(device, 500000); }, KILN_STATUS_OUT_OF_MEMORY,
                   "500000 bytes do not fit in the 400000 bytes left of device 'dummy-gpu'");
  plugin->api().buffer_free(device, big);
  EXPECT_EQ(memory().free_bytes, 1000000u);
  kiln_buffer* again = plugin->alloc(device, 500000);
  plugin->api().buffer_free(device, again);
}
