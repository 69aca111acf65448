// The CBLAS plugin at the ABI level: matrix products in many spellings run
// as sgemm/dgemm and match a host reference on random inputs at odd sizes;
// every other kernel is refused with UNSUPPORTED naming the op.
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <cmath>
#include <random>

namespace kiln::test {
namespace {

AbiPlugin& cblas_plugin() {
  static AbiPlugin plugin(plugin_path("cblas"), "{\"threads\": 2}");
  return plugin;
}
kiln_device* device() { return cblas_plugin().open(0); }

enum class Update { AccPlusProduct, ProductPlusAcc, Mad };
enum class Scale { None, Constant, Variable };

struct Gemm {
  std::uint8_t dtype = KILN_DTYPE_F32;
  std::int64_t m = 1, n = 1, k = 1;
  bool a_transposed = false, b_transposed = false;
  Update update = Update::AccPlusProduct;
  Scale scale = Scale::None;
  double alpha = 1.0;
  bool rows_on_axis_1 = false;  // the C plugin test's layout: axis 0 = columns
  bool variable_k = false;      // K from a VARIABLE, rows padded to k_stride
  std::int64_t k_stride = 0;    // A's row length when variable_k (>= k)
};

std::string name(const Gemm& g) {
  return std::string(sdk::dtype_name(g.dtype)) + " " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
         std::to_string(g.k) + (g.a_transposed ? " At" : "") + (g.b_transposed ? " Bt" : "") + " update " +
         std::to_string(static_cast<int>(g.update)) + " scale " + std::to_string(static_cast<int>(g.scale));
}

std::uint64_t float_const(std::uint8_t dt, double v) {
  return dt == KILN_DTYPE_F32 ? std::bit_cast<std::uint32_t>(static_cast<float>(v)) : std::bit_cast<std::uint64_t>(v);
}

// The canonical kernel (as core/kernels writes it) with the variations above.
std::vector<kiln_op> gemm_kernel(const Gemm& g) {
  const std::uint8_t dt = g.dtype;
  const std::int64_t lda_k = g.variable_k ? g.k_stride : g.k;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, static_cast<std::uint64_t>(g.m * lda_k));
  auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, static_cast<std::uint64_t>(lda_k * g.n));
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, static_cast<std::uint64_t>(g.m * g.n));
  std::uint32_t next_slot = 3;
  auto alpha_param = g.scale == Scale::Variable ? w.param(KILN_PARAM_VARIABLE, dt, next_slot++) : 0;
  auto k_param = g.variable_k ? w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, next_slot++) : 0;
  auto mul = [&](WireBuilder::Id x, WireBuilder::Id y) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, x, y); };
  auto add = [&](WireBuilder::Id x, WireBuilder::Id y) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, x, y); };
  auto mm = w.const_i64(g.m), nn = w.const_i64(g.n), kk = w.const_i64(lda_k);
  auto i = w.group_index(g.rows_on_axis_1 ? 1 : 0, mm);
  auto j = w.group_index(g.rows_on_axis_1 ? 0 : 1, nn);
  auto acc = w.storage(KILN_SCOPE_REGISTER, dt, 1);
  auto zero = w.const_i64(0);
  w.store(dt, acc, zero, w.const_bits(dt, float_const(dt, 0.0)));
  auto p = w.loop(g.variable_k ? k_param : kk);
  auto x = w.load(dt, a, g.a_transposed ? add(mul(p, mm), i) : add(mul(i, kk), p));
  auto y = w.load(dt, b, g.b_transposed ? add(mul(j, kk), p) : add(mul(p, nn), j));
  auto current = w.load(dt, acc, zero);
  WireBuilder::Id next = 0;
  switch (g.update) {
    case Update::AccPlusProduct: next = w.binary(KILN_BINARY_ADD, dt, current, w.binary(KILN_BINARY_MUL, dt, x, y)); break;
    case Update::ProductPlusAcc: next = w.binary(KILN_BINARY_ADD, dt, w.binary(KILN_BINARY_MUL, dt, y, x), current); break;
    case Update::Mad: next = w.mad(dt, x, y, current); break;
  }
  w.store(dt, acc, zero, next);
  w.end_loop(p);
  auto sum = w.load(dt, acc, zero);
  if (g.scale == Scale::Constant) sum = w.binary(KILN_BINARY_MUL, dt, sum, w.const_bits(dt, float_const(dt, g.alpha)));
  if (g.scale == Scale::Variable) sum = w.binary(KILN_BINARY_MUL, dt, alpha_param, sum);
  w.store(dt, c, add(mul(i, nn), j), sum);
  return w.ops;
}

