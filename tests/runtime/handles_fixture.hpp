// tests/runtime/handles_fixture.hpp - a Runtime with the C test plugins:
// "host" (synchronous) and "queue" (work runs only when an event is waited),
// and random data helpers.
#pragma once

#include "loader/scratch.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace kiln::test {

class HandlesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string entries = R"("host": {"library": ")" + test_plugin("host") + R"("}, "queue": {"library": ")" +
                                test_plugin("queue") + R"("})";
    kiln::Result<kiln::Runtime> loaded = runtime_from(dir, plugins_only(entries));
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    runtime = std::make_unique<kiln::Runtime>(std::move(loaded).value());
    host = open("host:0");
    queue = open("queue:0");
  }

  kiln::Device open(const std::string& id) {
    kiln::Result<kiln::Device> device = runtime->device(id);
    EXPECT_TRUE(device.ok()) << device.error().to_string();
    return device.ok() ? std::move(device).value() : kiln::Device{};
  }

  kiln::Buffer allocate(const kiln::Device& device, std::uint64_t bytes) {
    kiln::Result<kiln::Buffer> buffer = device.allocate(bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.error().to_string();
    return buffer.ok() ? std::move(buffer).value() : kiln::Buffer{};
  }

  std::vector<std::byte> random_bytes(std::size_t n) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<std::byte> out(n);
    for (std::byte& b : out) b = static_cast<std::byte>(byte(rng));
    return out;
  }

  std::vector<float> random_floats(std::size_t n) {
    std::uniform_real_distribution<float> value(-10.0f, 10.0f);
    std::vector<float> out(n);
    for (float& f : out) f = value(rng);
    return out;
  }

  template <class T>
  static std::span<const std::byte> bytes_of(const std::vector<T>& v) {
    return std::as_bytes(std::span(v));
  }
  template <class T>
  static std::span<std::byte> bytes_of(std::vector<T>& v) {
    return std::as_writable_bytes(std::span(v));
  }

  ScratchDir dir;
  std::mt19937 rng{20261129};
  std::unique_ptr<kiln::Runtime> runtime;
  kiln::Device host;
  kiln::Device queue;
};

}  // namespace kiln::test
