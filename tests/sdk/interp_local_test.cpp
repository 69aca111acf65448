// LOCAL storage and BARRIER: a tree reduction across the threads of a group
// (the test), groups that do not share LOCAL storage, divergent
// barriers, races (a missing barrier) and reads of unwritten storage.
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// The same tree in C++, in the same order.
float tree_reference(const float* x, std::int64_t threads) {
  std::vector<float> s(x, x + threads);
  for (std::int64_t half = threads / 2; half > 0; half /= 2)
    for (std::int64_t t = 0; t < half; ++t) s[t] = s[t] + s[t + half];
  return s[0];
}

}  // namespace

TEST(InterpreterLocal, TreeReductionAcrossLocalThreadsWithBarriers) {
  for (std::int64_t threads : {2, 32, 256, 1024}) {
    const std::int64_t groups = 37;
    std::vector<float> x = random_floats(groups * threads, static_cast<std::uint32_t>(threads));
    std::vector<float> out(groups);
    const sdk::ExecStats stats = run_ok(wire_tree_sum(groups, threads, KILN_DTYPE_F32), {arg_of(x), arg_of(out)});
    for (std::int64_t g = 0; g < groups; ++g)
      EXPECT_EQ(out[g], tree_reference(&x[g * threads], threads)) << "threads " << threads << " group " << g;
    std::int64_t steps = 0;
    while ((std::int64_t{1} << steps) < threads) ++steps;
    EXPECT_EQ(stats.barriers, static_cast<std::uint64_t>(groups * (1 + steps)));
    EXPECT_EQ(stats.local().stores, static_cast<std::uint64_t>(groups * (2 * threads - 1)));
  }
}

TEST(InterpreterLocal, IntegerTreeReductionIsExact) {
  const std::int64_t groups = 5, threads = 128;
  std::vector<std::int64_t> x(groups * threads), out(groups);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int64_t>(i * 2654435761u % 1000) - 500;
  run_ok(wire_tree_sum(groups, threads, KILN_DTYPE_I64), {arg_of(x), arg_of(out)});
  for (std::int64_t g = 0; g < groups; ++g) {
    std::int64_t want = 0;
    for (std::int64_t t = 0; t < threads; ++t) want += x[g * threads + t];
    EXPECT_EQ(out[g], want);
  }
}

TEST(InterpreterLocal, MissingBarrierIsReportedAsARace) {
  std::vector<float> x = random_floats(2 * 64, 1), out(2);
  auto ops = wire_tree_sum(2, 64, KILN_DTYPE_F32, /*loop_barrier=*/false);
  // Step 1 reads s[t + 16], which thread t + 16 wrote in step 0 with no barrier between.
  expect_fault(ops, {arg_of(x), arg_of(out)}, "wrote since the last barrier (a data race)");
  // Without the checks the kernel runs (lock-step order happens to give the tree's result).
  sdk::RunOptions unchecked;
  unchecked.check_storage = false;
  run_ok(ops, {arg_of(x), arg_of(out)}, unchecked);
}

TEST(InterpreterLocal, OverwritingWhatAnotherThreadReadIsARace) {
  // Every thread reads s[0], then thread 0 writes s[0] := 1 + its old value, no barrier.
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 8);
  const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 1);
  const Id t = w.local_index(0, w.const_i64(8));
  const Id zero = w.const_i64(0);
  const Id first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, t, zero));
  w.store(KILN_DTYPE_F32, s, zero, w.const_f32(2.0f));
  w.end_if(first);
  w.barrier();
  const Id v = w.load(KILN_DTYPE_F32, s, zero);
  w.store(KILN_DTYPE_F32, po, t, v);
  const Id again = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, t, zero));
  const Id store = w.store(KILN_DTYPE_F32, s, zero, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, v, w.const_f32(1.0f)));
  w.end_if(again);
  std::vector<float> out(8);
  expect_fault(w.ops, {arg_of(out)}, "which other threads read since the last barrier", store);
}

