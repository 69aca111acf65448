// The plugin's Vulkan usage under VK_LAYER_KHRONOS_validation: copies,
// launches (with a split grid, LOCAL storage and barriers), timed launches
// and compiles from several threads must not make the layer complain.
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"
#include "vulkan_fixture.hpp"

#include <bit>
#include <filesystem>
#include <thread>

namespace kiln::test {
namespace {

class VulkanValidationTest : public VulkanTest {};

bool validation_layer_installed() {
  for (const char* dir : {"/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().filename().string().find("VkLayer_khronos_validation") != std::string::npos) return true;
  }
  return false;
}

// Tree reduction of `threads` floats per group (LOCAL storage + barriers).
std::vector<kiln_op> group_sums(std::int64_t threads, std::int64_t groups) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto sums = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1);
  auto shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, threads);
  auto nt = w.const_i64(threads);
  auto g = w.group_index(0, w.const_i64(groups));
  auto l = w.local_index(0, nt);
  w.store(KILN_DTYPE_F32, shared, l, w.load(KILN_DTYPE_F32, x, w.mad(KILN_DTYPE_I64, g, nt, l)));
  w.barrier();
  auto step = w.loop(w.const_i64(std::bit_width(static_cast<std::uint64_t>(threads)) - 1));
  auto stride = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, w.const_i64(threads / 2), step);
  auto active = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, l, stride));
  auto sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, shared, l),
                      w.load(KILN_DTYPE_F32, shared, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, l, stride)));
  w.store(KILN_DTYPE_F32, shared, l, sum);
  w.end_if(active);
  w.barrier();
  w.end_loop(step);
  auto first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, l, w.const_i64(0)));
  w.store(KILN_DTYPE_F32, sums, g, w.load(KILN_DTYPE_F32, shared, w.const_i64(0)));
  w.end_if(first);
  return w.ops;
}

TEST_F(VulkanValidationTest, NoValidationMessages) {
  if (!validation_layer_installed()) GTEST_SKIP() << "VK_LAYER_KHRONOS_validation is not installed";
  test_log_lines().clear();
  AbiPlugin p(private_plugin_copy(), R"({"validation": true})");
  kiln_device* d = p.open(0);

  // Compiles from several threads at once.
  std::vector<std::thread> threads;
  std::vector<kiln_program*> programs(4, nullptr);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { programs[t] = p.compile(d, wire_add_f32(64 + t)); });
  for (auto& t : threads) t.join();
  for (auto* program : programs) {
    EXPECT_NE(program, nullptr);
    p.api().program_release(program);
  }

  const std::int64_t n = 70000;  // > 65535 groups on lavapipe: a split grid
  std::vector<float> a(n), b(n);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 97) * 0.5f;
    b[i] = static_cast<float>(i % 13);
  }
  std::vector<HostArg> args = {HostArg::of(a), HostArg::of(b), HostArg::of(std::vector<float>(n))};
  run_kernel(p, d, wire_add_f32(n), args, {{static_cast<std::uint64_t>(n), 1, 1}});
  const auto c = args[2].values<float>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]);

  std::vector<float> x(32 * 8, 1.0f);
  std::vector<HostArg> sums = {HostArg::of(x), HostArg::of(std::vector<float>(8))};
  run_kernel(p, d, group_sums(32, 8), sums, {{8, 1, 1}, {32, 1, 1}});
  for (float s : sums[1].values<float>()) EXPECT_EQ(s, 32.0f);

  kiln_program* program = p.compile(d, wire_add_f32(256));
  kiln_buffer* buffer = p.alloc(d, 1024);
  p.write(d, buffer, a.data(), 1024);
  std::vector<kiln_arg> bound(3);
  for (auto& arg : bound) {
    arg.kind = KILN_ARG_BUFFER;
    arg.buffer = buffer;
    arg.bytes = 1024;
  }
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.device = d;
  t.launch.program = program;
  t.launch.args = bound.data();
  t.launch.n_args = 3;
  t.launch.groups[0] = 256;
  t.launch.groups[1] = t.launch.groups[2] = 1;
  t.launch.local[0] = t.launch.local[1] = t.launch.local[2] = 1;
  t.warmups = 1;
  t.repeats = 3;
  check(p.api().launch_timed(&t));
  check(p.api().device_synchronize(d));
  p.api().buffer_free(d, buffer);
  p.api().program_release(program);

  std::string messages;
  for (const auto& line : test_log_lines())
    if (line.rfind("validation:", 0) == 0) messages += line + "\n";
  EXPECT_TRUE(messages.empty()) << messages;
}

}  // namespace
}  // namespace kiln::test
