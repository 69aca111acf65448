// The interpreter's statistics (what the dummy device's timing model reads),
// and its speed on a matrix product (printed, not asserted).
#include <gtest/gtest.h>

#include <ctime>
#include <cstdio>

#include "interp_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

TEST(InterpreterStats, NeighbouringThreadsReadingNeighbouringElementsShareSectors) {
  const std::int64_t threads = 256;
  std::vector<float> x(threads * 32), out(threads);
  const sdk::ExecStats coalesced = run_ok(wire_strided_copy(1, threads, 1), {arg_of(x), arg_of(out)});
  const sdk::ExecStats strided = run_ok(wire_strided_copy(1, threads, 32), {arg_of(x), arg_of(out)});
  // 8 warps of 32 threads; 32 * 4 bytes = 4 sectors of 32 bytes per warp.
  EXPECT_EQ(coalesced.global().loads, 256u);
  EXPECT_EQ(coalesced.global().warp_accesses, 8u + 8u);  // the load and the store
  EXPECT_EQ(coalesced.global().sectors, 32u + 32u);
  // Stride 32 floats = 128 bytes: every thread its own sector.
  EXPECT_EQ(strided.global().sectors, 256u + 32u);
  EXPECT_EQ(strided.global().load_bytes, coalesced.global().load_bytes);
}

TEST(InterpreterStats, WarpsCountThreadsOfOneGroupOnly) {
  const std::int64_t n = 1024;
  std::vector<float> a(n), b(n), c(n);
  const sdk::ExecStats single = run_ok(wire_add_grouped(n, 1), {arg_of(a), arg_of(b), arg_of(c)});
  const sdk::ExecStats wide = run_ok(wire_add_grouped(n, 32), {arg_of(a), arg_of(b), arg_of(c)});
  EXPECT_EQ(single.warps, 1024u);
  EXPECT_EQ(wide.warps, 32u);
  // The add: once per thread either way, but one issue per warp.
  EXPECT_EQ(single.thread(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(wide.thread(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(single.warp(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(wide.warp(sdk::OpClass::FloatAlu), 32u);
  EXPECT_EQ(single.global().sectors, 3u * 1024u);
  EXPECT_EQ(wide.global().sectors, 3u * 32u * 4u);
}

TEST(InterpreterStats, VectorAccessesAreFewerInstructionsForTheSameBytes) {
  const std::int64_t n = 4096;
  std::vector<float> a(n), b(n), c(n);
  const sdk::ExecStats scalar = run_ok(wire_add_grouped(n, 64, 1), {arg_of(a), arg_of(b), arg_of(c)});
  const sdk::ExecStats vector = run_ok(wire_add_grouped(n, 64, 4), {arg_of(a), arg_of(b), arg_of(c)});
  EXPECT_EQ(scalar.global().load_bytes, vector.global().load_bytes);
  EXPECT_EQ(scalar.global().loads, 4 * vector.global().loads);
  EXPECT_EQ(scalar.global().warp_accesses, 4 * vector.global().warp_accesses);
  EXPECT_EQ(scalar.global().sectors, vector.global().sectors);
  EXPECT_EQ(scalar.thread(sdk::OpClass::FloatAlu), vector.thread(sdk::OpClass::FloatAlu));  // per lane
}

TEST(InterpreterStats, OpClassesAndStorageTraffic) {
  const std::int64_t m = 8, n = 8, k = 16;
  std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2), c(m * n);
  const sdk::ExecStats s = run_ok(wire_naive_matmul(m, n, k), {arg_of(a), arg_of(b), arg_of(c)});
  const std::uint64_t threads = m * n, iterations = m * n * k;
  EXPECT_EQ(s.thread(sdk::OpClass::FloatAlu), iterations);                // the float mad
  EXPECT_EQ(s.thread(sdk::OpClass::IntAlu), 2 * iterations + threads);    // two index mads per iteration, one after
  EXPECT_EQ(s.thread(sdk::OpClass::Control), threads * (1 + k));          // loop + k end_loops
  EXPECT_EQ(s.registers().loads, iterations + threads);
  EXPECT_EQ(s.registers().stores, iterations + threads);
  EXPECT_EQ(s.register_bytes_per_thread, 4u);
  EXPECT_EQ(s.global().loads, 2 * iterations);
  EXPECT_EQ(s.global().stores, threads);
  EXPECT_EQ(s.executed_ops, threads /* starts */ + threads * (2 + k * 8 + 1 + 2));
}

TEST(InterpreterStats, MatmulSpeed) {
  const std::int64_t size = 128;
  std::vector<float> a = random_floats(size * size, 1), b = random_floats(size * size, 2), c(size * size);
  auto ops = wire_naive_matmul(size, size, size);
  sdk::InterpretedProgram program(ops);
  // CPU time, not wall time: the machines running the tests are shared.
  const std::clock_t begin = std::clock();
  const sdk::ExecStats s = program.run(std::vector<kiln_arg>{arg_of(a), arg_of(b), arg_of(c)});
  const double seconds = static_cast<double>(std::clock() - begin) / CLOCKS_PER_SEC;
  // Spot-check one element against a plain loop.
  float want = 0.0f;
  for (std::int64_t t = 0; t < size; ++t) {
    const float p = a[5 * size + t] * b[t * size + 7];
    want = p + want;
  }
  EXPECT_EQ(c[5 * size + 7], want);
  std::printf("[ speed    ] %lldx%lldx%lld matmul: %.0f executed ops in %.3f s of CPU = %.1f M ops/s\n",
              static_cast<long long>(size), static_cast<long long>(size), static_cast<long long>(size),
              static_cast<double>(s.executed_ops), seconds, s.executed_ops / seconds / 1e6);
  RecordProperty("ops_per_second", std::to_string(static_cast<long long>(s.executed_ops / seconds)));
}

// RunOptions::only_groups runs a sample of the grid, and global_writes says
// which elements it stored to: ranges in the order written, a store that
// continues the last range extending it (vector stores included), nothing
// for buffers only read.
TEST(InterpreterSample, TheWriteLogHoldsWhatTheSampledGroupsStored) {
  const std::int64_t n = 1024;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, -7.0f);
  const std::uint64_t groups[] = {3, 0};
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> writes;
  sdk::RunOptions options;
  options.only_groups = groups;
  options.global_writes = &writes;
  // 32 threads a group, 4 lanes each: group g writes [128 g, 128 g + 128).
  run_ok(wire_add_grouped(n, 32, 4), {arg_of(a), arg_of(b), arg_of(c)}, options);
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_TRUE(writes[0].empty());
  EXPECT_TRUE(writes[1].empty());
  using Range = std::pair<std::uint64_t, std::uint64_t>;
  EXPECT_EQ(writes[2], (std::vector<Range>{{384, 512}, {0, 128}}));
  // Only those groups ran.
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[400], 3.0f);
  EXPECT_EQ(c[200], -7.0f);
  EXPECT_EQ(c[1023], -7.0f);
}
