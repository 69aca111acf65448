// Compile and launch: plumbing, grids, LOCAL storage, timed launch, errors.
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"
#include "vulkan_fixture.hpp"

#include <kiln/sdk/wire.hpp>

#include <bit>
#include <numeric>
#include <random>

namespace kiln::test {
namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -10.0f, float hi = 10.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST_F(VulkanTest, AddF32MatchesTheHost) {
  const std::int64_t n = 1000;
  const auto a = random_floats(n, 1), b = random_floats(n, 2);
  std::vector<HostArg> args = {HostArg::of(a), HostArg::of(b), HostArg::of(std::vector<float>(n))};
  const std::string source = run_kernel(*plugin, device, wire_add_f32(n), args, {{static_cast<std::uint64_t>(n), 1, 1}});
  const auto c = args[2].values<float>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
  EXPECT_NE(source.find("#version 450"), std::string::npos);
  EXPECT_NE(source.find("gl_WorkGroupID"), std::string::npos);
}

TEST_F(VulkanTest, ProgramSourceLanguageIsGlsl) {
  kiln_program* p = plugin->compile(device, wire_add_f32(16));
  kiln_program_source_args a{};
  a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  a.program = p;
  check(plugin->api().program_source(&a));
  EXPECT_STREQ(a.language, "glsl");
  EXPECT_GT(a.text_len, 0u);
  plugin->api().program_release(p);
}

// y[i] = x[i] * s + t over a 2D grid of width w: scalars as push constants
// of different sizes (f32, i64 as the GROUP length, u8), grid axes 0 and 1.
TEST_F(VulkanTest, ScalarParamsAndTwoAxes) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1);
  auto s = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_F32, 2);
  auto width = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 3);
  auto t8 = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_U8, 4);
  auto rows = w.const_i64(7);
  auto col = w.group_index(0, width);
  auto row = w.group_index(1, rows);
  auto i = w.mad(KILN_DTYPE_I64, row, width, col);
  auto v = w.load(KILN_DTYPE_F32, x, i);
  auto t = w.cast(KILN_DTYPE_F32, t8);
  auto r = w.mad(KILN_DTYPE_F32, v, s, t);
  w.store(KILN_DTYPE_F32, y, i, r);
  const std::int64_t cols = 33;
  const auto in = random_floats(7 * cols, 3);
  std::vector<HostArg> args = {HostArg::of(in), HostArg::of(std::vector<float>(in.size())),
                               HostArg::value(KILN_DTYPE_F32, std::bit_cast<std::uint32_t>(1.5f)),
                               HostArg::value(KILN_DTYPE_I64, static_cast<std::uint64_t>(cols)),
                               HostArg::value(KILN_DTYPE_U8, 200)};
  run_kernel(*plugin, device, w.ops, args, {{static_cast<std::uint64_t>(cols), 7, 1}});
  const auto out = args[1].values<float>();
  for (std::size_t k = 0; k < in.size(); ++k) ASSERT_NEAR(out[k], in[k] * 1.5f + 200.0f, 1e-3f) << "at " << k;
}

// A grid of 3 * 65535 + 17 groups on axis 0: more than lavapipe's
// maxComputeWorkGroupCount, so launch splits it into several dispatches.
TEST_F(VulkanTest, GridLargerThanOneDispatch) {
  const std::int64_t n = 3 * 65535 + 17;
  WireBuilder w;
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_U32, 0);
  auto len = w.const_i64(n);
  auto i = w.group_index(0, len);
  auto v = w.cast(KILN_DTYPE_U32, i);
  auto k = w.const_bits(KILN_DTYPE_U32, 2654435761u);
  w.store(KILN_DTYPE_U32, out, i, w.binary(KILN_BINARY_MUL, KILN_DTYPE_U32, v, k));
  std::vector<std::uint32_t> init(n, 0);
  std::vector<HostArg> args = {HostArg::of(init)};
  run_kernel(*plugin, device, w.ops, args, {{static_cast<std::uint64_t>(n), 1, 1}});
  const auto r = args[0].values<std::uint32_t>();
  for (std::int64_t j = 0; j < n; ++j)
    ASSERT_EQ(r[j], static_cast<std::uint32_t>(j) * 2654435761u) << "at " << j;
}

