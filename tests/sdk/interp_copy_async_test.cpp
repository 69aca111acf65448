// COPY_ASYNC, COPY_COMMIT and COPY_WAIT on the reference interpreter: a copy
// is written at the copy_wait that covers its group (kernel_ir.h: as late as
// a device may write it), so a kernel that reads too early reads stale data
// on the interpreter too, and with storage checks (the default) the access
// is reported; the validator's rules for the ops.
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "kiln/ir/text.hpp"

#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

// 64 threads; each copies x's chunk t (4 floats) into LOCAL storage, then
// `middle`, then reads LOCAL chunk `read` (an i64 value name) into out's chunk t.
std::vector<kiln_op> kernel(const std::string& middle, const std::string& read = "%14") {
  const std::string text = R"(%0 = param 0 global f32[256]
%1 = param 1 global_mut f32[256]
%2 = storage local f32[512]
%3 = const i64 64
%4 = index local 0 %3
%5 = const i64 4
%6 = mul i64 %4, %5
%7 = load f32x4 %0[%6]
copy_async f32x4 %2[%6], %7
%9 = const i64 256
%10 = add i64 %6, %9
%11 = const i64 63
%12 = sub i64 %11, %4
%13 = mul i64 %12, %5
%14 = add i64 %13, %9
)" + middle + "%R = load f32x4 %2[" + read + "]\nstore f32x4 %1[%6], %R\n";
  std::string numbered = text;
  // The value read gets the next free number.
  std::size_t ops = 0;
  for (char ch : text.substr(0, text.find("%R = "))) ops += ch == '\n';
  numbered.replace(numbered.find("%R = "), 3, "%" + std::to_string(ops));
  numbered.replace(numbered.find(", %R\n"), 5, ", %" + std::to_string(ops) + "\n");
  auto parsed = ir::parse(numbered);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << numbered;
  return parsed.ok() ? parsed->to_wire() : std::vector<kiln_op>{};
}

}  // namespace

TEST(InterpreterCopyAsync, CopiesLandAtTheirWaitAndCrossTheBarrier) {
  // Two groups: chunk t at [4t] (group 0) and again at [256 + 4t] (group 1),
  // then the chunk of thread 63 - t is read from the second copy.
  const auto ops = kernel("copy_commit\ncopy_async f32x4 %2[%10], %7\ncopy_commit\ncopy_wait 0\nbarrier\n");
  std::vector<float> x = random_floats(256, 7), out(256, 0.0f);
  const sdk::ExecStats stats = run_ok(ops, {arg_of(x), arg_of(out)});
  for (int t = 0; t < 64; ++t)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[4 * t + j], x[4 * (63 - t) + j]) << t << " " << j;
  EXPECT_EQ(stats.local().stores, 128u);  // 64 threads, two copies each
}

TEST(InterpreterCopyAsync, WaitLeavesTheNewestGroupsPending) {
  std::vector<float> x = random_floats(256, 8), out(256, 0.0f);
  // copy_wait 1 completes the first group: its chunks (at [4t]) can be read.
  run_ok(kernel("copy_commit\ncopy_async f32x4 %2[%10], %7\ncopy_commit\ncopy_wait 1\nbarrier\n", "%13"),
         {arg_of(x), arg_of(out)});
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[4 * t], x[4 * (63 - t)]) << t;
  // ... but not the second (at [256 + 4t]).
  expect_fault(kernel("copy_commit\ncopy_async f32x4 %2[%10], %7\ncopy_commit\ncopy_wait 1\nbarrier\n"),
               {arg_of(x), arg_of(out)}, "while an asynchronous copy into it is pending");
}

TEST(InterpreterCopyAsync, EarlyReadsAreReported) {
  std::vector<float> x = random_floats(256, 9), out(256, 0.0f);
  // No wait at all.
  expect_fault(kernel("copy_commit\nbarrier\n", "%13"), {arg_of(x), arg_of(out)},
               "while an asynchronous copy into it is pending");
  // A wait that covers nothing: the copy was never committed.
  expect_fault(kernel("copy_wait 0\nbarrier\n", "%13"), {arg_of(x), arg_of(out)},
               "while an asynchronous copy into it is pending");
  // Waited for, but no barrier: thread t reads what thread 63 - t wrote.
  expect_fault(kernel("copy_commit\ncopy_wait 0\n", "%13"), {arg_of(x), arg_of(out)}, "(a data race)");
}

TEST(InterpreterCopyAsync, ValidatorRules) {
  std::vector<kiln_op> ops = kernel("copy_commit\ncopy_wait 0\nbarrier\n", "%13");
  ASSERT_EQ(ops[8].kind, KILN_OP_COPY_ASYNC);
  std::vector<kiln_op> global = ops;
  global[8].src[0] = 1;  // into the output buffer
  expect_invalid(global, "copies go into LOCAL storage", 8);
  std::vector<kiln_op> wide = ops;
  wide[8].lanes = 2;
  expect_invalid(wide, "exactly 16 bytes", 8);
  std::vector<kiln_op> wait = ops;
  ASSERT_EQ(wait[16].kind, KILN_OP_COPY_WAIT);
  wait[16].attr = 8;
  expect_invalid(wait, "at most 7 groups", 16);
}
