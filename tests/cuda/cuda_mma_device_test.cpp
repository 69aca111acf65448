// The MMA op on a CUDA device: for each shape and input dtype (m16n8k16 f16
// and bf16, m16n8k8 tf32) a kernel of several groups of two warps loads
// random non-zero fragments, chains two MMAs (D = A2 * B2 + (A1 * B1 + C))
// and stores D; the device's D is compared with the reference
// interpreter's. Tensor cores sum in another order and precision than the
// interpreter (k ascending, each step rounded to f32), so each element may
// differ by a few f32 ulps of the sum of the magnitudes of its terms,
// |C| + sum |a * b| (the inputs are the same on both: f16/bf16 are exact in
// f32, tf32 is rounded by cvt.rna on the device as by the interpreter).
// Without a driver, or on a device that does not claim the shape's feature
// bit (before sm_80), the tests skip visibly.
#include <gtest/gtest.h>

#include "cuda_plugin_fixture.hpp"
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/wire.hpp>

#include <cmath>
#include <memory>
#include <random>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::HostArg;
using kiln::test::WireBuilder;

namespace {

constexpr std::int64_t kGroups = 5;
constexpr std::int64_t kLocal = 64;  // two warps per group
constexpr std::int64_t kWarps = kGroups * kLocal / 32;

struct Case {
  unsigned shape, input;
};
constexpr Case kCases[] = {
    {KILN_MMA_M16N8K16, KILN_DTYPE_F16},
    {KILN_MMA_M16N8K16, KILN_DTYPE_BF16},
    {KILN_MMA_M16N8K8, KILN_DTYPE_F32},
};

std::string case_name(const Case& c) {
  return std::string(kiln::sdk::mma_shape_name(c.shape)) + " " + std::string(kiln::sdk::mma_input_name(c.shape, c.input));
}

// Slots: a1, b1, a2, b2 (input dtype), c (f32), d (f32): each thread's
// fragments in fragment order at thread * lanes, thread = group * 64 + local.
std::vector<kiln_op> chained_mma_kernel(const Case& c) {
  const kiln::sdk::MmaShapeInfo info = kiln::sdk::mma_shape_info(c.shape);
  const auto in = static_cast<std::uint8_t>(c.input);
  const std::uint64_t threads = kGroups * kLocal;
  WireBuilder w;
  const auto a1 = w.param(KILN_PARAM_GLOBAL, in, 0, threads * info.a_lanes);
  const auto b1 = w.param(KILN_PARAM_GLOBAL, in, 1, threads * info.b_lanes);
  const auto a2 = w.param(KILN_PARAM_GLOBAL, in, 2, threads * info.a_lanes);
  const auto b2 = w.param(KILN_PARAM_GLOBAL, in, 3, threads * info.b_lanes);
  const auto cm = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 4, threads * 4);
  const auto dm = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 5, threads * 4);
  const auto group = w.group_index(0, w.const_i64(kGroups));
  const auto local = w.local_index(0, w.const_i64(kLocal));
  const auto thread =
      w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, group, w.const_i64(kLocal)), local);
  auto at = [&](unsigned lanes) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, thread, w.const_i64(lanes)); };
  const auto al = static_cast<std::uint8_t>(info.a_lanes), bl = static_cast<std::uint8_t>(info.b_lanes);
  const auto shape = static_cast<std::uint8_t>(c.shape);
  const auto fc = w.load(KILN_DTYPE_F32, cm, at(4), 4);
  const auto d1 = w.op(KILN_OP_MMA, KILN_DTYPE_F32, shape, w.load(in, a1, at(info.a_lanes), al),
                       w.load(in, b1, at(info.b_lanes), bl), fc, c.input, 0, 4);
  const auto d2 = w.op(KILN_OP_MMA, KILN_DTYPE_F32, shape, w.load(in, a2, at(info.a_lanes), al),
                       w.load(in, b2, at(info.b_lanes), bl), d1, c.input, 0, 4);
  w.store(KILN_DTYPE_F32, dm, at(4), d2, 4);
  return w.ops;
}

// Random values in [-1, -1/64] u [1/64, 1], as the input dtype holds them
// (tf32 inputs keep all 23 mantissa bits: the rounding is part of the test).
HostArg random_inputs(unsigned dtype, std::size_t count, std::mt19937_64& rng) {
  HostArg arg = HostArg::buffer(static_cast<std::uint8_t>(dtype), count);
  std::uniform_real_distribution<float> magnitude(1.0f / 64, 1.0f);
  for (std::size_t e = 0; e < count; ++e) {
    const float v = (rng() & 1) != 0 ? magnitude(rng) : -magnitude(rng);
    if (dtype == KILN_DTYPE_F16) arg.set(e, kiln::sdk::f32_to_f16_bits(v));
    else if (dtype == KILN_DTYPE_BF16) arg.set(e, kiln::sdk::f32_to_bf16_bits(v));
    else arg.set(e, std::bit_cast<std::uint32_t>(v));
  }
  return arg;
}

