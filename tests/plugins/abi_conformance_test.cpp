// Plugin conformance at the ABI level: the same cases on every plugin found
// in the build's plugin directory (a new plugin joins by being built there;
// a third-party one by pointing KILN_CONFORMANCE_PLUGIN_DIR at its folder).
//
// A plugin whose init fails with UNAVAILABLE (no driver, no device) is
// skipped with its reason; a kernel a plugin answers UNSUPPORTED for is
// skipped (that answer is legal); anything else must match the host
// reference on random inputs. Options for a plugin's init come from
// $KILN_CONFORMANCE_OPTIONS_<NAME> (JSON), default "{}".
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/reference_ops.hpp"
#include "support/wire_builder.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

std::string plugin_dir() {
  const char* dir = std::getenv("KILN_CONFORMANCE_PLUGIN_DIR");
  return dir != nullptr ? dir : KILN_PLUGIN_DIR;
}

std::vector<std::string> discovered_plugins() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plugin_dir(), ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("libkiln-", 0) == 0 && entry.path().extension() == ".so") names.push_back(file.substr(8, file.size() - 11));
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("none-built");
  return names;
}

// One initialised instance per plugin for the whole run, or why there is none.
struct Loaded {
  std::unique_ptr<AbiPlugin> plugin;
  std::string skip_reason;
};

std::map<std::string, Loaded>& loaded_plugins() {
  static std::map<std::string, Loaded> loaded;
  return loaded;
}

// Plugins are shut down when the tests end, not from static destructors at
// exit (by then a plugin's own statics may be gone).
class ShutDownPlugins : public ::testing::Environment {
 public:
  void TearDown() override { loaded_plugins().clear(); }
};
[[maybe_unused]] const auto* const kShutDown = ::testing::AddGlobalTestEnvironment(new ShutDownPlugins);

Loaded& load(const std::string& name) {
  auto& loaded = loaded_plugins();
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  Loaded& l = loaded[name];
  std::string env = "KILN_CONFORMANCE_OPTIONS_" + name;
  for (char& ch : env) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const char* options = std::getenv(env.c_str());
  try {
    l.plugin = std::make_unique<AbiPlugin>(plugin_dir() + "/libkiln-" + name + ".so", options != nullptr ? options : "{}");
    if (l.plugin->device_count() == 0) l.skip_reason = name + ": no devices";
  } catch (const AbiError& e) {
    if (e.status != KILN_STATUS_UNAVAILABLE) throw;
    l.skip_reason = name + " unavailable: " + e.what();
  }
  return l;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "none-built") GTEST_SKIP() << "no plugin in " << plugin_dir();
    Loaded& l = load(GetParam());
    if (!l.skip_reason.empty()) GTEST_SKIP() << l.skip_reason;
    plugin_ = l.plugin.get();
    device_ = plugin_->open(0);
    info_ = plugin_->info(0);
  }

  // Runs the kernel; false (and the test is skipped) when the plugin answers
  // UNSUPPORTED at compile.
  bool run(const std::vector<kiln_op>& ops, std::vector<HostArg>& args) {
    try {
      ProgramHandle program(*plugin_, plugin_->compile(device_, ops));
      DeviceArgs device_args(*plugin_, device_, args);
      kiln_launch_args l = launch_args(ops, device_, program.get(), device_args.abi());
      check(plugin_->api().launch(&l));
      plugin_->wait(l.event);
      device_args.read_back(args);
      return true;
    } catch (const AbiError& e) {
      if (e.status != KILN_STATUS_UNSUPPORTED) throw;
      unsupported_ = e.what();
      return false;
    }
  }

  AbiPlugin* plugin_ = nullptr;
  kiln_device* device_ = nullptr;
  kiln_device_info info_{};
  std::string unsupported_;
};

#define RUN_OR_SKIP(ops, args) \
  if (!run(ops, args)) GTEST_SKIP() << "unsupported: " << unsupported_

