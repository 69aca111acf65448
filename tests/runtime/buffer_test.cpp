// Buffers through real plugins: synchronous and asynchronous copies, ranges,
// device-to-device copies, host pointers, memory info.
#include "runtime/handles_fixture.hpp"

#include <gmock/gmock.h>

namespace {

using ::testing::HasSubstr;

class Buffers : public kiln::test::HandlesTest {};

TEST_F(Buffers, WriteThenReadGivesBackRandomBytes) {
  for (kiln::Device* device : {&host, &queue}) {
    kiln::Buffer buffer = allocate(*device, 4096);
    EXPECT_EQ(buffer.size(), 4096u);
    const std::vector<std::byte> data = random_bytes(4096);
    ASSERT_TRUE(buffer.write(data).ok());
    std::vector<std::byte> back(4096);
    ASSERT_TRUE(buffer.read(back).ok());
    EXPECT_EQ(back, data) << device->id();
  }
}

TEST_F(Buffers, OffsetsReadAndWriteTheRightBytes) {
  kiln::Buffer buffer = allocate(host, 1000);
  const std::vector<std::byte> base = random_bytes(1000);
  const std::vector<std::byte> patch = random_bytes(123);
  ASSERT_TRUE(buffer.write(base).ok());
  ASSERT_TRUE(buffer.write(patch, 301).ok());
  std::vector<std::byte> expected = base;
  std::copy(patch.begin(), patch.end(), expected.begin() + 301);
  std::vector<std::byte> back(1000);
  ASSERT_TRUE(buffer.read(back).ok());
  EXPECT_EQ(back, expected);
  std::vector<std::byte> tail(77);
  ASSERT_TRUE(buffer.read(tail, 923).ok());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), expected.begin() + 923));
}

TEST_F(Buffers, OutOfRangeCopiesAreErrorsNamingTheRange) {
  kiln::Buffer buffer = allocate(host, 4096);
  const std::vector<std::byte> data = random_bytes(20);
  kiln::Result<void> result = buffer.write(data, 4090);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, kiln::ErrorCode::InvalidArgument);
  EXPECT_EQ(result.error().function, "copy_to_device");
  EXPECT_EQ(result.error().message, "host:0: bytes [4090, 4110) are outside the buffer of 4096 bytes");
  std::vector<std::byte> back(8);
  EXPECT_EQ(buffer.read(back, 5000).error().function, "copy_to_host");
}

TEST_F(Buffers, ZeroBytesCannotBeAllocated) {
  kiln::Result<kiln::Buffer> buffer = host.allocate(0);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.error().message, "host:0: cannot allocate 0 bytes");
}

TEST_F(Buffers, AsyncCopiesCompleteOnlyWhenTheEventIsWaited) {
  // The queue plugin runs copies when their event is waited: data read
  // before that is stale, which shows that the runtime waits where it must.
  kiln::Buffer buffer = allocate(queue, 256);
  const std::vector<std::byte> data = random_bytes(256);
  std::vector<std::byte> back(256, std::byte{0});
  kiln::Result<kiln::Event> written = buffer.write_async(data);
  ASSERT_TRUE(written.ok());
  EXPECT_FALSE(written->complete());
  kiln::Result<kiln::Event> read = buffer.read_async(back);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(back, std::vector<std::byte>(256, std::byte{0}));  // not yet
  ASSERT_TRUE(read->wait().ok());
  EXPECT_TRUE(read->complete());
  EXPECT_EQ(back, data);  // in queue order: the write ran first
  EXPECT_TRUE(written->wait().ok());
}

TEST_F(Buffers, DestroyingAnEventWaitsForItsWork) {
  kiln::Buffer buffer = allocate(queue, 64);
  const std::vector<std::byte> data = random_bytes(64);
  ASSERT_TRUE(buffer.write(data).ok());
  std::vector<std::byte> back(64, std::byte{0});
  {
    kiln::Result<kiln::Event> read = buffer.read_async(back);
    ASSERT_TRUE(read.ok());
  }
  EXPECT_EQ(back, data);
}