TEST(InterpreterLocal, WritingTheSameValueFromManyThreadsIsNotARace) {
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 16);
  const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 1);
  const Id t = w.local_index(0, w.const_i64(16));
  w.store(KILN_DTYPE_F32, s, w.const_i64(0), w.const_f32(5.0f));
  w.barrier();
  w.store(KILN_DTYPE_F32, po, t, w.load(KILN_DTYPE_F32, s, w.const_i64(0)));
  std::vector<float> out(16);
  run_ok(w.ops, {arg_of(out)});
  for (float v : out) EXPECT_EQ(v, 5.0f);
}

TEST(InterpreterLocal, GroupsHaveTheirOwnLocalStorage) {
  // Each group's thread 0 writes the group id; after a barrier all threads copy it out.
  const std::int64_t groups = 40, threads = 4;
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, groups * threads);
  const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_I64, 3);
  const Id t = w.local_index(0, w.const_i64(threads));
  const Id g = w.group_index(0, w.const_i64(groups));
  const Id first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, t, w.const_i64(0)));
  w.store(KILN_DTYPE_I64, s, w.const_i64(2), g);
  w.end_if(first);
  w.barrier();
  w.store(KILN_DTYPE_I64, po, w.mad(KILN_DTYPE_I64, g, w.const_i64(threads), t), w.load(KILN_DTYPE_I64, s, w.const_i64(2)));
  std::vector<std::int64_t> out(groups * threads, -1);
  run_ok(w.ops, {arg_of(out)});
  for (std::int64_t i = 0; i < groups * threads; ++i) EXPECT_EQ(out[i], i / threads);
}

TEST(InterpreterLocal, BarrierInsideAnIfTheWholeGroupTakesIsFine) {
  // IF (group id is even) { barrier }: uniform within each group.
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, 6 * 8);
  const Id t = w.local_index(0, w.const_i64(8));
  const Id g = w.group_index(0, w.const_i64(6));
  const Id even = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, g, w.const_i64(2)),
                                 w.const_i64(0)));
  w.barrier();
  w.end_if(even);
  w.store(KILN_DTYPE_I64, po, w.mad(KILN_DTYPE_I64, g, w.const_i64(8), t), g);
  std::vector<std::int64_t> out(48);
  const sdk::ExecStats stats = run_ok(w.ops, {arg_of(out)});
  EXPECT_EQ(stats.barriers, 3u);
}

TEST(InterpreterLocal, DivergentBarrierIsAnError) {
  WireBuilder w;
  const Id t = w.local_index(0, w.const_i64(32));
  const Id half = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, t, w.const_i64(16)));
  const Id barrier = w.barrier();
  w.end_if(half);
  expect_fault(w.ops, {}, "divergent barrier at op " + std::to_string(barrier), barrier);
}

TEST(InterpreterLocal, BarrierInALoopWithPerThreadTripCountsIsDivergent) {
  WireBuilder w;
  const Id t = w.local_index(0, w.const_i64(4));
  const Id k = w.loop(w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, t, w.const_i64(1)));
  const Id barrier = w.barrier();
  w.end_loop(k);
  expect_fault(w.ops, {}, "divergent barrier at op " + std::to_string(barrier), barrier);
}

TEST(InterpreterLocal, ReadingUnwrittenStorageIsAnError) {
  {
    WireBuilder w;
    const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 4);
    const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 4);
    const Id t = w.local_index(0, w.const_i64(4));
    const Id load = w.load(KILN_DTYPE_F32, s, t);
    w.store(KILN_DTYPE_F32, po, t, load);
    std::vector<float> out(4);
    expect_fault(w.ops, {arg_of(out)}, "before any thread of its group wrote it", load);
  }
  {
    WireBuilder w;
    const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 1);
    const Id r = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 2);
    w.store(KILN_DTYPE_F32, r, w.const_i64(0), w.const_f32(1.0f));
    const Id load = w.load(KILN_DTYPE_F32, r, w.const_i64(1));
    w.store(KILN_DTYPE_F32, po, w.const_i64(0), load);
    std::vector<float> out(1);
    expect_fault(w.ops, {arg_of(out)}, "element 1 of REGISTER storage op 1 (2 f32) before this thread wrote it", load);
  }
}