HostArg random_floats(std::uint8_t dt, std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  HostArg a = HostArg::buffer(dt, n);
  for (std::size_t i = 0; i < n; ++i) a.set(i, ref::float_bits(dt, dist(rng)));
  return a;
}

void expect_close(const HostArg& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.count(), want.size());
  int failures = 0;
  for (std::size_t i = 0; i < want.size() && failures < 5; ++i) {
    const double g = ref::to_double(got.dtype, got.get(i));
    if (!(std::fabs(g - want[i]) <= tolerance * std::max(1.0, std::fabs(want[i])))) {
      ++failures;
      ADD_FAILURE() << "[" << i << "] got " << g << ", want " << want[i];
    }
  }
}

// ------------------------------------------------------------------ cases --

TEST_P(Conformance, DeviceInfoIsCoherent) {
  EXPECT_GT(std::strlen(info_.name), 0u);
  EXPECT_GE(info_.max_local_threads, 1u);
  EXPECT_GE(info_.warp_size, 1u);
  EXPECT_NE(info_.vector_widths & (1u << 1), 0u);
  EXPECT_EQ(info_.dtype_ops[KILN_DTYPE_INVALID], 0u);
  if (info_.flags & KILN_DEVICE_HOST_MEMORY) {
    EXPECT_NE(plugin_->api().buffer_host_pointer, nullptr);
  }
}

TEST_P(Conformance, BuffersRoundTrip) {
  std::vector<std::uint8_t> in(1000), out(1000, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 3);
  kiln_buffer* b = plugin_->alloc(device_, in.size());
  plugin_->write(device_, b, in.data(), in.size());
  plugin_->read(device_, b, out.data(), out.size());
  plugin_->api().buffer_free(device_, b);
  EXPECT_EQ(in, out);
}

TEST_P(Conformance, AddF32) {
  const std::int64_t n = 1000;
  std::vector<HostArg> args = {random_floats(KILN_DTYPE_F32, n, 1), random_floats(KILN_DTYPE_F32, n, 2), HostArg::buffer(KILN_DTYPE_F32, n)};
  const auto a = args[0], b = args[1];
  RUN_OR_SKIP(wire_add_f32(n), args);
  std::vector<double> want(n);
  for (std::int64_t i = 0; i < n; ++i) want[i] = static_cast<float>(ref::to_double(KILN_DTYPE_F32, a.get(i))) + static_cast<float>(ref::to_double(KILN_DTYPE_F32, b.get(i)));
  expect_close(args[2], want, 1e-6);
}

// y = exp(x) * 2 + 1, the exp-chain, over a dynamic length.
TEST_P(Conformance, ExpChainWithDynamicLength) {
  const std::int64_t n = 4099;
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1);
  auto len = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  auto i = w.group_index(0, len);
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i));
  w.store(KILN_DTYPE_F32, y, i, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, e, w.const_f32(2)), w.const_f32(1)));
  std::vector<HostArg> args = {random_floats(KILN_DTYPE_F32, n, 3, -4, 4), HostArg::buffer(KILN_DTYPE_F32, n), HostArg::value(KILN_DTYPE_I64, n)};
  const HostArg in = args[0];
  RUN_OR_SKIP(w.ops, args);
  std::vector<double> want(n);
  for (std::int64_t k = 0; k < n; ++k) want[k] = std::exp(ref::to_double(KILN_DTYPE_F32, in.get(k))) * 2 + 1;
  expect_close(args[1], want, 1e-5);
}

// Row sums: a LOOP with a REGISTER accumulator.
TEST_P(Conformance, RowSumsF32) {
  const std::int64_t rows = 33, cols = 129;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, rows * cols);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, rows);
  auto acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  auto r = w.group_index(0, w.const_i64(rows));
  auto zero = w.const_i64(0), c = w.const_i64(cols);
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0));
  auto k = w.loop(c);
  auto x = w.load(KILN_DTYPE_F32, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, r, c), k));
  w.store(KILN_DTYPE_F32, acc, zero, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), x));
  w.end_loop(k);
  w.store(KILN_DTYPE_F32, out, r, w.load(KILN_DTYPE_F32, acc, zero));
  std::vector<HostArg> args = {random_floats(KILN_DTYPE_F32, rows * cols, 4), HostArg::buffer(KILN_DTYPE_F32, rows)};
  const HostArg in = args[0];
  RUN_OR_SKIP(w.ops, args);
  std::vector<double> want(rows, 0);
  for (std::int64_t i = 0; i < rows * cols; ++i) want[i / cols] += ref::to_double(KILN_DTYPE_F32, in.get(i));
  expect_close(args[1], want, 1e-4);
}

