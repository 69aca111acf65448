// Compile and launch through real plugins (the C test plugins interpret
// kernels): argument checks, the grid from the kernel, host-memory sharing
// between devices, asynchronous launches, timed launches, plugin errors.
#include "runtime/handles_fixture.hpp"
#include "support/wire_builder.hpp"

#include <gmock/gmock.h>

#include <thread>

namespace {

using kiln::test::WireBuilder;
using ::testing::HasSubstr;

constexpr std::int64_t kLocal = 8;

// out[i] = a[i] * s + b[i], i = group * 8 + local; the number of groups is
// the VARIABLE param `groups` (slot 4). `elements` is the params' known
// element count (0: unknown).
kiln::ir::Kernel axpy_kernel(std::uint64_t elements = 0, std::int64_t local = kLocal) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, elements);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, elements);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, elements);
  auto s = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_F32, 3);
  auto groups = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 4);
  auto width = w.const_i64(local);
  auto g = w.group_index(0, groups);
  auto l = w.local_index(0, width);
  auto i = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, width), l);
  auto x = w.load(KILN_DTYPE_F32, a, i);
  auto y = w.load(KILN_DTYPE_F32, b, i);
  w.store(KILN_DTYPE_F32, out, i, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, x, s), y));
  return kiln::ir::Kernel::from_wire(w.ops);
}

class Launches : public kiln::test::HandlesTest {
 protected:
  static constexpr std::int64_t kGroups = 37;
  static constexpr std::size_t kN = kGroups * kLocal;

  // Frozen and trusted: the test plugin runs only loads, stores and three
  // arithmetic ops, not the comparisons a bounds guard adds; these tests are
  // about the launch's argument checks. Why the default policy would guard:
  // the index g * 8 + l is bounded by the VARIABLE `groups`, so the
  // classifier rightly says "at launch" (no compile-time range exists), and
  // under "guard" an at-launch access into memory of known length
  // (axpy_kernel(kN)) is guarded rather than proved per launch, so the
  // kernel runs with any scalars (docs/ir.md, the bounds policy). Not a gap
  // in the value ranges; with unknown lengths (axpy_kernel()) it is proved
  // at launch and not rewritten.
  kiln::Program compile(const kiln::Device& device, const kiln::ir::Kernel& kernel) {
    kiln::Result<kiln::Program> program =
        device.compile(kernel, {.mode = kiln::CompileMode::Frozen, .bounds = kiln::passes::BoundsPolicy::Trust});
    EXPECT_TRUE(program.ok()) << program.error().to_string();
    return program.ok() ? std::move(program).value() : kiln::Program{};
  }

  std::vector<float> expected(const std::vector<float>& a, const std::vector<float>& b, float s) {
    std::vector<float> out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] * s + b[i];
    return out;
  }

  void expect_floats(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], want[i]) << "element " << i;
  }
};

TEST_F(Launches, AxpyOnRandomInputs) {
  const std::vector<float> a = random_floats(kN), b = random_floats(kN);
  const float s = random_floats(1)[0];
  kiln::Buffer ba = allocate(host, kN * 4), bb = allocate(host, kN * 4), bout = allocate(host, kN * 4);
  ASSERT_TRUE(ba.write(bytes_of(a)).ok());
  ASSERT_TRUE(bb.write(bytes_of(b)).ok());
  const kiln::Program program = compile(host, axpy_kernel());
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb),
                                  kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(s),
                                  kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::Result<kiln::Event> done = host.launch(program, args);
  ASSERT_TRUE(done.ok()) << done.error().to_string();
  ASSERT_TRUE(done->wait().ok());
  std::vector<float> out(kN);
  ASSERT_TRUE(bout.read(bytes_of(out)).ok());
  expect_floats(out, expected(a, b, s));
}

TEST_F(Launches, AsynchronousLaunchRunsInQueueOrder) {
  const std::vector<float> a = random_floats(kN), b = random_floats(kN);
  const float s = 1.5f;
  kiln::Buffer ba = allocate(queue, kN * 4), bb = allocate(queue, kN * 4), bout = allocate(queue, kN * 4);
  ASSERT_TRUE(ba.write(bytes_of(a)).ok());
  ASSERT_TRUE(bb.write(bytes_of(b)).ok());
  const std::vector<float> zeros(kN, 0.0f);
  ASSERT_TRUE(bout.write(bytes_of(zeros)).ok());
  const kiln::Program program = compile(queue, axpy_kernel());
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb),
                                  kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(s),
                                  kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::Result<kiln::Event> launched = queue.launch(program, args);
  ASSERT_TRUE(launched.ok()) << launched.error().to_string();
  EXPECT_FALSE(launched->complete());
  // Not run yet: the output buffer still holds zeros.
  EXPECT_EQ(std::memcmp(bout.host_pointer(), zeros.data(), kN * 4), 0);
  // A read queued behind the launch sees its result.
  std::vector<float> out(kN);
  ASSERT_TRUE(bout.read(bytes_of(out)).ok());
  expect_floats(out, expected(a, b, s));
}

