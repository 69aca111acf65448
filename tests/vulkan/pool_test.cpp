// Buffers, copies and events.
#include "vulkan_fixture.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace kiln::test {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

kiln_copy_args copy_args(kiln_device* device, kiln_buffer* buffer, void* host, std::uint64_t bytes,
                         std::uint64_t offset = 0) {
  kiln_copy_args a{};
  a.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  a.device = device;
  a.device_buffer = buffer;
  a.device_offset = offset;
  a.host = host;
  a.bytes = bytes;
  return a;
}

TEST_F(VulkanTest, BufferRoundTrip) {
  const auto data = random_bytes(100003, 1);  // odd size on purpose
  kiln_buffer* b = plugin->alloc(device, data.size());
  plugin->write(device, b, data.data(), data.size());
  std::vector<std::uint8_t> back(data.size());
  plugin->read(device, b, back.data(), back.size());
  EXPECT_EQ(back, data);
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, LargeCopiesGoInChunks) {
  // More than the 8 MiB chunk, an odd size, at an odd offset, not waited
  // for between the write and the read.
  const std::size_t n = (20u << 20) + 5;
  const auto data = random_bytes(n, 6);
  kiln_buffer* b = plugin->alloc(device, n + 3);
  auto up = copy_args(device, b, const_cast<std::uint8_t*>(data.data()), n, 3);
  check(plugin->api().copy_to_device(&up));
  std::vector<std::uint8_t> back(n);
  auto down = copy_args(device, b, back.data(), n, 3);
  check(plugin->api().copy_to_host(&down));
  plugin->wait(down.event);
  plugin->wait(up.event);
  EXPECT_TRUE(back == data);
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, CopiesAtOffsets) {
  const auto data = random_bytes(4096, 2);
  kiln_buffer* b = plugin->alloc(device, data.size());
  plugin->write(device, b, data.data(), data.size());
  std::vector<std::uint8_t> part(1000);
  auto a = copy_args(device, b, part.data(), part.size(), 1001);
  check(plugin->api().copy_to_host(&a));
  plugin->wait(a.event);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + 1001));
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, QueueIsInOrderWithoutWaits) {
  // to_device, device_to_device, to_host submitted back to back; only the
  // last event is waited for. In-order execution makes the result exact.
  const auto data = random_bytes(1 << 16, 3);
  kiln_buffer* src = plugin->alloc(device, data.size());
  kiln_buffer* dst = plugin->alloc(device, data.size());
  auto up = copy_args(device, src, const_cast<std::uint8_t*>(data.data()), data.size());
  check(plugin->api().copy_to_device(&up));
  kiln_copy_args d2d{};
  d2d.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  d2d.device = device;
  d2d.device_buffer = dst;
  d2d.src_buffer = src;
  d2d.bytes = data.size();
  check(plugin->api().copy_device_to_device(&d2d));
  std::vector<std::uint8_t> back(data.size());
  auto down = copy_args(device, dst, back.data(), back.size());
  check(plugin->api().copy_to_host(&down));
  plugin->api().event_release(up.event);   // released before completion: work still runs
  plugin->api().event_release(d2d.event);
  plugin->wait(down.event);
  EXPECT_EQ(back, data);
  plugin->api().buffer_free(device, src);
  plugin->api().buffer_free(device, dst);
}

TEST_F(VulkanTest, ReleasedReadbackCompletesOnSynchronize) {
  const auto data = random_bytes(777, 4);
  kiln_buffer* b = plugin->alloc(device, data.size());
  plugin->write(device, b, data.data(), data.size());
  std::vector<std::uint8_t> back(data.size());
  auto down = copy_args(device, b, back.data(), back.size());
  check(plugin->api().copy_to_host(&down));
  plugin->api().event_release(down.event);
  check(plugin->api().device_synchronize(device));
  EXPECT_EQ(back, data);
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, HostSourceIsNotReadAfterTheCall) {
  auto data = random_bytes(4096, 5);
  const auto expected = data;
  kiln_buffer* b = plugin->alloc(device, data.size());
  auto up = copy_args(device, b, data.data(), data.size());
  check(plugin->api().copy_to_device(&up));
  std::fill(data.begin(), data.end(), 0);  // the copy must already own its bytes
  plugin->wait(up.event);
  std::vector<std::uint8_t> back(data.size());
  plugin->read(device, b, back.data(), back.size());
  EXPECT_EQ(back, expected);
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, OutOfRangeCopiesAreInvalidArguments) {
  kiln_buffer* b = plugin->alloc(device, 64);
  std::vector<std::uint8_t> host(128);
  auto a = copy_args(device, b, host.data(), 65);
  try {
    check(plugin->api().copy_to_device(&a));
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("64 bytes"), std::string::npos) << e.what();
  }
  auto c = copy_args(device, b, host.data(), 8, 60);
  EXPECT_THROW(check(plugin->api().copy_to_host(&c)), AbiError);
  plugin->api().buffer_free(device, b);
}

TEST_F(VulkanTest, MemoryInfoTracksAllocations) {
  kiln_memory_info_args m{};
  m.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
  m.device = device;
  check(plugin->api().memory_info(&m));
  EXPECT_GT(m.total_bytes, 0u);
  const std::uint64_t before = m.free_bytes;
  kiln_buffer* b = plugin->alloc(device, 1 << 20);
  check(plugin->api().memory_info(&m));
  EXPECT_EQ(m.free_bytes, before - (1 << 20));
  plugin->api().buffer_free(device, b);
  check(plugin->api().memory_info(&m));
  EXPECT_EQ(m.free_bytes, before);
}

TEST_F(VulkanTest, ZeroByteAllocIsAnError) {
  EXPECT_THROW(plugin->alloc(device, 0), AbiError);
}

}  // namespace
}  // namespace kiln::test
