// OpenCL plugin: buffers, copies with events, range checks, memory info.
#include <gtest/gtest.h>

#include "support/abi_host.hpp"

#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::check;

namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

kiln_copy_args copy_args(kiln_device* d, kiln_buffer* b, std::uint64_t offset, void* host, std::uint64_t bytes) {
  kiln_copy_args a{};
  a.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  a.device = d;
  a.device_buffer = b;
  a.device_offset = offset;
  a.host = host;
  a.bytes = bytes;
  return a;
}

class OpenclPool : public ::testing::Test {
 protected:
  OpenclPool() : plugin(kiln::test::plugin_path("opencl")) {}
  AbiPlugin plugin;
};

}  // namespace

TEST_F(OpenclPool, RoundTripThroughEveryDevice) {
  for (std::uint32_t i = 0; i < plugin.device_count(); ++i) {
    SCOPED_TRACE(plugin.info(i).name);
    kiln_device* d = plugin.open(i);
    const std::size_t n = (1u << 20) + 13;  // odd size
    const auto data = random_bytes(n, 1 + i);
    kiln_buffer* b = plugin.alloc(d, n);
    plugin.write(d, b, data.data(), n);
    std::vector<std::uint8_t> back(n, 0);
    plugin.read(d, b, back.data(), n);
    EXPECT_EQ(back, data);
    plugin.api().buffer_free(d, b);
  }
}

TEST_F(OpenclPool, CopiesAtOffsetsReturnEventsThatComplete) {
  kiln_device* d = plugin.open(0);
  const std::size_t n = 4096;
  const auto data = random_bytes(n, 7);
  kiln_buffer* b = plugin.alloc(d, 2 * n);
  kiln_buffer* c = plugin.alloc(d, n);

  auto up = copy_args(d, b, n, const_cast<std::uint8_t*>(data.data()), n);
  check(plugin.api().copy_to_device(&up));
  ASSERT_NE(up.event, nullptr);  // asynchronous: the caller waits on the event

  kiln_copy_args across{};
  across.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  across.device = d;
  across.device_buffer = c;
  across.device_offset = 0;
  across.src_buffer = b;
  across.src_offset = n + 100;
  across.bytes = n - 100;
  check(plugin.api().copy_device_to_device(&across));

  std::vector<std::uint8_t> back(n - 100, 0);
  auto down = copy_args(d, c, 0, back.data(), back.size());
  check(plugin.api().copy_to_host(&down));
  ASSERT_NE(down.event, nullptr);
  plugin.wait(down.event);  // in-order queue: the upload and the copy ran first
  plugin.wait(across.event);
  plugin.wait(up.event);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + 100));
  plugin.api().buffer_free(d, b);
  plugin.api().buffer_free(d, c);
}

// ABI 1.1's event_query: a copy's event reports completion without
// blocking, and once complete keeps saying so (and the bytes are there).
TEST_F(OpenclPool, EventQueryReportsCompletionWithoutBlocking) {
  ASSERT_NE(plugin.api().event_query, nullptr);
  kiln_device* d = plugin.open(0);
  const std::size_t n = 1u << 20;
  const auto data = random_bytes(n, 11);
  kiln_buffer* b = plugin.alloc(d, n);
  auto up = copy_args(d, b, 0, const_cast<std::uint8_t*>(data.data()), n);
  check(plugin.api().copy_to_device(&up));
  ASSERT_NE(up.event, nullptr);
  kiln_event_query_args q{};
  q.struct_size = KILN_EVENT_QUERY_ARGS_STRUCT_SIZE;
  q.event = up.event;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (q.complete == 0 && std::chrono::steady_clock::now() < give_up) check(plugin.api().event_query(&q));
  EXPECT_EQ(q.complete, 1u);
  q.complete = 0;
  check(plugin.api().event_query(&q));
  EXPECT_EQ(q.complete, 1u);
  plugin.api().event_release(up.event);
  std::vector<std::uint8_t> back(n, 0);
  plugin.read(d, b, back.data(), n);
  EXPECT_EQ(back, data);
  kiln_event_query_args none{};
  none.struct_size = KILN_EVENT_QUERY_ARGS_STRUCT_SIZE;
  EXPECT_THROW(check(plugin.api().event_query(&none)), AbiError);  // a NULL event is a caller's error
  plugin.api().buffer_free(d, b);
}

TEST_F(OpenclPool, OutOfRangeCopiesAreInvalidArguments) {
  kiln_device* d = plugin.open(0);
  kiln_buffer* b = plugin.alloc(d, 100);
  std::vector<std::uint8_t> host(200);
  auto a = copy_args(d, b, 50, host.data(), 51);
  kiln_error* err = plugin.api().copy_to_device(&a);
  try {
    check(err);
    FAIL() << "no error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("[50, 101)"), std::string::npos) << e.what();
  }
  auto r = copy_args(d, b, 0, nullptr, 10);
  EXPECT_THROW(check(plugin.api().copy_to_host(&r)), AbiError);
  plugin.api().buffer_free(d, b);
}

TEST_F(OpenclPool, ZeroByteBuffersAreRefused) {
  kiln_device* d = plugin.open(0);
  EXPECT_THROW(plugin.alloc(d, 0), AbiError);
}

TEST_F(OpenclPool, MemoryInfoCountsAllocations) {
  kiln_device* d = plugin.open(0);
  kiln_memory_info_args before{};
  before.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
  before.device = d;
  check(plugin.api().memory_info(&before));
  EXPECT_EQ(before.total_bytes, plugin.info(0).memory_bytes);
  EXPECT_LE(before.free_bytes, before.total_bytes);
  kiln_buffer* b = plugin.alloc(d, 1u << 20);
  kiln_memory_info_args after = before;
  check(plugin.api().memory_info(&after));
  EXPECT_EQ(before.free_bytes - after.free_bytes, 1u << 20);
  plugin.api().buffer_free(d, b);
}

TEST_F(OpenclPool, CallsOnAClosedOrForeignDeviceAreRefused) {
  kiln_device* d = plugin.open(0);
  plugin.api().device_close(d);
  EXPECT_THROW(plugin.alloc(d, 64), AbiError);
  int not_a_device = 0;
  EXPECT_THROW(plugin.alloc(reinterpret_cast<kiln_device*>(&not_a_device), 64), AbiError);
}
