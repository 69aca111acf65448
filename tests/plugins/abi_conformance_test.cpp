// Plugin conformance at the ABI level: the same cases on every plugin found
// in the build's plugin directory (a new plugin joins by being built there;
// a third-party one by pointing KILN_CONFORMANCE_PLUGIN_DIR at its folder),
// through the minimal ABI test host (support/abi_host.hpp), without libkiln.
//
// What only this level checks: a plugin that the runtime's loader never
// sees (third-party, out of tree) against the ABI alone; the device info as
// the plugin fills it; buffers; and kernels the core's standard library does
// not build (f16/bf16 rounding after each op, integer wrap and shifts,
// vectors, and the shared kernel suite: every op on every dtype, casts,
// LOCAL storage and barriers, 3-D grids), each compared with the reference
// interpreter. The standard kernels on every device, through the runtime,
// are tests/conformance/standard_kernels_test.cpp.
//
// A plugin whose init fails with UNAVAILABLE (no driver, no device) is
// skipped with its reason; a kernel a plugin answers UNSUPPORTED for is
// skipped (that answer is legal). Options for a plugin's init come from
// $KILN_CONFORMANCE_OPTIONS_<NAME> (JSON), default "{}".
#include <gtest/gtest.h>

#include "support/kernel_suite.hpp"

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
      run_kernel(*plugin_, device_, ops, args);
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

HostArg random_floats(std::uint8_t dt, std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  return random_arg(dt, n, rng, lo, hi);
}

// Runs `ops` on the interpreter and on the plugin and compares output
// `out_slot`; the test is skipped when the plugin answers UNSUPPORTED.
#define EXPECT_MATCHES_INTERPRETER(ops, args, out_slot, tolerance)                       \
  do {                                                                                   \
    const std::vector<HostArg> want = interpreted(ops, args);                            \
    if (!run(ops, args)) GTEST_SKIP() << "unsupported: " << unsupported_;                \
    if (auto problem = difference("output", args[out_slot], want[out_slot], tolerance)) \
      ADD_FAILURE() << *problem;                                                         \
  } while (0)

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

// f16 and bf16 add and multiply, rounded to nearest even after each op: exact.
TEST_P(Conformance, HalfPrecisionArithmeticIsExact) {
  if (info_.dtype_ops[KILN_DTYPE_F16] == 0 && info_.dtype_ops[KILN_DTYPE_BF16] == 0) GTEST_SKIP() << "no f16/bf16";
  for (std::uint8_t dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    if (info_.dtype_ops[dt] == 0) continue;
    SCOPED_TRACE(sdk::dtype_name(dt));
    const std::int64_t n = 512;
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
    auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, n);
    auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, n);
    auto i = w.group_index(0, w.const_i64(n));
    auto x = w.load(dt, a, i), y = w.load(dt, b, i);
    w.store(dt, c, i, w.binary(KILN_BINARY_MUL, dt, w.binary(KILN_BINARY_ADD, dt, x, y), y));
    std::vector<HostArg> args = {random_floats(dt, n, 7, -8, 8), random_floats(dt, n, 8, -8, 8), HostArg::poisoned(dt, n)};
    EXPECT_MATCHES_INTERPRETER(w.ops, args, 2, Tolerance{});
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
  std::vector<HostArg> args = {random_arg(KILN_DTYPE_I32, n, rng), random_arg(KILN_DTYPE_I32, n, rng),
                               HostArg::poisoned(KILN_DTYPE_I32, n)};
  EXPECT_MATCHES_INTERPRETER(w.ops, args, 2, Tolerance{});
}

// Vector loads, MAD and stores, at the widest width the device offers (up to 8).
TEST_P(Conformance, VectorMadF32) {
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
  std::vector<HostArg> args = {random_floats(KILN_DTYPE_F32, n, 10), HostArg::poisoned(KILN_DTYPE_F32, n)};
  EXPECT_MATCHES_INTERPRETER(w.ops, args, 1, (Tolerance{1e-6, 0, 0}));
}

// The shared kernel suite, on devices with the work-groups it uses (64
// threads); kernels answered UNSUPPORTED are counted, not failed.
TEST_P(Conformance, KernelSuiteMatchesTheInterpreter) {
  if (info_.max_local_threads < 64) GTEST_SKIP() << "max_local_threads " << info_.max_local_threads << " < 64";
  std::size_t ran = 0, unsupported = 0;
  for (const SuiteKernel& kernel : kernel_suite(info_, 67, 5)) {
    SCOPED_TRACE(kernel.name);
    try {
      for (const std::string& problem : run_suite_kernel(*plugin_, device_, kernel)) ADD_FAILURE() << problem;
      ++ran;
    } catch (const AbiError& e) {
      if (e.status != KILN_STATUS_UNSUPPORTED) ADD_FAILURE() << e.what();
      else ++unsupported;
    }
  }
  RecordProperty("unsupported", static_cast<int>(unsupported));
  if (ran == 0) GTEST_SKIP() << "every kernel of the suite unsupported";
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