// Tree reduction in LOCAL storage with barriers: each group of 64 threads
// sums 64 floats; stride halves every step (a LOOP of log2(64) steps).
TEST_F(VulkanTest, LocalStorageTreeReduction) {
  const std::int64_t threads = 64, groups = 37;
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto sums = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1);
  auto shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, threads);
  auto nt = w.const_i64(threads);
  auto g = w.group_index(0, w.const_i64(groups));
  auto l = w.local_index(0, nt);
  auto gi = w.mad(KILN_DTYPE_I64, g, nt, l);
  w.store(KILN_DTYPE_F32, shared, l, w.load(KILN_DTYPE_F32, x, gi));
  w.barrier();
  auto steps = w.loop(w.const_i64(6));
  {
    // stride = 32 >> step
    auto stride = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, w.const_i64(threads / 2), steps);
    auto active = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, l, stride));
    auto other = w.load(KILN_DTYPE_F32, shared, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, l, stride));
    auto mine = w.load(KILN_DTYPE_F32, shared, l);
    w.store(KILN_DTYPE_F32, shared, l, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, mine, other));
    w.end_if(active);
    w.barrier();
  }
  w.end_loop(steps);
  auto first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, l, w.const_i64(0)));
  w.store(KILN_DTYPE_F32, sums, g, w.load(KILN_DTYPE_F32, shared, w.const_i64(0)));
  w.end_if(first);

  const auto in = random_floats(threads * groups, 4, 0.0f, 1.0f);
  std::vector<HostArg> args = {HostArg::of(in), HostArg::of(std::vector<float>(groups))};
  run_kernel(*plugin, device, w.ops, args, {{groups, 1, 1}, {64, 1, 1}});
  const auto r = args[1].values<float>();
  for (std::int64_t k = 0; k < groups; ++k) {
    double expect = 0;
    for (std::int64_t t = 0; t < threads; ++t) expect += in[k * threads + t];
    ASSERT_NEAR(r[k], expect, 1e-4) << "group " << k;
  }
}

TEST_F(VulkanTest, TimedLaunchReportsDeviceTimes) {
  const std::int64_t n = 4096;
  kiln_program* p = plugin->compile(device, wire_add_f32(n));
  std::vector<kiln_buffer*> buffers;
  std::vector<kiln_arg> args(3);
  const auto data = random_floats(n, 5);
  for (int i = 0; i < 3; ++i) {
    buffers.push_back(plugin->alloc(device, n * 4));
    plugin->write(device, buffers[i], data.data(), n * 4);
    args[i].kind = KILN_ARG_BUFFER;
    args[i].buffer = buffers[i];
    args[i].bytes = n * 4;
  }
  std::vector<std::uint64_t> samples(5, 0);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.device = device;
  t.launch.program = p;
  t.launch.args = args.data();
  t.launch.n_args = 3;
  t.launch.groups[0] = n;
  t.launch.groups[1] = t.launch.groups[2] = 1;
  t.launch.local[0] = t.launch.local[1] = t.launch.local[2] = 1;
  t.warmups = 2;
  t.repeats = 5;
  t.samples_ns = samples.data();
  check(plugin->api().launch_timed(&t));
  EXPECT_EQ(t.runs, 5u);
  EXPECT_EQ(t.aborted, 0u);
  const bool device_timer = info.flags & KILN_DEVICE_DEVICE_TIMER;
  EXPECT_EQ(t.timer, device_timer ? KILN_TIMER_DEVICE : KILN_TIMER_HOST);
  EXPECT_GT(t.min_ns, 0u);
  EXPECT_LE(t.min_ns, t.median_ns);
  for (auto s : samples) EXPECT_GE(s, t.min_ns);
  // The kernel really ran: c = a + b with a = b = data.
  std::vector<float> c(n);
  plugin->read(device, buffers[2], c.data(), n * 4);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], data[i] + data[i]);
  for (auto* b : buffers) plugin->api().buffer_free(device, b);
  plugin->api().program_release(p);
}

TEST_F(VulkanTest, LaunchArgumentMismatchesAreInvalid) {
  kiln_program* p = plugin->compile(device, wire_add_f32(8));
  kiln_buffer* b = plugin->alloc(device, 32);
  std::vector<kiln_arg> args(3);
  for (auto& a : args) {
    a.kind = KILN_ARG_BUFFER;
    a.buffer = b;
    a.bytes = 32;
  }
  kiln_launch_args l{};
  l.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  l.device = device;
  l.program = p;
  l.args = args.data();
  l.n_args = 2;  // one missing
  l.groups[0] = 8;
  l.groups[1] = l.groups[2] = 1;
  l.local[0] = l.local[1] = l.local[2] = 1;
  try {
    check(plugin->api().launch(&l));
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("3 params"), std::string::npos) << e.what();
  }
  l.n_args = 3;
  args[1].kind = KILN_ARG_SCALAR;
  EXPECT_THROW(check(plugin->api().launch(&l)), AbiError);
  args[1].kind = KILN_ARG_BUFFER;
  args[1].bytes = 64;  // more than the buffer
  EXPECT_THROW(check(plugin->api().launch(&l)), AbiError);
  args[1].bytes = 32;
  l.local[0] = 2;  // not the kernel's local size
  EXPECT_THROW(check(plugin->api().launch(&l)), AbiError);
  plugin->api().buffer_free(device, b);
  plugin->api().program_release(p);
}