template <class T>
void check_gemm(const Gemm& g) {
  SCOPED_TRACE(name(g));
  const std::int64_t lda_k = g.variable_k ? g.k_stride : g.k;
  std::mt19937_64 rng(static_cast<std::uint64_t>(g.m * 7919 + g.n * 104729 + g.k));
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> a(static_cast<std::size_t>(g.m * lda_k)), b(static_cast<std::size_t>(lda_k * g.n));
  for (T& v : a) v = dist(rng);
  for (T& v : b) v = dist(rng);
  std::vector<HostArg> args = {HostArg::buffer(g.dtype, a.size()), HostArg::buffer(g.dtype, b.size()),
                               HostArg::buffer(g.dtype, static_cast<std::size_t>(g.m * g.n))};
  std::memcpy(args[0].bytes.data(), a.data(), args[0].bytes.size());
  std::memcpy(args[1].bytes.data(), b.data(), args[1].bytes.size());
  std::fill(args[2].bytes.begin(), args[2].bytes.end(), 0xff);  // NaNs: every element must be written
  if (g.scale == Scale::Variable) args.push_back(HostArg::value(g.dtype, float_const(g.dtype, g.alpha)));
  if (g.variable_k) args.push_back(HostArg::value(KILN_DTYPE_I64, static_cast<std::uint64_t>(g.k)));
  const auto ops = gemm_kernel(g);
  const std::string source = run_kernel(cblas_plugin(), device(), ops, args);
  EXPECT_NE(source.find(g.dtype == KILN_DTYPE_F32 ? "cblas_sgemm" : "cblas_dgemm"), std::string::npos) << source;
  const double alpha = g.scale == Scale::None ? 1.0 : g.alpha;
  for (std::int64_t r = 0; r < g.m; ++r)
    for (std::int64_t col = 0; col < g.n; ++col) {
      double want = 0;
      for (std::int64_t q = 0; q < g.k; ++q) {
        const double av = g.a_transposed ? a[q * g.m + r] : a[r * lda_k + q];
        const double bv = g.b_transposed ? b[col * lda_k + q] : b[q * g.n + col];
        want += av * bv;
      }
      want *= alpha;
      const double got = args[2].as<T>(static_cast<std::size_t>(r * g.n + col));
      const double tolerance = (sizeof(T) == 4 ? 2e-5 : 1e-12) * (1.0 + std::sqrt(static_cast<double>(g.k))) * (1 + std::fabs(alpha));
      ASSERT_NEAR(got, want, tolerance) << "C[" << r << "][" << col << "]\n" << source;
    }
}

void check_product(const Gemm& g) {
  if (g.dtype == KILN_DTYPE_F32) check_gemm<float>(g);
  else check_gemm<double>(g);
}

TEST(Cblas, DeviceInfoNamesOpenBlasAndItsKernels) {
  const kiln_device_info info = cblas_plugin().info(0);
  const std::string name = info.name;
  EXPECT_EQ(name.rfind("OpenBLAS ", 0), 0u) << name;
  EXPECT_NE(name.find('('), std::string::npos) << name;
  EXPECT_EQ(info.flags, KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_FIXED_FUNCTION);
  EXPECT_EQ(info.compute_units, 2u);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_BINARY(KILN_BINARY_MUL), 0u);
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F16], 0u);
#if defined(__x86_64__)
  // On an AVX-512 CPU, OpenBLAS must end up on AVX-512 kernels, whether it
  // chose them itself, was told by the environment, or by the plugin.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    EXPECT_TRUE(name.find("SkylakeX") != std::string::npos || name.find("Cooperlake") != std::string::npos ||
                name.find("SapphireRapids") != std::string::npos)
        << name << " / " << info.driver_version;
  }
#endif
}