TEST_F(Launches, HostMemoryDevicesShareBuffersWithoutCopies) {
  // Inputs live on host:0, the output on queue:0; the launch runs on queue:0
  // through the buffers' host pointers, and is over when launch returns.
  const std::vector<float> a = random_floats(kN), b = random_floats(kN);
  kiln::Buffer ba = allocate(host, kN * 4), bb = allocate(host, kN * 4), bout = allocate(queue, kN * 4);
  ASSERT_TRUE(ba.write(bytes_of(a)).ok());
  ASSERT_TRUE(bb.write(bytes_of(b)).ok());
  const kiln::Program program = compile(queue, axpy_kernel());
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb),
                                  kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(-2.0f),
                                  kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::Result<kiln::Event> launched = queue.launch(program, args);
  ASSERT_TRUE(launched.ok()) << launched.error().to_string();
  EXPECT_TRUE(launched->complete());
  std::vector<float> out(kN);
  std::memcpy(out.data(), bout.host_pointer(), kN * 4);
  expect_floats(out, expected(a, b, -2.0f));
}

TEST_F(Launches, ArgumentsAreCheckedAgainstTheParams) {
  kiln::Buffer ba = allocate(host, kN * 4), bout = allocate(host, kN * 4);
  const kiln::Program program = compile(host, axpy_kernel(kN));
  auto launch_error = [&](std::vector<kiln::LaunchArg> args) {
    kiln::Result<kiln::Event> result = host.launch(program, args);
    EXPECT_FALSE(result.ok());
    if (result.ok()) return std::string();
    EXPECT_EQ(result.error().code, kiln::ErrorCode::InvalidArgument);
    EXPECT_EQ(result.error().function, "launch");
    return result.error().message;
  };
  using kiln::LaunchArg;
  EXPECT_EQ(launch_error({LaunchArg::buffer(ba)}), "host:0: the kernel has 5 params, got 1 arguments");
  EXPECT_EQ(launch_error({LaunchArg::buffer(ba), LaunchArg::value(1.0f), LaunchArg::buffer(bout),
                          LaunchArg::value(1.0f), LaunchArg::value<std::int64_t>(kGroups)}),
            "host:0: argument 1: the param is a global f32 buffer, got a scalar");
  EXPECT_EQ(launch_error({LaunchArg::buffer(ba), LaunchArg::buffer(ba), LaunchArg::buffer(bout),
                          LaunchArg::buffer(ba), LaunchArg::value<std::int64_t>(kGroups)}),
            "host:0: argument 3: the param is a var f32, got a buffer");
  EXPECT_EQ(launch_error({LaunchArg::buffer(ba), LaunchArg::buffer(ba), LaunchArg::buffer(bout),
                          LaunchArg::value(1.0), LaunchArg::value<std::int64_t>(kGroups)}),
            "host:0: argument 3: the param is a var f32, got a f64");
  kiln::Buffer small = allocate(host, kN * 4 - 4);
  EXPECT_EQ(launch_error({LaunchArg::buffer(ba), LaunchArg::buffer(small), LaunchArg::buffer(bout),
                          LaunchArg::value(1.0f), LaunchArg::value<std::int64_t>(kGroups)}),
            "host:0: argument 1: the buffer has 1180 bytes, the param needs 296 f32 (1184 bytes)");
}

TEST_F(Launches, TheGridIsCheckedAgainstTheDeviceLimits) {
  kiln::Buffer ba = allocate(host, 4096 * 4), bout = allocate(host, 4096 * 4);
  using kiln::LaunchArg;
  {
    // 128 threads per group: the device allows 64 on axis 0. A constant
    // group size is refused when compiled (device limits, before the plugin).
    kiln::Result<kiln::Program> program = host.compile(
        axpy_kernel(0, 128), {.mode = kiln::CompileMode::Frozen, .bounds = kiln::passes::BoundsPolicy::Trust});
    ASSERT_FALSE(program.ok());
    EXPECT_NE(program.error().message.find("128 threads per work-group on axis 0, past the device's maximum of 64"),
              std::string::npos)
        << program.error().to_string();
  }
  const kiln::Program program = compile(host, axpy_kernel());
  const LaunchArg too_many[] = {LaunchArg::buffer(ba), LaunchArg::buffer(ba), LaunchArg::buffer(bout),
                                LaunchArg::value(1.0f), LaunchArg::value<std::int64_t>(std::int64_t{1} << 21)};
  EXPECT_EQ(host.launch(program, too_many).error().message,
            "host:0: launch grid: 2097152 work-groups on axis 0, the device allows 1048576");
  const LaunchArg none[] = {LaunchArg::buffer(ba), LaunchArg::buffer(ba), LaunchArg::buffer(bout),
                            LaunchArg::value(1.0f), LaunchArg::value<std::int64_t>(0)};
  kiln::Result<kiln::Event> result = host.launch(program, none);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, 6);
  EXPECT_THAT(result.error().message, HasSubstr("index length evaluates to 0"));
}

