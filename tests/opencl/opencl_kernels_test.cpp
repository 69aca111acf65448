// OpenCL plugin: compile and launch. Every op kind, every UNARY/BINARY op on
// every dtype the device offers, every CAST, vectors, LOCAL storage with
// barriers, REGISTER storage, loops, ifs, VARIABLE params and 3-D grids, on
// random inputs against the reference interpreter; then the error paths and
// timed launches.
#include <gtest/gtest.h>

#include "support/kernel_suite.hpp"

#include <kiln/sdk/wire.hpp>

#include <random>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::check;
using kiln::test::WireBuilder;

namespace {

class OpenclKernels : public ::testing::Test {
 protected:
  OpenclKernels() : plugin(kiln::test::plugin_path("opencl")) {}
  AbiPlugin plugin;
};

// 2^28-style odd sizes are for the GPU machine; 1237 elements (not a
// multiple of the 64-thread groups) exercise the guard here.
constexpr std::size_t kElements = 1237;

}  // namespace

TEST_F(OpenclKernels, SuiteMatchesTheInterpreterOnEveryDevice) {
  for (std::uint32_t index = 0; index < plugin.device_count(); ++index) {
    const kiln_device_info info = plugin.info(index);
    kiln_device* device = plugin.open(index);
    const auto suite = kiln::test::kernel_suite(info, kElements, 7 + index);
    ASSERT_GT(suite.size(), 20u);
    std::size_t checks = 0;
    for (const auto& kernel : suite) checks += kernel.checks.size();
    std::cout << "[   INFO   ] " << info.name << ": " << suite.size() << " kernels, " << checks << " checked outputs\n";
    for (const auto& kernel : suite) {
      SCOPED_TRACE(std::string(info.name) + ": " + kernel.name);
      try {
        for (const std::string& problem : kiln::test::run_suite_kernel(plugin, device, kernel)) ADD_FAILURE() << problem;
      } catch (const AbiError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
}

TEST_F(OpenclKernels, TheSuiteRunnerNoticesAWrongResult) {
  kiln_device* device = plugin.open(0);
  auto suite = kiln::test::kernel_suite(plugin.info(0), 300);
  const auto& kernel = suite.front();  // ops bf16: neg first
  std::vector<kiln::test::HostArg> got = kernel.args;
  kiln::test::run_kernel(plugin, device, kernel.ops, got);
  std::vector<kiln::test::HostArg> expected = kiln::test::interpreted(kernel.ops, kernel.args);
  ASSERT_TRUE(kiln::test::compare_suite_outputs(kernel, got, expected).empty());
  auto& neg = expected[kernel.checks[0].arg];
  neg.set(5, kiln::test::float_bits(neg.dtype, kiln::test::float_value(neg.dtype, neg.get(5)) + 1));
  const auto problems = kiln::test::compare_suite_outputs(kernel, got, expected);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("1 of 300 wrong: [5]"), std::string::npos) << problems[0];
}

TEST_F(OpenclKernels, ProgramSourceIsTheOpenclC) {
  kiln_device* device = plugin.open(0);
  kiln_program* program = plugin.compile(device, kiln::test::wire_add_f32(100));
  kiln_program_source_args a{};
  a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  a.program = program;
  check(plugin.api().program_source(&a));
  EXPECT_STREQ(a.language, "opencl-c");
  const std::string text(a.text, a.text_len);
  // The group's size is fixed by the kernel, and the compiler told so.
  EXPECT_NE(text.find("__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void kiln_kernel("), std::string::npos)
      << text;
  EXPECT_NE(text.find("get_group_id(0)"), std::string::npos) << text;
  plugin.api().program_release(program);
}

TEST_F(OpenclKernels, AnOpTheDialectCannotWriteIsUnsupportedNamingTheOp) {
  kiln_device* device = plugin.open(0);
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 64);
  auto b = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 64);
  auto zero = w.const_i64(0);
  auto v = w.load(KILN_DTYPE_F32, a, zero, 5);  // OpenCL C has no 5-lane vectors
  w.store(KILN_DTYPE_F32, b, zero, v, 5);
  std::int64_t failed_op = -1;
  try {
    plugin.compile(device, w.ops, &failed_op);
    FAIL() << "compiled";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNSUPPORTED) << e.what();
    EXPECT_EQ(failed_op, static_cast<std::int64_t>(v)) << e.what();
  }
}