TEST(Cblas, PlainProductAtOddSizes) {
  for (std::int64_t size : {1, 7, 257}) check_product({.dtype = KILN_DTYPE_F32, .m = size, .n = size, .k = size});
  for (std::int64_t size : {1, 7, 257}) check_product({.dtype = KILN_DTYPE_F64, .m = size, .n = size, .k = size});
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 257, .k = 1});
  check_product({.dtype = KILN_DTYPE_F32, .m = 1, .n = 7, .k = 257});
  check_product({.dtype = KILN_DTYPE_F64, .m = 257, .n = 1, .k = 7});
}

TEST(Cblas, BTransposed) {
  for (std::int64_t size : {1, 7, 257}) check_product({.dtype = KILN_DTYPE_F32, .m = size, .n = size, .k = size, .b_transposed = true});
  check_product({.dtype = KILN_DTYPE_F64, .m = 13, .n = 7, .k = 29, .b_transposed = true});
}

TEST(Cblas, ATransposed) {
  for (std::int64_t size : {1, 7, 257}) check_product({.dtype = KILN_DTYPE_F32, .m = size, .n = size, .k = size, .a_transposed = true});
  check_product({.dtype = KILN_DTYPE_F64, .m = 13, .n = 7, .k = 29, .a_transposed = true, .b_transposed = true});
}

TEST(Cblas, FusedScaleConstantOrVariable) {
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 9, .k = 11, .scale = Scale::Constant, .alpha = 0.125});
  check_product({.dtype = KILN_DTYPE_F32, .m = 257, .n = 7, .k = 33, .b_transposed = true, .scale = Scale::Variable, .alpha = -3.5});
  check_product({.dtype = KILN_DTYPE_F64, .m = 7, .n = 7, .k = 7, .a_transposed = true, .scale = Scale::Variable, .alpha = 2.25});
}

TEST(Cblas, AnySpellingOfTheUpdateAndAxes) {
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 13, .k = 5, .update = Update::ProductPlusAcc});
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 13, .k = 5, .update = Update::Mad});
  check_product({.dtype = KILN_DTYPE_F64, .m = 64, .n = 48, .k = 96, .update = Update::Mad, .rows_on_axis_1 = true});
  check_product({.dtype = KILN_DTYPE_F32, .m = 9, .n = 3, .k = 4, .b_transposed = true, .update = Update::ProductPlusAcc, .rows_on_axis_1 = true});
}

TEST(Cblas, TripCountFromAVariable) {
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 5, .k = 200, .variable_k = true, .k_stride = 257});
  check_product({.dtype = KILN_DTYPE_F32, .m = 7, .n = 5, .k = 0, .variable_k = true, .k_stride = 16});  // empty sum: C = 0
}

// ------------------------------------------------------------ refusals --

std::int64_t refused_at(const std::vector<kiln_op>& ops, std::string* message = nullptr) {
  std::int64_t failed_op = -2;
  try {
    cblas_plugin().compile(device(), ops, &failed_op);
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNSUPPORTED) << e.what();
    if (message != nullptr) *message = e.what();
    return failed_op;
  }
  ADD_FAILURE() << "compiled a kernel cblas cannot run";
  return failed_op;
}

TEST(Cblas, RefusesElementwiseKernelsNamingTheFirstMisfit) {
  std::string message;
  EXPECT_EQ(refused_at(wire_add_f32(100), &message), 5);  // the first load, outside any loop
  EXPECT_NE(message.find("op 5"), std::string::npos) << message;
  EXPECT_NE(message.find("matrix product"), std::string::npos) << message;
}

