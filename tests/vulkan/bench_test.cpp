// Measurements, not assertions: disabled by default (lavapipe is slow);
// run on a GPU with --gtest_also_run_disabled_tests. They print figures.
#include "support/wire_builder.hpp"
#include "vulkan_fixture.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace kiln::test {
namespace {

// c[i] = a[i] + b[i], 256 threads per group.
std::vector<kiln_op> add_kernel(std::int64_t n) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2);
  auto local = w.const_i64(256);
  auto g = w.group_index(0, w.const_i64(n / 256));
  auto l = w.local_index(0, local);
  auto i = w.mad(KILN_DTYPE_I64, g, local, l);
  w.store(KILN_DTYPE_F32, c, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i), w.load(KILN_DTYPE_F32, b, i)));
  return w.ops;
}

struct AddSetup {
  kiln_program* program = nullptr;
  std::vector<kiln_buffer*> buffers;
  std::vector<kiln_arg> args;
  kiln_launch_args launch{};
};

AddSetup setup_add(const AbiPlugin& plugin, kiln_device* device, std::int64_t n) {
  AddSetup s;
  s.program = plugin.compile(device, add_kernel(n));
  std::vector<float> ones(n, 1.0f);
  for (int i = 0; i < 3; ++i) {
    s.buffers.push_back(plugin.alloc(device, n * 4));
    plugin.write(device, s.buffers.back(), ones.data(), n * 4);
    kiln_arg a{};
    a.kind = KILN_ARG_BUFFER;
    a.buffer = s.buffers.back();
    a.bytes = n * 4;
    s.args.push_back(a);
  }
  s.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  s.launch.device = device;
  s.launch.program = s.program;
  s.launch.args = s.args.data();
  s.launch.n_args = 3;
  s.launch.groups[0] = n / 256;
  s.launch.groups[1] = s.launch.groups[2] = 1;
  s.launch.local[0] = 256;
  s.launch.local[1] = s.launch.local[2] = 1;
  return s;
}

void release(const AbiPlugin& plugin, kiln_device* device, AddSetup& s) {
  for (auto* b : s.buffers) plugin.api().buffer_free(device, b);
  plugin.api().program_release(s.program);
}

TEST_F(VulkanTest, DISABLED_AddBandwidth) {
  const char* env = std::getenv("KILN_VULKAN_BENCH_LOG2N");
  const std::int64_t n = std::int64_t{1} << (env != nullptr ? std::atoi(env) : 24);
  AddSetup s = setup_add(*plugin, device, n);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch = kiln::sdk::launch_args_1_0(s.launch);
  t.launch_args = &s.launch;
  t.warmups = 3;
  t.repeats = 20;
  check(plugin->api().launch_timed(&t));
  std::printf("add f32 n=2^%d on %s: median %.1f us, min %.1f us, %.0f GB/s (timer %s)\n",
              static_cast<int>(std::log2(static_cast<double>(n))), info.name, t.median_ns / 1e3, t.min_ns / 1e3,
              12.0 * static_cast<double>(n) / static_cast<double>(t.median_ns),
              t.timer == KILN_TIMER_DEVICE ? "device" : "host");
  release(*plugin, device, s);
}

// Launch + wait of a 1024-element add, for several "wait_spin_us" options.
TEST_F(VulkanTest, DISABLED_TinyLaunchHostToHost) {
  for (int spin : {-1, 0, 20, 100, 1000}) {  // -1: the default
    AbiPlugin p(private_plugin_copy(), spin < 0 ? "{}" : R"({"wait_spin_us": )" + std::to_string(spin) + "}");
    kiln_device* d = p.open(0);
    AddSetup s = setup_add(p, d, 1024);
    const int runs = 200;
    double best = 1e30, total = 0, enqueue = 0;
    for (int r = 0; r < runs; ++r) {
      const auto begin = std::chrono::steady_clock::now();
      kiln_launch_args l = s.launch;
      check(p.api().launch(&l));
      const auto enqueued = std::chrono::steady_clock::now();
      p.wait(l.event);
      const auto end = std::chrono::steady_clock::now();
      const double us = std::chrono::duration<double, std::micro>(end - begin).count();
      enqueue += std::chrono::duration<double, std::micro>(enqueued - begin).count();
      best = std::min(best, us);
      total += us;
    }
    std::printf("tiny launch (1024 elements) host-to-host on %s, wait_spin_us %d: mean %.1f us (launch call %.1f us), "
                "best %.1f us\n", info.name, spin, total / runs, enqueue / runs, best);
    release(p, d, s);
  }
}

// Host <-> device copies through staging buffers: small round trips
// (latency) and 256 MiB each way (bandwidth).
TEST_F(VulkanTest, DISABLED_CopyLatencyAndBandwidth) {
  for (int spin : {-1, 2000}) {  // -1: the default
    AbiPlugin p(private_plugin_copy(), spin < 0 ? "{}" : R"({"wait_spin_us": )" + std::to_string(spin) + "}");
    kiln_device* d = p.open(0);
    std::vector<std::uint8_t> small(4096, 1), big(256u << 20, 2);
    kiln_buffer* b = p.alloc(d, big.size());
    const int runs = 200;
    double call_us = 0, wait_us = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) {
      kiln_copy_args a{};
      a.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
      a.device = d;
      a.device_buffer = b;
      a.host = small.data();
      a.bytes = small.size();
      const auto c0 = std::chrono::steady_clock::now();
      check(p.api().copy_to_device(&a));
      const auto c1 = std::chrono::steady_clock::now();
      p.wait(a.event);
      const auto c2 = std::chrono::steady_clock::now();
      call_us += std::chrono::duration<double, std::micro>(c1 - c0).count();
      wait_us += std::chrono::duration<double, std::micro>(c2 - c1).count();
      p.read(d, b, small.data(), small.size());
    }
    const auto t1 = std::chrono::steady_clock::now();
    p.write(d, b, big.data(), big.size());  // warm-up
    const auto t2 = std::chrono::steady_clock::now();
    p.write(d, b, big.data(), big.size());
    const auto t3 = std::chrono::steady_clock::now();
    p.read(d, b, big.data(), big.size());
    const auto t4 = std::chrono::steady_clock::now();
    using us = std::chrono::duration<double, std::micro>;
    std::printf("copies on %s, wait_spin_us %d: 4 KiB write+read %.1f us (write call %.1f us, its wait %.1f us); "
                "256 MiB to device %.1f GB/s, to host %.1f GB/s\n",
                info.name, spin, us(t1 - t0).count() / runs, call_us / runs, wait_us / runs,
                big.size() / us(t3 - t2).count() / 1e3, big.size() / us(t4 - t3).count() / 1e3);
    p.api().buffer_free(d, b);
  }
}

}  // namespace
}  // namespace kiln::test