TEST_F(VulkanTest, BindingBeyondMaxStorageBufferRangeIsUnsupported) {
  // lavapipe binds at most 128 MiB per buffer; other devices may allow more.
  if (std::string(info.name).find("llvmpipe") == std::string::npos) GTEST_SKIP() << "lavapipe only";
  const std::uint64_t bytes = (128ull << 20) + 4;
  kiln_program* p = plugin->compile(device, wire_add_f32(16));
  kiln_buffer* big = plugin->alloc(device, bytes);
  std::vector<kiln_arg> args(3);
  for (auto& a : args) {
    a.kind = KILN_ARG_BUFFER;
    a.buffer = big;
    a.bytes = bytes;
  }
  kiln_launch_args l{};
  l.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  l.device = device;
  l.program = p;
  l.args = args.data();
  l.n_args = 3;
  l.groups[0] = 16;
  l.groups[1] = l.groups[2] = 1;
  l.local[0] = l.local[1] = l.local[2] = 1;
  try {
    check(plugin->api().launch(&l));
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos) << e.what();
  }
  plugin->api().buffer_free(device, big);
  plugin->api().program_release(p);
}

TEST_F(VulkanTest, UnsupportedOpNamesTheOp) {
  // f64 exp has no GLSL spelling: UNSUPPORTED, failed_op = the UNARY.
  if (info.dtype_ops[KILN_DTYPE_F64] == 0) GTEST_SKIP() << "no f64 on this device";
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F64, 0);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F64, 1);
  auto i = w.group_index(0, w.const_i64(4));
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F64, w.load(KILN_DTYPE_F64, x, i));
  w.store(KILN_DTYPE_F64, y, i, e);
  std::int64_t failed = -2;
  try {
    plugin->compile(device, w.ops, &failed);
    FAIL() << "expected an error";
  } catch (const AbiError& err) {
    EXPECT_EQ(err.status, KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(failed, static_cast<std::int64_t>(e));
    EXPECT_NE(std::string(err.what()).find("exp"), std::string::npos) << err.what();
  }
}

TEST_F(VulkanTest, UnknownOpKindIsUnsupported) {
  auto ops = wire_add_f32(4);
  ops[5].kind = 200;  // the first LOAD
  std::int64_t failed = -2;
  try {
    plugin->compile(device, ops, &failed);
    FAIL() << "expected an error";
  } catch (const AbiError& err) {
    EXPECT_EQ(err.status, KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(failed, 5);
  }
}

TEST_F(VulkanTest, CacheKeyNamesCompilerAndDevice) {
  kiln_cache_key_args a{};
  a.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  a.device = device;
  check(plugin->api().cache_key(&a));
  const std::string key = a.key;
  EXPECT_NE(key.find("glslang"), std::string::npos) << key;
  EXPECT_NE(key.find(info.name), std::string::npos) << key;
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

TEST_F(VulkanTest, TimedLaunchWithCacheFlushRuns) {
  kiln_program* p = plugin->compile(device, wire_add_f32(64));
  kiln_buffer* b = plugin->alloc(device, 256);
  const auto data = random_floats(64, 9);
  plugin->write(device, b, data.data(), 256);
  std::vector<kiln_arg> args(3);
  for (auto& a : args) {
    a.kind = KILN_ARG_BUFFER;
    a.buffer = b;
    a.bytes = 256;
  }
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch.device = device;
  t.launch.program = p;
  t.launch.args = args.data();
  t.launch.n_args = 3;
  t.launch.groups[0] = 64;
  t.launch.groups[1] = t.launch.groups[2] = 1;
  t.launch.local[0] = t.launch.local[1] = t.launch.local[2] = 1;
  t.repeats = 2;
  t.flags = KILN_TIMED_FLUSH_CACHE;
  check(plugin->api().launch_timed(&t));
  EXPECT_EQ(t.runs, 2u);
  // In place, c = a + b with a = b = c: two runs quadruple the data.
  std::vector<float> c(64);
  plugin->read(device, b, c.data(), 256);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(c[i], data[i] * 4.0f);
  plugin->api().buffer_free(device, b);
  plugin->api().program_release(p);
}

TEST_F(VulkanTest, TooMuchLocalStorageIsUnsupported) {
  WireBuilder w;
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0);
  auto big = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, info.local_memory_bytes / 4 + 1);
  auto i = w.group_index(0, w.const_i64(1));
  w.store(KILN_DTYPE_F32, big, i, w.const_f32(1.0f));
  w.store(KILN_DTYPE_F32, out, i, w.load(KILN_DTYPE_F32, big, i));
  std::int64_t failed = -2;
  try {
    plugin->compile(device, w.ops, &failed);
    FAIL() << "expected an error";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(failed, static_cast<std::int64_t>(big));
  }
}