TEST(Cblas, RefusesProductsItCannotExpress) {
  // f16: no BLAS call.
  {
    auto ops = gemm_kernel({.dtype = KILN_DTYPE_F32, .m = 4, .n = 4, .k = 4});
    for (auto& op : ops)
      if (op.dtype == KILN_DTYPE_F32) op.dtype = KILN_DTYPE_F16;
    const std::int64_t at = refused_at(ops);
    EXPECT_GE(at, 0);
    EXPECT_EQ(ops[static_cast<std::size_t>(at)].dtype, KILN_DTYPE_F16);
  }
  // The accumulator starts at 1, not 0.
  {
    auto ops = gemm_kernel({.dtype = KILN_DTYPE_F32, .m = 4, .n = 4, .k = 4});
    for (auto& op : ops)
      if (op.kind == KILN_OP_CONST && op.dtype == KILN_DTYPE_F32) op.imm = std::bit_cast<std::uint32_t>(1.0f);
    const std::int64_t at = refused_at(ops);
    ASSERT_GE(at, 0);
    EXPECT_EQ(ops[static_cast<std::size_t>(at)].kind, KILN_OP_STORE);
  }
  // acc - a*b is not a product.
  {
    auto ops = gemm_kernel({.dtype = KILN_DTYPE_F32, .m = 4, .n = 4, .k = 4});
    for (auto& op : ops)
      if (op.kind == KILN_OP_BINARY && op.dtype == KILN_DTYPE_F32 && op.code == KILN_BINARY_ADD) op.code = KILN_BINARY_SUB;
    const std::int64_t at = refused_at(ops);
    ASSERT_GE(at, 0);
    EXPECT_EQ(ops[static_cast<std::size_t>(at)].code, KILN_BINARY_SUB);
  }
  // A triangular loop (trip count = row index).
  {
    auto ops = gemm_kernel({.dtype = KILN_DTYPE_F32, .m = 4, .n = 4, .k = 4});
    std::uint32_t row = 0;
    for (std::uint32_t id = 0; id < ops.size(); ++id)
      if (ops[id].kind == KILN_OP_INDEX && ops[id].attr == 0) row = id;
    for (auto& op : ops)
      if (op.kind == KILN_OP_LOOP) op.src[0] = row;
    const std::int64_t at = refused_at(ops);
    ASSERT_GE(at, 0);
    EXPECT_EQ(ops[static_cast<std::size_t>(at)].kind, KILN_OP_LOOP);
  }
  // Overlapping rows: A[i + p] is a Hankel matrix, not a BLAS layout.
  {
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 16);
    auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, 16);
    auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, 16);
    auto four = w.const_i64(4);
    auto i = w.group_index(0, four), j = w.group_index(1, four);
    auto acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
    auto zero = w.const_i64(0);
    w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0));
    auto p = w.loop(four);
    auto x = w.load(KILN_DTYPE_F32, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, p));
    auto y = w.load(KILN_DTYPE_F32, b, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, p, four), j));
    w.store(KILN_DTYPE_F32, acc, zero, w.mad(KILN_DTYPE_F32, x, y, w.load(KILN_DTYPE_F32, acc, zero)));
    w.end_loop(p);
    w.store(KILN_DTYPE_F32, c, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, four), j),
            w.load(KILN_DTYPE_F32, acc, zero));
    std::string message;
    EXPECT_GE(refused_at(w.ops, &message), 0);
    EXPECT_NE(message.find("overlap"), std::string::npos) << message;
  }
}

// Random op arrays and randomly damaged matmuls: a clean error (or a
// program), never a crash or an INTERNAL error.
TEST(Cblas, GarbageKernelsAreRefusedCleanly) {
  std::uint64_t state = 777;
  auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  const auto good = gemm_kernel({.m = 5, .n = 6, .k = 7});
  for (int round = 0; round < 2000; ++round) {
    std::vector<kiln_op> ops = good;
    if (round % 2 == 0) {
      ops.resize(1 + next(24));
      for (auto& op : ops) {
        op.kind = static_cast<std::uint8_t>(next(KILN_OP_KIND_COUNT + 1));
        op.dtype = static_cast<std::uint8_t>(1 + next(14));
      }
    }
    for (int edits = 0; edits < 3; ++edits) {
      kiln_op& op = ops[next(ops.size())];
      switch (next(5)) {
        case 0: op.src[next(3)] = static_cast<std::uint32_t>(next(ops.size() + 2)); break;
        case 1: op.code = static_cast<std::uint8_t>(next(21)); break;
        case 2: op.attr = static_cast<std::uint32_t>(next(5)); break;
        case 3: op.imm = next(1u << 20); break;
        default: op.dtype = static_cast<std::uint8_t>(next(16)); break;
      }
    }
    try {
      ProgramHandle p(cblas_plugin(), cblas_plugin().compile(device(), ops));
    } catch (const AbiError& e) {
      EXPECT_TRUE(e.status == KILN_STATUS_UNSUPPORTED || e.status == KILN_STATUS_INVALID_ARGUMENT) << e.what();
    }
  }
}