// C = A B (or A B^T), rows on group axis 0, columns on axis 1, as core/kernels writes it.
std::vector<kiln_op> matmul(std::uint8_t dt, std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, m * k);
  auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, k * n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, m * n);
  auto mm = w.const_i64(m), nn = w.const_i64(n), kk = w.const_i64(k);
  auto i = w.group_index(0, mm), j = w.group_index(1, nn);
  auto acc = w.storage(KILN_SCOPE_REGISTER, dt, 1);
  auto zero = w.const_i64(0);
  w.store(dt, acc, zero, w.const_bits(dt, 0));
  auto mul = [&](WireBuilder::Id x, WireBuilder::Id y) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, x, y); };
  auto add = [&](WireBuilder::Id x, WireBuilder::Id y) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, x, y); };
  auto p = w.loop(kk);
  auto x = w.load(dt, a, add(mul(i, kk), p));
  auto y = w.load(dt, b, b_transposed ? add(mul(j, kk), p) : add(mul(p, nn), j));
  w.store(dt, acc, zero, w.binary(KILN_BINARY_ADD, dt, w.load(dt, acc, zero), w.binary(KILN_BINARY_MUL, dt, x, y)));
  w.end_loop(p);
  w.store(dt, c, add(mul(i, nn), j), w.load(dt, acc, zero));
  return w.ops;
}

// Runs matmul (17x13x9) on the plugin and checks it; false when unsupported.
bool matmul_case(std::uint8_t dt, bool b_transposed, const std::function<bool(const std::vector<kiln_op>&, std::vector<HostArg>&)>& run) {
  const std::int64_t m = 17, n = 13, k = 9;
  std::vector<HostArg> args = {random_floats(dt, m * k, 5), random_floats(dt, k * n, 6), HostArg::buffer(dt, m * n)};
  const HostArg a = args[0], b = args[1];
  if (!run(matmul(dt, m, n, k, b_transposed), args)) return false;
  std::vector<double> want(m * n, 0);
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t c = 0; c < n; ++c)
      for (std::int64_t p = 0; p < k; ++p)
        want[r * n + c] += ref::to_double(dt, a.get(r * k + p)) * ref::to_double(dt, b.get(b_transposed ? c * k + p : p * n + c));
  expect_close(args[2], want, dt == KILN_DTYPE_F64 ? 1e-12 : 1e-5);
  return true;
}

#define MATMUL_CASE(dt, bt) \
  if (!matmul_case(dt, bt, [this](const auto& ops, auto& args) { return run(ops, args); })) GTEST_SKIP() << "unsupported: " << unsupported_

TEST_P(Conformance, MatmulF32) { MATMUL_CASE(KILN_DTYPE_F32, false); }
TEST_P(Conformance, MatmulBtF32) { MATMUL_CASE(KILN_DTYPE_F32, true); }
TEST_P(Conformance, MatmulF64) { MATMUL_CASE(KILN_DTYPE_F64, false); }

