// The dummy's `mma` option: it claims the MMA op and every shape's feature
// bit (off by default), and then compiles MMA kernels, which run on the
// interpreter; without it compile refuses the op naming it.
#include <gtest/gtest.h>

#include "dummy_util.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/wire.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

using Id = WireBuilder::Id;

// One warp: D = A * B + C with tf32 fragments in fragment order.
std::vector<kiln_op> mma_kernel(Id* mma = nullptr) {
  WireBuilder w;
  const Id a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 32 * 4);
  const Id b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, 32 * 2);
  const Id d = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, 32 * 4);
  const Id tid = w.local_index(0, w.const_i64(32));
  const Id at4 = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(4));
  const Id at2 = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(2));
  const Id r = w.op(KILN_OP_MMA, KILN_DTYPE_F32, KILN_MMA_M16N8K8, w.load(KILN_DTYPE_F32, a, at4, 4),
                    w.load(KILN_DTYPE_F32, b, at2, 2), w.load(KILN_DTYPE_F32, d, at4, 4), KILN_DTYPE_F32, 0, 4);
  w.store(KILN_DTYPE_F32, d, at4, r, 4);
  if (mma != nullptr) *mma = r;
  return w.ops;
}

}  // namespace

TEST(DummyMma, OffByDefault) {
  auto plugin = load_dummy();
  const kiln_device_info info = plugin->info(0);
  EXPECT_FALSE(sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_MMA));
  EXPECT_FALSE(sdk::has_feature(info, KILN_FEATURE_MMA_M16N8K16_F16));
  Id mma = 0;
  const auto ops = mma_kernel(&mma);
  std::int64_t failed_op = -2;
  expect_abi_error([&] { plugin->compile(plugin->open(0), ops, &failed_op); }, KILN_STATUS_UNSUPPORTED,
                   "mma on f32 is not supported");
  EXPECT_EQ(failed_op, static_cast<std::int64_t>(mma));
}

TEST(DummyMma, TheOptionClaimsItAndItRuns) {
  auto plugin = load_dummy(R"({"simulate": [{"mma": true}]})");
  const kiln_device_info info = plugin->info(0);
  EXPECT_TRUE(sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_MMA));
  for (unsigned f : {KILN_FEATURE_MMA_M16N8K16_F16, KILN_FEATURE_MMA_M16N8K16_BF16, KILN_FEATURE_MMA_M16N8K8_TF32})
    EXPECT_TRUE(sdk::has_feature(info, f)) << f;
  EXPECT_TRUE(info.vector_widths & (1u << 8));
  // A = identity-like (A[m][k] = 1 when k == m % 8), B[k][n] = k + n, C = 0.5:
  // D[m][n] = (m % 8) + n + 0.5, exact.
  std::vector<float> a(32 * 4), b(32 * 2), d(32 * 4, 0.5f);
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (unsigned i = 0; i < 4; ++i) {
      const auto at = sdk::mma_a_coord(KILN_MMA_M16N8K8, lane, i);
      a[lane * 4 + i] = at.col == at.row % 8 ? 1.0f : 0.0f;
    }
    for (unsigned i = 0; i < 2; ++i) {
      const auto at = sdk::mma_b_coord(KILN_MMA_M16N8K8, lane, i);
      b[lane * 2 + i] = static_cast<float>(at.row + at.col);
    }
  }
  kiln_device* device = plugin->open(0);
  const auto ops = mma_kernel();
  kiln_program* program = plugin->compile(device, ops);
  {
    DeviceBuffer ab(*plugin, device, a), bb(*plugin, device, b), db(*plugin, device, d);
    launch(*plugin, device, program, ops, {ab.arg(), bb.arg(), db.arg()});
    d = db.read<float>();
  }
  const std::vector<float>& out = d;
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned i = 0; i < 4; ++i) {
      const auto at = sdk::mma_c_coord(lane, i);
      EXPECT_EQ(out[lane * 4 + i], static_cast<float>(at.row % 8 + at.col) + 0.5f) << lane << " " << i;
    }
  plugin->api().program_release(program);
}