TEST(Cblas, ProgramSourceIsTheCall) {
  AbiPlugin& plugin = cblas_plugin();
  ProgramHandle p(plugin, plugin.compile(device(), gemm_kernel({.m = 8, .n = 8, .k = 8, .b_transposed = true})));
  kiln_program_source_args a{};
  a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  a.program = p.get();
  check(plugin.api().program_source(&a));
  EXPECT_STREQ(a.language, "blas-call");
  const std::string text(a.text, a.text_len);
  EXPECT_NE(text.find("cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans"), std::string::npos) << text;
}

TEST(Cblas, LaunchRefusesBuffersTooSmallForTheProduct) {
  AbiPlugin& plugin = cblas_plugin();
  const auto ops = gemm_kernel({.m = 8, .n = 8, .k = 8});
  ProgramHandle p(plugin, plugin.compile(device(), ops));
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_F32, 64), HostArg::buffer(KILN_DTYPE_F32, 64),
                               HostArg::buffer(KILN_DTYPE_F32, 64)};
  DeviceArgs device_args(plugin, device(), args);
  auto abi = device_args.abi();
  abi[1].bytes = 100;
  kiln_launch_args l = launch_args(ops, device(), p.get(), abi);
  try {
    check(plugin.api().launch(&l));
    FAIL();
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT) << e.what();
  }
}

// Buffers allocated by the C plugin run on cblas:0 by host pointer alone.
TEST(Cblas, RunsOnBuffersOfTheCPlugin) {
  AbiPlugin c_plugin(plugin_path("c"));
  kiln_device* c_device = c_plugin.open(0);
  const std::int64_t n = 33;
  const auto ops = gemm_kernel({.m = n, .n = n, .k = n});
  std::vector<float> a(n * n), b(n * n);
  for (std::int64_t i = 0; i < n * n; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
    b[static_cast<std::size_t>(i)] = static_cast<float>(i % 5) * 0.5f;
  }
  std::vector<HostArg> host = {HostArg::buffer(KILN_DTYPE_F32, a.size()), HostArg::buffer(KILN_DTYPE_F32, b.size()),
                               HostArg::buffer(KILN_DTYPE_F32, a.size())};
  std::memcpy(host[0].bytes.data(), a.data(), host[0].bytes.size());
  std::memcpy(host[1].bytes.data(), b.data(), host[1].bytes.size());
  DeviceArgs on_c(c_plugin, c_device, host);
  std::vector<kiln_arg> foreign = on_c.abi();
  for (kiln_arg& arg : foreign) arg.buffer = nullptr;  // as the host passes another plugin's buffers
  AbiPlugin& plugin = cblas_plugin();
  ProgramHandle p(plugin, plugin.compile(device(), ops));
  kiln_launch_args l = launch_args(ops, device(), p.get(), foreign);
  check(plugin.api().launch(&l));
  on_c.read_back(host);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (std::int64_t q = 0; q < n; ++q) want += a[i * n + q] * b[q * n + j];
      ASSERT_FLOAT_EQ(host[2].as<float>(static_cast<std::size_t>(i * n + j)), want);
    }
}

TEST(Cblas, TimedLaunch) {
  AbiPlugin& plugin = cblas_plugin();
  const auto ops = gemm_kernel({.m = 64, .n = 64, .k = 64});
  ProgramHandle p(plugin, plugin.compile(device(), ops));
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_F32, 4096), HostArg::buffer(KILN_DTYPE_F32, 4096),
                               HostArg::buffer(KILN_DTYPE_F32, 4096)};
  DeviceArgs device_args(plugin, device(), args);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(ops, device(), p.get(), device_args.abi());
  t.launch = kiln::sdk::launch_args_1_0(launch);
  t.launch_args = &launch;
  t.warmups = 1;
  t.repeats = 3;
  check(plugin.api().launch_timed(&t));
  EXPECT_EQ(t.runs, 3u);
  EXPECT_GT(t.min_ns, 0u);
  EXPECT_LE(t.min_ns, t.median_ns);
  EXPECT_EQ(t.timer, static_cast<std::uint32_t>(KILN_TIMER_HOST));
}

}  // namespace
}  // namespace kiln::test