TEST_F(Launches, BuffersOfANonHostMemoryDeviceAreNotShared) {
  // Both test devices are host-memory devices, so sharing works; a program
  // of one device cannot be launched on another, though.
  const kiln::Program program = compile(host, axpy_kernel());
  kiln::Buffer ba = allocate(queue, kN * 4);
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(ba),
                                  kiln::LaunchArg::buffer(ba), kiln::LaunchArg::value(1.0f),
                                  kiln::LaunchArg::value<std::int64_t>(1)};
  EXPECT_EQ(queue.launch(program, args).error().message, "queue:0: the program was compiled for host:0");
}

TEST_F(Launches, PluginErrorsCarryPluginFunctionAndMessage) {
  // 40 groups of 8 read past the 296-element buffers: the plugin reports it.
  kiln::Buffer ba = allocate(host, kN * 4), bout = allocate(host, kN * 4);
  const kiln::Program program = compile(host, axpy_kernel());
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(ba),
                                  kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(1.0f),
                                  kiln::LaunchArg::value<std::int64_t>(40)};
  kiln::Result<kiln::Event> result = host.launch(program, args);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, kiln::ErrorCode::LaunchFailed);
  EXPECT_EQ(result.error().plugin, "host");
  EXPECT_EQ(result.error().function, "launch");
  EXPECT_EQ(result.error().device, "host:0");
  EXPECT_EQ(result.error().message, "op 10: element 296 out of range");
  // Context once each: the device, the function, the plugin's own words.
  EXPECT_EQ(result.error().to_string(), "host:0: launch: op 10: element 296 out of range");
}

TEST_F(Launches, CompileReportsTheUnsupportedOp) {
  WireBuilder w;
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 4);
  auto n = w.const_i64(4);
  auto i = w.loop(n);
  w.store(KILN_DTYPE_F32, out, i, w.const_f32(1.0f));
  w.end_loop(i);
  kiln::Result<kiln::Program> program = host.compile(kiln::ir::Kernel::from_wire(w.ops), {.mode = kiln::CompileMode::Frozen});
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().code, kiln::ErrorCode::Unsupported);
  EXPECT_EQ(program.error().op, 2);
  EXPECT_EQ(program.error().plugin, "host");
  EXPECT_EQ(program.error().function, "compile");
  EXPECT_THAT(program.error().to_string(), HasSubstr("host:0: compile: op 2: "));
}

TEST_F(Launches, ProgramSourceAndCacheKey) {
  const kiln::Program program = compile(host, axpy_kernel());
  kiln::Result<kiln::ProgramSource> source = program.source();
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source->language, "test-interpreter");
  EXPECT_EQ(source->text, "interpreted: 15 ops");
  EXPECT_EQ(program.wire().size(), 15u);
  EXPECT_EQ(host.cache_key().value(), "kiln test device (host) 1.0");
}

TEST_F(Launches, TimedLaunchReportsEveryRun) {
  const std::vector<float> a = random_floats(kN), b = random_floats(kN);
  kiln::Buffer ba = allocate(host, kN * 4), bb = allocate(host, kN * 4), bout = allocate(host, kN * 4);
  ASSERT_TRUE(ba.write(bytes_of(a)).ok());
  ASSERT_TRUE(bb.write(bytes_of(b)).ok());
  const kiln::Program program = compile(host, axpy_kernel());
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb),
                                  kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(3.0f),
                                  kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::TimedLaunchOptions options;
  options.warmups = 2;
  options.repeats = 5;
  kiln::Result<kiln::Timing> timing = host.timed_launch(program, args, options);
  ASSERT_TRUE(timing.ok()) << timing.error().to_string();
  EXPECT_EQ(timing->runs, 5u);
  EXPECT_FALSE(timing->aborted);
  EXPECT_EQ(timing->timer, kiln::TimerKind::Host);
  ASSERT_EQ(timing->samples_ns.size(), 5u);
  EXPECT_EQ(timing->min_ns, *std::min_element(timing->samples_ns.begin(), timing->samples_ns.end()));
  EXPECT_LE(timing->min_ns, timing->median_ns);
  std::vector<float> out(kN);
  ASSERT_TRUE(bout.read(bytes_of(out)).ok());
  expect_floats(out, expected(a, b, 3.0f));
  options.repeats = 0;
  EXPECT_EQ(host.timed_launch(program, args, options).error().message, "host:0: repeats must be at least 1");
}

