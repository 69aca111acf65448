// The SDK's shared table functions: init's preamble and device enumeration.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kiln/sdk/plugin_entry.hpp"
#include "support/abi_host.hpp"

namespace {

using kiln::test::AbiError;
using kiln::test::check;

kiln_host_api test_host() {
  kiln_host_api host{};
  host.struct_size = KILN_HOST_API_STRUCT_SIZE;
  host.abi_major = KILN_ABI_MAJOR;
  host.error_create = kiln::test::test_error_create;
  host.log = kiln::test::test_log;
  return host;
}

kiln_init_args init_args(const kiln_host_api* host, const char* json, std::size_t len) {
  kiln_init_args args{};
  args.struct_size = KILN_INIT_ARGS_STRUCT_SIZE;
  args.host = host;
  args.options_json = json;
  args.options_json_len = len;
  return args;
}

TEST(PluginEntry, GuardInitParsesOptionsAndReportsBadOnes) {
  const kiln_host_api host = test_host();
  std::int64_t threads = 0;
  const std::string json = R"({"threads": 3, /* comment */})";
  kiln_init_args good = init_args(&host, json.data(), json.size());
  check(kiln::sdk::guard_init(&good, [&](const kiln::sdk::Options& o) { threads = o.get_int("threads", 0); }));
  EXPECT_EQ(threads, 3);

  kiln_init_args empty = init_args(&host, nullptr, 0);
  EXPECT_NO_THROW(check(kiln::sdk::guard_init(&empty, [](const kiln::sdk::Options& o) { EXPECT_FALSE(o.has("x")); })));

  kiln_init_args null_text = init_args(&host, nullptr, 5);
  try {
    check(kiln::sdk::guard_init(&null_text, [](const kiln::sdk::Options&) { FAIL() << "body ran"; }));
    FAIL() << "no error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("options_json is NULL"), std::string::npos);
  }

  kiln_init_args not_json = init_args(&host, "[1,2]", 5);
  EXPECT_THROW(check(kiln::sdk::guard_init(&not_json, [](const kiln::sdk::Options&) {})), AbiError);
}

TEST(PluginEntry, DeviceCallsCheckTheIndexAndCopyOnlyWhatFits) {
  const kiln_host_api host = test_host();
  kiln::sdk::Host::bind(&host);
  kiln_device_info infos[2]{};
  kiln::sdk::copy_string(infos[1].name, "second");
  infos[1].warp_size = 32;
  const auto count = [] { return std::size_t{2}; };
  const auto info_of = [&](std::uint32_t i) -> const kiln_device_info& { return infos[i]; };

  kiln_device_count_args c{};
  c.struct_size = KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE;
  check(kiln::sdk::answer_device_count(&c, count));
  EXPECT_EQ(c.count, 2u);

  kiln_device_info out{};
  out.struct_size = KILN_STRUCT_SIZE(kiln_device_info, pci_bus_id);  // an older, smaller struct
  kiln_device_info_args a{};
  a.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
  a.index = 1;
  a.info = &out;
  check(kiln::sdk::answer_device_info(&a, count, info_of));
  EXPECT_STREQ(out.name, "second");
  EXPECT_EQ(out.warp_size, 0u) << "a field beyond the caller's struct_size was written";

  a.index = 2;
  EXPECT_THROW(check(kiln::sdk::answer_device_info(&a, count, info_of)), AbiError);

  kiln_device_open_args o{};
  o.struct_size = KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE;
  o.index = 5;
  bool opened = false;
  EXPECT_THROW(check(kiln::sdk::answer_device_open(&o, count, [&](std::uint32_t) {
                 opened = true;
                 return static_cast<kiln_device*>(nullptr);
               })),
               AbiError);
  EXPECT_FALSE(opened);
}

}  // namespace

namespace {

// The copy checks every pool shares (host memory, CUDA, OpenCL, Vulkan).
std::string failure_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const kiln::sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_INVALID_ARGUMENT);
    return e.what();
  }
  return "";
}

TEST(CopyChecks, RangesInsideTheBufferPassAndOthersNameTheRange) {
  using kiln::sdk::check_buffer_range;
  EXPECT_EQ(failure_of([] { check_buffer_range("copy_to_host", "", 0, 64, 64); }), "");
  EXPECT_EQ(failure_of([] { check_buffer_range("copy_to_host", "", 64, 0, 64); }), "");
  EXPECT_EQ(failure_of([] { check_buffer_range("copy_to_host", "", 60, 8, 64); }),
            "copy_to_host: range [60, 68) outside buffer of 64 bytes");
  EXPECT_EQ(failure_of([] { check_buffer_range("copy_device_to_device", "source", 65, 0, 64); }),
            "copy_device_to_device: source range [65, 65) outside buffer of 64 bytes");
  // An offset + bytes that wraps around is still outside.
  EXPECT_NE(failure_of([] { check_buffer_range("copy_to_device", "", 8, ~std::uint64_t{0}, 64); }), "");
}

TEST(CopyChecks, RangesOfOneBufferMustNotOverlap) {
  int one = 0, other = 0;
  auto copy = [](int* dst, std::uint64_t dst_offset, int* src, std::uint64_t src_offset, std::uint64_t bytes) {
    kiln_copy_args args{};
    args.device_buffer = reinterpret_cast<kiln_buffer*>(dst);
    args.device_offset = dst_offset;
    args.src_buffer = reinterpret_cast<kiln_buffer*>(src);
    args.src_offset = src_offset;
    args.bytes = bytes;
    return failure_of([&] { kiln::sdk::check_device_copy(args, 64, 64); });
  };
  EXPECT_EQ(copy(&one, 0, &other, 0, 64), "");
  EXPECT_EQ(copy(&one, 32, &one, 0, 32), "");
  EXPECT_EQ(copy(&one, 0, &one, 32, 32), "");
  EXPECT_EQ(copy(&one, 8, &one, 8, 0), "");
  EXPECT_EQ(copy(&one, 31, &one, 0, 32),
            "copy_device_to_device: source range [0, 32) and destination range [31, 63) of one buffer overlap");
  EXPECT_EQ(copy(&one, 0, &one, 31, 32),
            "copy_device_to_device: source range [31, 63) and destination range [0, 32) of one buffer overlap");
  EXPECT_EQ(copy(&one, 0, &one, 0, 1),
            "copy_device_to_device: source range [0, 1) and destination range [0, 1) of one buffer overlap");
  EXPECT_EQ(copy(&one, 60, &other, 0, 8), "copy_device_to_device: destination range [60, 68) outside buffer of 64 bytes");
  EXPECT_EQ(copy(&one, 0, &other, 60, 8), "copy_device_to_device: source range [60, 68) outside buffer of 64 bytes");
}

TEST(CopyChecks, AHostPointerIsNeededOnlyWhenBytesMove) {
  kiln_copy_args args{};
  args.bytes = 0;
  EXPECT_EQ(failure_of([&] { kiln::sdk::check_copy_host(args, "copy_to_device"); }), "");
  args.bytes = 4;
  EXPECT_EQ(failure_of([&] { kiln::sdk::check_copy_host(args, "copy_to_device"); }),
            "copy_to_device: host pointer is NULL");
}

}  // namespace