TEST_F(Buffers, CopyBetweenBuffersOfOneDevice) {
  for (kiln::Device* device : {&host, &queue}) {
    kiln::Buffer a = allocate(*device, 512);
    kiln::Buffer b = allocate(*device, 512);
    const std::vector<std::byte> data = random_bytes(512);
    ASSERT_TRUE(a.write(data).ok());
    ASSERT_TRUE(b.write(std::vector<std::byte>(512, std::byte{7})).ok());
    ASSERT_TRUE(b.copy_from(a, 100, 10, 200).ok());
    std::vector<std::byte> back(512);
    ASSERT_TRUE(b.read(back).ok());
    for (std::size_t i = 0; i < 512; ++i) {
      const std::byte expected = i >= 10 && i < 110 ? data[i - 10 + 200] : std::byte{7};
      ASSERT_EQ(back[i], expected) << device->id() << " byte " << i;
    }
  }
}

TEST_F(Buffers, CopyBetweenOverlappingRangesOfOneBufferIsAnErrorAndWritesNothing) {
  for (kiln::Device* device : {&host, &queue}) {
    kiln::Buffer a = allocate(*device, 256);
    const std::vector<std::byte> data = random_bytes(256);
    ASSERT_TRUE(a.write(data).ok());
    kiln::Result<void> overlapping = a.copy_from(a, 100, 10, 0);
    ASSERT_FALSE(overlapping.ok()) << device->id();
    EXPECT_EQ(overlapping.error().code, kiln::ErrorCode::InvalidArgument);
    EXPECT_THAT(overlapping.error().message,
                HasSubstr("source range [0, 100) and destination range [10, 110) of one buffer overlap"));
    std::vector<std::byte> back(256);
    ASSERT_TRUE(a.read(back).ok());
    EXPECT_EQ(back, data) << device->id();
    // Disjoint ranges of one buffer copy.
    ASSERT_TRUE(a.copy_from(a, 100, 150, 10).ok()) << device->id();
    ASSERT_TRUE(a.read(back).ok());
    for (std::size_t i = 0; i < 256; ++i)
      ASSERT_EQ(back[i], i >= 150 && i < 250 ? data[i - 140] : data[i]) << device->id() << " byte " << i;
  }
}

TEST_F(Buffers, CopyBetweenDevicesIsAnErrorNamingBoth) {
  kiln::Buffer a = allocate(host, 64);
  kiln::Buffer b = allocate(queue, 64);
  kiln::Result<void> result = b.copy_from(a, 64);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("from a buffer of host:0 into one of queue:0"));
  EXPECT_THAT(b.copy_from(b, 65).error().message, HasSubstr("outside the buffer of 64 bytes"));
}

TEST_F(Buffers, HostMemoryBuffersExposeTheirBytes) {
  kiln::Buffer buffer = allocate(host, 300);
  ASSERT_NE(buffer.host_pointer(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.host_pointer()) % 64, 0u);
  const std::vector<std::byte> data = random_bytes(300);
  ASSERT_TRUE(buffer.write(data).ok());
  EXPECT_EQ(std::memcmp(buffer.host_pointer(), data.data(), 300), 0);
}

TEST_F(Buffers, MovedBuffersKeepTheirMemory) {
  kiln::Buffer a = allocate(host, 128);
  const std::vector<std::byte> data = random_bytes(128);
  ASSERT_TRUE(a.write(data).ok());
  kiln::Buffer b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  std::vector<std::byte> back(128);
  ASSERT_TRUE(b.read(back).ok());
  EXPECT_EQ(back, data);
  EXPECT_FALSE(a.write(data).ok());
}

TEST_F(Buffers, MemoryInfoComesFromThePlugin) {
  kiln::Result<kiln::MemoryInfo> info = host.memory_info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->total_bytes, 1ull << 30);
  EXPECT_EQ(info->free_bytes, 1ull << 29);
}

TEST_F(Buffers, HandlesOutliveTheRuntime) {
  // Buffers keep their device open; the Runtime may go first.
  kiln::Buffer buffer = allocate(host, 32);
  runtime.reset();
  host = kiln::Device{};
  const std::vector<std::byte> data = random_bytes(32);
  ASSERT_TRUE(buffer.write(data).ok());
  std::vector<std::byte> back(32);
  ASSERT_TRUE(buffer.read(back).ok());
  EXPECT_EQ(back, data);
}

}  // namespace