TEST_F(Launches, ThreadsShareADeviceSafely) {
  // The test plugin keeps one scratch array for all launches: only the
  // runtime's per-device serialisation keeps concurrent launches apart.
  // Compiles run concurrently (the ABI allows it).
  constexpr int kThreads = 4;
  constexpr int kRounds = 8;
  constexpr std::int64_t kBigGroups = 2048;  // long launches, so threads overlap
  constexpr std::size_t kBigN = kBigGroups * kLocal;
  std::vector<std::vector<float>> inputs;
  for (int t = 0; t < 2 * kThreads; ++t) inputs.push_back(random_floats(kBigN));
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float>& a = inputs[2 * t];
      const std::vector<float>& b = inputs[2 * t + 1];
      kiln::Result<kiln::Program> program = host.compile(axpy_kernel(), {.mode = kiln::CompileMode::Frozen});
      kiln::Result<kiln::Buffer> ba = host.allocate(kBigN * 4), bb = host.allocate(kBigN * 4), bout = host.allocate(kBigN * 4);
      if (!program.ok() || !ba.ok() || !bb.ok() || !bout.ok() || !ba->write(bytes_of(a)).ok() ||
          !bb->write(bytes_of(b)).ok()) {
        ++failures[t];
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const float s = static_cast<float>(t * kRounds + round);
        const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(*ba), kiln::LaunchArg::buffer(*bb),
                                        kiln::LaunchArg::buffer(*bout), kiln::LaunchArg::value(s),
                                        kiln::LaunchArg::value<std::int64_t>(kBigGroups)};
        std::vector<float> out(kBigN);
        if (!host.launch(*program, args).ok() || !bout->read(bytes_of(out)).ok()) {
          ++failures[t];
          continue;
        }
        for (std::size_t i = 0; i < kBigN; ++i)
          if (out[i] != a[i] * s + b[i]) {
            ++failures[t];
            break;
          }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(kThreads, 0));
}

TEST_F(Launches, LaunchArgValueTypes) {
  EXPECT_EQ(kiln::LaunchArg::value(std::int32_t{-1}).dtype(), kiln::ir::DType::I32);
  EXPECT_EQ(kiln::LaunchArg::value(std::int32_t{-1}).bits(), 0xffffffffu);
  EXPECT_EQ(kiln::LaunchArg::value(std::uint8_t{200}).dtype(), kiln::ir::DType::U8);
  EXPECT_EQ(kiln::LaunchArg::value(1.0f).bits(), 0x3f800000u);
  EXPECT_EQ(kiln::LaunchArg::value(true).dtype(), kiln::ir::DType::Bool);
  EXPECT_EQ(kiln::LaunchArg::value(2.0).bits(), 0x4000000000000000u);
}

}  // namespace

namespace {

// An invalid kernel never reaches the plugin: compile runs the IR verifier
// first and names the op and the rule.
TEST_F(Launches, CompileRejectsAnInvalidKernelBeforeThePluginSeesIt) {
  kiln::ir::Kernel kernel = axpy_kernel();
  kernel.ops[kernel.ops.size() - 1].src[0] = 999;  // the STORE's memory operand names no op
  kiln::Result<kiln::Program> program = host.compile(kernel);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().code, kiln::ErrorCode::Verify);
  EXPECT_EQ(program.error().function, "compile");
  EXPECT_EQ(program.error().op, static_cast<std::int64_t>(kernel.ops.size() - 1));
}

}  // namespace

namespace {

// kernel_ir.h: a written buffer is bound to one param only; read-only
// params may share a buffer.
TEST_F(Launches, AWrittenBufferBoundTwiceIsRefused) {
  kiln::Buffer ba = allocate(host, kN * 4), bout = allocate(host, kN * 4);
  ASSERT_TRUE(ba.write(bytes_of(random_floats(kN))).ok());
  const kiln::Program program = compile(host, axpy_kernel());
  const kiln::LaunchArg shared_inputs[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(ba),
                                           kiln::LaunchArg::buffer(bout), kiln::LaunchArg::value(2.0f),
                                           kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::Result<kiln::Event> ok = host.launch(program, shared_inputs);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  const kiln::LaunchArg in_place[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bout),
                                      kiln::LaunchArg::buffer(ba), kiln::LaunchArg::value(2.0f),
                                      kiln::LaunchArg::value<std::int64_t>(kGroups)};
  kiln::Result<kiln::Event> refused = host.launch(program, in_place);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("arguments 0 and 2 are the same buffer"));
}

}  // namespace
