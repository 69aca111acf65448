// The dummy's `subgroup_reduce` option: it claims SUBGROUP_REDUCE on every
// dtype but bool (off by default: compile then refuses the op naming it),
// and runs it on the interpreter in subgroups of up to warp_size, which must
// be a power of two from 2 to 64.
#include <gtest/gtest.h>

#include "dummy_util.hpp"

#include <kiln/sdk/capabilities.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

using Id = WireBuilder::Id;

// y[t] = the sum of x over t's subgroup of 8, 32 threads.
std::vector<kiln_op> sum_kernel(Id* reduce = nullptr) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, 32);
  const Id y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 1, 32);
  const Id t = w.local_index(0, w.const_i64(32));
  const Id r = w.op(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_I32, KILN_BINARY_ADD, w.load(KILN_DTYPE_I32, x, t),
                    KILN_NO_OPERAND, KILN_NO_OPERAND, 8);
  w.store(KILN_DTYPE_I32, y, t, r);
  if (reduce != nullptr) *reduce = r;
  return w.ops;
}

}  // namespace

TEST(DummySubgroup, OffByDefault) {
  auto plugin = load_dummy();
  EXPECT_FALSE(sdk::has_op_kind(plugin->info(0), KILN_DTYPE_I32, KILN_OP_SUBGROUP_REDUCE));
  Id reduce = 0;
  const auto ops = sum_kernel(&reduce);
  std::int64_t failed_op = -2;
  expect_abi_error([&] { plugin->compile(plugin->open(0), ops, &failed_op); }, KILN_STATUS_UNSUPPORTED,
                   "subgroup_reduce on i32 is not supported");
  EXPECT_EQ(failed_op, static_cast<std::int64_t>(reduce));
}

TEST(DummySubgroup, TheOptionClaimsItAndItRuns) {
  auto plugin = load_dummy(R"({"simulate": [{"subgroup_reduce": true, "warp_size": 16}]})");
  const kiln_device_info info = plugin->info(0);
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    EXPECT_EQ(sdk::has_op_kind(info, dt, KILN_OP_SUBGROUP_REDUCE), dt != KILN_DTYPE_BOOL) << dt;
  std::vector<std::int32_t> x(32), y(32);
  for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(i)] = i * i - 7;
  kiln_device* device = plugin->open(0);
  const auto ops = sum_kernel();
  kiln_program* program = plugin->compile(device, ops);
  {
    DeviceBuffer xb(*plugin, device, x), yb(*plugin, device, y);
    launch(*plugin, device, program, ops, {xb.arg(), yb.arg()});
    y = yb.read<std::int32_t>();
  }
  for (int i = 0; i < 32; ++i) {
    int want = 0;
    for (int j = i / 8 * 8; j < i / 8 * 8 + 8; ++j) want += j * j - 7;
    EXPECT_EQ(y[static_cast<std::size_t>(i)], want) << i;
  }
  plugin->api().program_release(program);
}

TEST(DummySubgroup, NeedsAPowerOfTwoWarp) {
  expect_abi_error([&] { load_dummy(R"({"simulate": [{"subgroup_reduce": true, "warp_size": 12}]})"); },
                   KILN_STATUS_INVALID_ARGUMENT, "a power of two from 2 to 64, not 12");
}