// Mutated kernels: compile may accept or reject them, never crash.
TEST_F(VulkanTest, MutatedKernelsNeverCrash) {
  std::mt19937 rng(11);
  const auto base = wire_add_f32(8);
  int accepted = 0;
  for (int trial = 0; trial < 150; ++trial) {
    auto ops = base;
    kiln_op& op = ops[rng() % ops.size()];
    switch (rng() % 6) {
      case 0: op.kind = static_cast<std::uint8_t>(rng() % 24); break;
      case 1: op.dtype = static_cast<std::uint8_t>(rng() % 16); break;
      case 2: op.lanes = static_cast<std::uint8_t>(rng() % 6); break;
      case 3: op.code = static_cast<std::uint8_t>(rng() % 24); break;
      case 4: op.src[rng() % 3] = static_cast<std::uint32_t>(rng() % 12); break;
      default: op.attr = static_cast<std::uint32_t>(rng() % 5); break;
    }
    kiln_kernel k{KILN_KERNEL_STRUCT_SIZE, ops.data(), ops.size(), sizeof(kiln_op)};
    kiln_compile_args a{};
    a.struct_size = KILN_COMPILE_ARGS_STRUCT_SIZE;
    a.device = device;
    a.kernel = &k;
    kiln_error* e = plugin->api().compile(&a);
    if (e == nullptr) {
      ++accepted;
      plugin->api().program_release(a.program);
    } else {
      HostError* he = reinterpret_cast<HostError*>(e);
      EXPECT_NE(he->status, KILN_STATUS_INTERNAL) << he->message;
      EXPECT_FALSE(he->message.empty());
      delete he;
    }
  }
  EXPECT_GT(accepted, 0);  // some mutations are harmless
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// Every GROUP and LOCAL axis: out[flat id] = flat id, with groups (3, 2, 4)
// and local sizes (4, 2, 2); then a REGISTER array reversed per thread.
TEST_F(VulkanTest, ThreeAxesAndRegisterStorage) {
  const std::int64_t g[3] = {3, 2, 4}, l[3] = {4, 2, 2};
  WireBuilder w;
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 0);
  auto rev = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 1);
  auto regs = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I32, 3);
  WireBuilder::Id gi[3], li[3];
  for (std::uint32_t a = 0; a < 3; ++a) {
    gi[a] = w.group_index(a, w.const_i64(g[a]));
    li[a] = w.local_index(a, w.const_i64(l[a]));
  }
  // global coordinate per axis: group * local_size + local
  WireBuilder::Id x[3];
  for (int a = 0; a < 3; ++a) x[a] = w.mad(KILN_DTYPE_I64, gi[a], w.const_i64(l[a]), li[a]);
  const std::int64_t nx = g[0] * l[0], ny = g[1] * l[1];
  auto flat = w.mad(KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, x[2], w.const_i64(ny), x[1]), w.const_i64(nx), x[0]);
  auto value = w.cast(KILN_DTYPE_I32, flat);
  w.store(KILN_DTYPE_I32, out, flat, value);
  for (int k = 0; k < 3; ++k)
    w.store(KILN_DTYPE_I32, regs, w.const_i64(k),
            w.binary(KILN_BINARY_ADD, KILN_DTYPE_I32, value, w.const_bits(KILN_DTYPE_I32, static_cast<std::uint64_t>(k))));
  auto base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, flat, w.const_i64(3));
  for (int k = 0; k < 3; ++k)
    w.store(KILN_DTYPE_I32, rev, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, w.const_i64(k)),
            w.load(KILN_DTYPE_I32, regs, w.const_i64(2 - k)));
  const std::int64_t total = nx * ny * g[2] * l[2];
  std::vector<HostArg> args = {HostArg::of(std::vector<std::int32_t>(total, -1)),
                               HostArg::of(std::vector<std::int32_t>(total * 3, -1))};
  run_kernel(*plugin, device, w.ops, args,
             {{static_cast<std::uint64_t>(g[0]), static_cast<std::uint64_t>(g[1]), static_cast<std::uint64_t>(g[2])},
              {static_cast<std::uint32_t>(l[0]), static_cast<std::uint32_t>(l[1]), static_cast<std::uint32_t>(l[2])}});
  const auto o = args[0].values<std::int32_t>(), r = args[1].values<std::int32_t>();
  for (std::int64_t i = 0; i < total; ++i) {
    ASSERT_EQ(o[i], i);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(r[i * 3 + k], i + 2 - k);
  }
}

}  // namespace
}  // namespace kiln::test