// f16 and bf16 add and multiply, rounded to nearest even after each op: exact.
TEST_P(Conformance, HalfPrecisionArithmeticIsExact) {
  if (info_.dtype_ops[KILN_DTYPE_F16] == 0 && info_.dtype_ops[KILN_DTYPE_BF16] == 0) GTEST_SKIP() << "no f16/bf16";
  for (std::uint8_t dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    if (info_.dtype_ops[dt] == 0) continue;
    const std::int64_t n = 512;
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
    auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, n);
    auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, n);
    auto i = w.group_index(0, w.const_i64(n));
    auto x = w.load(dt, a, i), y = w.load(dt, b, i);
    w.store(dt, c, i, w.binary(KILN_BINARY_MUL, dt, w.binary(KILN_BINARY_ADD, dt, x, y), y));
    std::vector<HostArg> args = {random_floats(dt, n, 7, -8, 8), random_floats(dt, n, 8, -8, 8), HostArg::buffer(dt, n)};
    const HostArg in_a = args[0], in_b = args[1];
    if (!run(w.ops, args)) continue;
    for (std::int64_t k = 0; k < n; ++k) {
      const auto sum = ref::binary(KILN_BINARY_ADD, dt, in_a.get(k), in_b.get(k));
      const auto want = ref::binary(KILN_BINARY_MUL, dt, *sum, in_b.get(k));
      ASSERT_EQ(args[2].get(k), *want) << sdk::dtype_name(dt) << " [" << k << "]";
    }
  }
}

// Integer arithmetic wraps; shifts take the count mod the width.
TEST_P(Conformance, IntegerWrapAndShifts) {
  const std::int64_t n = 256;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, n);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 1, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 2, n);
  auto i = w.group_index(0, w.const_i64(n));
  auto x = w.load(KILN_DTYPE_I32, a, i), y = w.load(KILN_DTYPE_I32, b, i);
  auto prod = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I32, x, y);
  w.store(KILN_DTYPE_I32, c, i, w.binary(KILN_BINARY_BIT_XOR, KILN_DTYPE_I32, prod, w.binary(KILN_BINARY_SHR, KILN_DTYPE_I32, x, y)));
  std::mt19937_64 rng(9);
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_I32, n), HostArg::buffer(KILN_DTYPE_I32, n), HostArg::buffer(KILN_DTYPE_I32, n)};
  for (std::int64_t k = 0; k < n; ++k) {
    args[0].set(k, ref::wrap(KILN_DTYPE_I32, rng()));
    args[1].set(k, ref::wrap(KILN_DTYPE_I32, rng()));
  }
  const HostArg in_a = args[0], in_b = args[1];
  RUN_OR_SKIP(w.ops, args);
  for (std::int64_t k = 0; k < n; ++k) {
    const auto p = ref::binary(KILN_BINARY_MUL, KILN_DTYPE_I32, in_a.get(k), in_b.get(k));
    const auto s = ref::binary(KILN_BINARY_SHR, KILN_DTYPE_I32, in_a.get(k), in_b.get(k));
    ASSERT_EQ(args[2].get(k), *p ^ *s) << k;
  }
}

// Vector loads, arithmetic and stores, at the widest width the device offers (up to 8).
TEST_P(Conformance, VectorAddF32) {
  std::uint8_t lanes = 1;
  for (std::uint8_t l : {2, 4, 8})
    if (info_.vector_widths & (1u << l)) lanes = l;
  if (lanes == 1) GTEST_SKIP() << "no vector widths";
  const std::int64_t n = 1024;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  auto g = w.group_index(0, w.const_i64(n / lanes));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  auto x = w.load(KILN_DTYPE_F32, a, i, lanes);
  auto half = w.broadcast(KILN_DTYPE_F32, w.const_f32(0.5f), lanes);
  w.store(KILN_DTYPE_F32, c, i, w.mad(KILN_DTYPE_F32, x, half, x, lanes), lanes);
  std::vector<HostArg> args = {random_floats(KILN_DTYPE_F32, n, 10), HostArg::buffer(KILN_DTYPE_F32, n)};
  const HostArg in = args[0];
  RUN_OR_SKIP(w.ops, args);
  std::vector<double> want(n);
  for (std::int64_t k = 0; k < n; ++k) want[k] = 1.5 * ref::to_double(KILN_DTYPE_F32, in.get(k));
  expect_close(args[1], want, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Plugins, Conformance, ::testing::ValuesIn(discovered_plugins()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace kiln::test