// Not a fixture test: one plugin instance per process at a time.
TEST(OpenclCompile, ABuildErrorIsCompileFailedWithTheLog) {
  AbiPlugin broken(kiln::test::plugin_path("opencl"), R"({"build_options": "-D__kernel=not_a_qualifier"})");
  kiln_device* device = broken.open(0);
  try {
    broken.compile(device, kiln::test::wire_add_f32(64));
    FAIL() << "compiled";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_COMPILE_FAILED) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("clBuildProgram"), std::string::npos) << what;
    EXPECT_NE(what.find("not_a_qualifier"), std::string::npos) << what;  // the build log
    EXPECT_NE(what.find("source kept in"), std::string::npos) << what;
  }
}

TEST_F(OpenclKernels, LaunchArgumentsAreChecked) {
  kiln_device* device = plugin.open(0);
  kiln_program* program = plugin.compile(device, kiln::test::wire_add_f32(64));
  kiln_buffer* small = plugin.alloc(device, 64);
  kiln_buffer* enough = plugin.alloc(device, 256);
  std::vector<kiln_arg> args(3);
  for (auto& a : args) {
    a.kind = KILN_ARG_BUFFER;
    a.dtype = KILN_DTYPE_F32;
    a.buffer = enough;
    a.bytes = 256;
  }
  args[1].buffer = small;
  args[1].bytes = 64;  // the kernel reads 64 floats
  kiln_launch_args l{};
  l.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  l.device = device;
  l.program = program;
  l.args = args.data();
  l.n_args = args.size();
  l.groups[0] = 64;
  l.groups[1] = l.groups[2] = 1;
  l.local[0] = l.local[1] = l.local[2] = 1;
  try {
    check(plugin.api().launch(&l));
    FAIL() << "launched";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("launch argument 1"), std::string::npos) << e.what();
  }
  args[1].buffer = enough;
  args[1].bytes = 256;
  args[2].kind = KILN_ARG_SCALAR;
  EXPECT_THROW(check(plugin.api().launch(&l)), AbiError);
  l.n_args = 2;
  EXPECT_THROW(check(plugin.api().launch(&l)), AbiError);
  plugin.api().buffer_free(device, small);
  plugin.api().buffer_free(device, enough);
  plugin.api().program_release(program);
}

TEST_F(OpenclKernels, TimedLaunchUsesTheDeviceTimer) {
  kiln_device* device = plugin.open(0);
  const std::int64_t n = 1 << 16;
  kiln_program* program = plugin.compile(device, kiln::test::wire_add_f32(n));
  std::vector<kiln_buffer*> buffers;
  std::vector<kiln_arg> args(3);
  std::mt19937 rng(3);
  std::vector<float> host(n);
  for (auto& a : args) {
    for (auto& x : host) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    a.kind = KILN_ARG_BUFFER;
    a.dtype = KILN_DTYPE_F32;
    a.bytes = n * sizeof(float);
    a.buffer = plugin.alloc(device, a.bytes);
    plugin.write(device, a.buffer, host.data(), a.bytes);
    buffers.push_back(a.buffer);
  }
  std::vector<std::uint64_t> samples(5, 0);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.device = device;
  t.launch.program = program;
  t.launch.args = args.data();
  t.launch.n_args = args.size();
  t.launch.groups[0] = n;
  t.launch.groups[1] = t.launch.groups[2] = 1;
  t.launch.local[0] = t.launch.local[1] = t.launch.local[2] = 1;
  t.warmups = 2;
  t.repeats = 5;
  t.samples_ns = samples.data();
  for (std::uint32_t flags : {0u, static_cast<std::uint32_t>(KILN_TIMED_FLUSH_CACHE)}) {
    t.flags = flags;
    check(plugin.api().launch_timed(&t));
    EXPECT_EQ(t.timer, static_cast<std::uint32_t>(KILN_TIMER_DEVICE));
    EXPECT_EQ(t.runs, 5u);
    EXPECT_EQ(t.aborted, 0u);
    EXPECT_GT(t.min_ns, 0u);
    EXPECT_LE(t.min_ns, t.median_ns);
    for (std::uint64_t s : samples) EXPECT_GE(s, t.min_ns);
  }
  // The kernel really ran: c = a + b.
  std::vector<float> a(n), b(n), c(n);
  plugin.read(device, buffers[0], a.data(), n * sizeof(float));
  plugin.read(device, buffers[1], b.data(), n * sizeof(float));
  plugin.read(device, buffers[2], c.data(), n * sizeof(float));
  for (std::int64_t i = 0; i < n; i += 997) EXPECT_EQ(c[i], a[i] + b[i]);
  for (kiln_buffer* buf : buffers) plugin.api().buffer_free(device, buf);
  plugin.api().program_release(program);
}