double input_value(const HostArg& arg, std::size_t e) { return kiln::conformance::float_value(arg.dtype, arg.get(e)); }

// Per element of d (thread * 4 + i): |C| + sum over both MMAs of |a * b|.
std::vector<double> magnitude_bounds(const Case& c, const std::vector<HostArg>& args) {
  const kiln::sdk::MmaShapeInfo info = kiln::sdk::mma_shape_info(c.shape);
  std::vector<double> bound(static_cast<std::size_t>(kWarps * 32 * 4));
  for (std::int64_t warp = 0; warp < kWarps; ++warp) {
    // The tiles of this warp, from the fragments through the lane layout.
    std::vector<double> a[2], b[2];
    for (int step = 0; step < 2; ++step) {
      a[step].assign(info.m * info.k, 0);
      b[step].assign(info.k * info.n, 0);
      for (unsigned lane = 0; lane < 32; ++lane) {
        const std::size_t thread = static_cast<std::size_t>(warp * 32 + lane);
        for (unsigned i = 0; i < info.a_lanes; ++i) {
          const auto at = kiln::sdk::mma_a_coord(c.shape, lane, i);
          a[step][at.row * info.k + at.col] = input_value(args[static_cast<std::size_t>(2 * step)], thread * info.a_lanes + i);
        }
        for (unsigned i = 0; i < info.b_lanes; ++i) {
          const auto at = kiln::sdk::mma_b_coord(c.shape, lane, i);
          b[step][at.row * info.n + at.col] = input_value(args[static_cast<std::size_t>(2 * step + 1)], thread * info.b_lanes + i);
        }
      }
    }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < 4; ++i) {
        const std::size_t e = static_cast<std::size_t>(warp * 32 + lane) * 4 + i;
        const auto at = kiln::sdk::mma_c_coord(lane, i);
        double sum = std::fabs(args[4].as<float>(e));
        for (int step = 0; step < 2; ++step)
          for (unsigned k = 0; k < info.k; ++k) sum += std::fabs(a[step][at.row * info.k + k] * b[step][k * info.n + at.col]);
        bound[e] = sum;
      }
  }
  return bound;
}

class CudaMmaDevice : public kiln::test::CudaPluginTest {};

}  // namespace

TEST_F(CudaMmaDevice, EveryShapeMatchesTheInterpreterWithinAFewUlps) {
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_MMA))
    GTEST_SKIP() << info.name << " does not claim the MMA op (sm_80 or later does)";
  std::mt19937_64 rng(20240612);
  for (const Case& c : kCases) {
    SCOPED_TRACE(case_name(c));
    if (!kiln::sdk::has_feature(info, kiln::sdk::mma_feature(c.shape, c.input))) {
      ADD_FAILURE() << info.name << " claims the MMA op but not " << case_name(c);
      continue;
    }
    const kiln::sdk::MmaShapeInfo shape = kiln::sdk::mma_shape_info(c.shape);
    const std::size_t threads = static_cast<std::size_t>(kGroups * kLocal);
    std::vector<HostArg> args;
    for (int step = 0; step < 2; ++step) {
      args.push_back(random_inputs(c.input, threads * shape.a_lanes, rng));
      args.push_back(random_inputs(c.input, threads * shape.b_lanes, rng));
    }
    args.push_back(random_inputs(KILN_DTYPE_F32, threads * 4, rng));
    args.push_back(HostArg::poisoned(KILN_DTYPE_F32, threads * 4));
    const std::vector<kiln_op> ops = chained_mma_kernel(c);
    const std::vector<HostArg> want = kiln::conformance::interpreted(ops, args);
    std::vector<HostArg> got = args;
    try {
      kiln::conformance::run_kernel(*plugin, device, ops, got);
    } catch (const AbiError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const std::vector<double> bound = magnitude_bounds(c, args);
    double worst_ulps = 0;
    int bad = 0;
    for (std::size_t e = 0; e < bound.size(); ++e) {
      const double g = got[5].as<float>(e), x = want[5].as<float>(e);
      const double ulp = bound[e] * 0x1p-23;  // one f32 ulp at the magnitude of the terms
      const double ulps = std::fabs(g - x) / ulp;
      worst_ulps = std::max(worst_ulps, std::isnan(ulps) ? 1e30 : ulps);
      if (!(ulps <= 8) && bad++ < 5)
        ADD_FAILURE() << "d[" << e << "] (warp " << e / 128 << ", lane " << (e / 4) % 32 << ", element " << e % 4
                      << "): device " << g << ", interpreter " << x << ", " << ulps << " ulps of " << bound[e];
    }
    std::cout << "[   INFO   ] " << case_name(c) << ": " << bound.size() << " outputs, worst " << worst_ulps
              << " ulps of sum |terms|\n";
  }
}
