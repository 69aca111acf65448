// register_block: an output tile per thread (GROUP axes 0 and 1 coarsened
// by tm and tn, REGISTER accumulators widened to the tile, the reduction
// loop unrolled).
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

// c[4,4] = a[4,3] b[3,4], as the standard matmul kernel writes it.
constexpr std::string_view kMatmul = R"(
%a = param 0 global f32[12]
%b = param 1 global f32[12]
%c = param 2 global_mut f32[16]
%m = const i64 4
%n = const i64 4
%k = const i64 3
%j = index group 0 %n
%i = index group 1 %m
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%row = mul %i, %k
%p = loop %k
  %ai = add %row, %p
  %x = load f32 %a[%ai]
  %bp = mul %p, %n
  %bi = add %bp, %j
  %y = load f32 %b[%bi]
  %xy = mul %x, %y
  %s = load f32 %acc[%at]
  %t = add %s, %xy
  store %acc[%at], %t
endloop
%r = load f32 %acc[%at]
%crow = mul %i, %n
%ci = add %crow, %j
store %c[%ci], %r
)";

const Optimization& register_block() { return *find_optimization("register_block"); }

}  // namespace

TEST(RegisterBlock, TilesTheAccumulatorAndSharesLoads) {
  const ir::Kernel before = parse_valid(kMatmul);
  const ir::Kernel after = applied(before, "register_block(loop=0,tm=2,tn=2,unroll=1)", cpu_preset());
  // Half the groups on each axis, each thread a 2 x 2 tile (rows i on axis
  // 1, columns j on axis 0): per k, two loads of a (one per row), two of b
  // (one per column), four products into a 4-element accumulator
  // (row-major, columns side by side).
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%a = param 0 global f32[12]
%b = param 1 global f32[12]
%c = param 2 global_mut f32[16]
%m = const i64 4
%n = const i64 4
%k = const i64 3
%two = const i64 2
%gj = index group 0 %two
%j0 = mul %gj, %two
%one = const i64 1
%j1 = add %j0, %one
%gi = index group 1 %two
%i0 = mul %gi, %two
%i1 = add %i0, %one
%zero = const f32 0
%acc = storage register f32[4]
%at = const i64 0
store %acc[%at], %zero
store %acc[%one], %zero
store %acc[%two], %zero
store %acc[%k], %zero
%row0 = mul %i0, %k
%row1 = mul %i1, %k
%p = loop %k
  %ai0 = add %row0, %p
  %ai1 = add %row1, %p
  %x0 = load f32 %a[%ai0]
  %x1 = load f32 %a[%ai1]
  %bp = mul %p, %n
  %bi0 = add %bp, %j0
  %bi1 = add %bp, %j1
  %y0 = load f32 %b[%bi0]
  %y1 = load f32 %b[%bi1]
  %x0y0 = mul %x0, %y0
  %x0y1 = mul %x0, %y1
  %x1y0 = mul %x1, %y0
  %x1y1 = mul %x1, %y1
  %s00 = load f32 %acc[%at]
  %s01 = load f32 %acc[%one]
  %s10 = load f32 %acc[%two]
  %s11 = load f32 %acc[%k]
  %t00 = add %s00, %x0y0
  %t01 = add %s01, %x0y1
  %t10 = add %s10, %x1y0
  %t11 = add %s11, %x1y1
  store %acc[%at], %t00
  store %acc[%one], %t01
  store %acc[%two], %t10
  store %acc[%k], %t11
endloop
%r00 = load f32 %acc[%at]
%r01 = load f32 %acc[%one]
%r10 = load f32 %acc[%two]
%r11 = load f32 %acc[%k]
%crow0 = mul %i0, %n
%crow1 = mul %i1, %n
%c00 = add %crow0, %j0
%c01 = add %crow0, %j1
%c10 = add %crow1, %j0
%c11 = add %crow1, %j1
store %c[%c00], %r00
store %c[%c01], %r01
store %c[%c10], %r10
store %c[%c11], %r11
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(RegisterBlock, StandardKernelsKeepTheirResults) {
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {"matmul", {.m = 8, .n = 32, .k = 5}, "register_block(loop=0,tm=8,tn=32,unroll=1)"},
      {"matmul", {.m = 6, .n = 10, .k = 12}, "register_block(loop=0,tm=2,tn=5,unroll=4)"},
      {"matmul", {.m = 9, .n = 7, .k = 7}, "register_block(loop=0,tm=3,tn=1,unroll=7)"},
      {"matmul-bt", {.m = 12, .n = 8, .k = 9}, "register_block(loop=0,tm=4,tn=8,unroll=3)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + " " + std::string(c.step));
    const kernels::StandardKernel k = standard(c.kernel, c.size);
    const ir::Kernel after = applied(k.kernel, c.step, cpu_preset());
    EXPECT_EQ(compare_standard(k, after, 11), "");
  }
  for (ir::DType dtype : {ir::DType::F16, ir::DType::I32, ir::DType::F64}) {
    const kernels::StandardKernel k = standard("matmul", {.m = 4, .n = 6, .k = 10}, dtype);
    const ir::Kernel after = applied(k.kernel, "register_block(loop=0,tm=2,tn=3,unroll=2)", gpu_preset());
    EXPECT_EQ(compare_standard(k, after, 5), "") << ir::dtype_name(dtype);
  }
}

TEST(RegisterBlock, ConfigsListTilesWithinTheRegisterBudget) {
  const kernels::StandardKernel k = standard("matmul", {.m = 64, .n = 64, .k = 64});
  const std::vector<std::string> cpu = config_texts(register_block(), k.kernel, cpu_preset());
  ASSERT_FALSE(cpu.empty());
  // 2048 register bytes: accumulators take at most half, 8 x 32 f32.
  EXPECT_EQ(cpu.front(), "register_block(loop=0,tm=8,tn=32,unroll=1)");
  const std::vector<std::string> gpu = config_texts(register_block(), k.kernel, gpu_preset());
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu.front(), "register_block(loop=0,tm=8,tn=16,unroll=1)");
  // Every config applies and keeps the results.
  const kernels::StandardKernel small = standard("matmul", {.m = 8, .n = 32, .k = 8});
  for (const std::string& text : config_texts(register_block(), small.kernel, cpu_preset()))
    EXPECT_EQ(compare_standard(small, applied(small.kernel, text, cpu_preset()), 3), "") << text;
  // No reduction loop, or one GROUP axis: nothing to tile.
  EXPECT_TRUE(register_block().configs(standard("transpose", {.m = 8, .n = 8}).kernel, cpu_preset()).empty());
  EXPECT_TRUE(register_block().configs(standard("sum-rows", {.m = 8, .n = 8}).kernel, cpu_preset()).empty());
}

TEST(RegisterBlock, ConfigsSkipDynamicLengths) {
  // Both group lengths and the trip count come from VARIABLE params.
  const ir::Kernel dynamic = parse_valid(R"(
%a = param 0 global f32[?]
%b = param 1 global f32[?]
%c = param 2 global_mut f32[?]
%m = param 3 var i64
%n = param 4 var i64
%k = param 5 var i64
%j = index group 0 %n
%i = index group 1 %m
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%p = loop %k
  %row = mul %i, %k
  %ai = add %row, %p
  %x = load f32 %a[%ai]
  %bp = mul %p, %n
  %bi = add %bp, %j
  %y = load f32 %b[%bi]
  %xy = mul %x, %y
  %s = load f32 %acc[%at]
  %t = add %s, %xy
  store %acc[%at], %t
endloop
%r = load f32 %acc[%at]
%crow = mul %i, %n
%ci = add %crow, %j
store %c[%ci], %r
)");
  EXPECT_TRUE(register_block().configs(dynamic, cpu_preset()).empty());
  EXPECT_THAT(step_error_message(dynamic, "register_block(loop=0,tm=2,tn=2)", cpu_preset()),
              HasSubstr("GROUP axis 0 has a dynamic length"));
}

TEST(RegisterBlock, RefusesStepsThatDoNotFit) {
  const ir::Kernel k = parse_valid(kMatmul);
  EXPECT_THAT(step_error_message(k, "register_block(loop=1,tm=2,tn=2)", cpu_preset()), HasSubstr("loop=1 does not exist"));
  EXPECT_THAT(step_error_message(k, "register_block(loop=0,tm=3,tn=2)", cpu_preset()),
              HasSubstr("tm=3 does not divide GROUP axis 1's length 4"));
  EXPECT_THAT(step_error_message(k, "register_block(loop=0,tm=2,tn=2,unroll=2)", cpu_preset()),
              HasSubstr("unroll=2 does not divide the trip count 3"));
  EXPECT_THAT(step_error_message(k, "register_block(loop=0,tm=1,tn=1,unroll=1)", cpu_preset()),
              HasSubstr("changes nothing"));
  EXPECT_THAT(step_error_message(k, "register_block(loop=0,tm=2)", cpu_preset()), HasSubstr("missing parameter 'tn'"));
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 4, .n = 4}).kernel, "register_block(loop=0,tm=2,tn=2)",
                                 cpu_preset()),
              HasSubstr("no GROUP index on axis 1"));
}

TEST(RegisterBlock, UnrollsTheReductionLoop) {
  const ir::Kernel before = parse_valid(R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[1]
%zero = const f32 0
%one = const i64 1
%four = const i64 4
%i = index group 0 %one
%j = index group 1 %one
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%p = loop %four
  %v = load f32 %x[%p]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%r = load f32 %acc[%at]
store %y[%at], %r
)");
  // Two body copies per iteration, counter p' * 2 + copy; no tile (tm = tn = 1).
  const ir::Kernel after = applied(before, "register_block(loop=0,tm=1,tn=1,unroll=2)", cpu_preset());
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[1]
%zero = const f32 0
%one = const i64 1
%four = const i64 4
%i = index group 0 %one
%j = index group 1 %one
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%two = const i64 2
%q = loop %two
  %p0 = mul %q, %two
  %v0 = load f32 %x[%p0]
  %s0 = load f32 %acc[%at]
  %t0 = add %s0, %v0
  store %acc[%at], %t0
  %p1 = add %p0, %one
  %v1 = load f32 %x[%p1]
  %s1 = load f32 %acc[%at]
  %t1 = add %s1, %v1
  store %acc[%at], %t1
endloop
%r = load f32 %acc[%at]
store %y[%at], %r
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(RegisterBlock, RefusesControlFlowThatDiffersAlongTheTile) {
  // A guard on the row: the copies of a tile would need different branches.
  const ir::Kernel guarded = parse_valid(R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[16]
%four = const i64 4
%three = const i64 3
%j = index group 0 %four
%i = index group 1 %four
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%p = loop %four
  %row = mul %i, %four
  %xi = add %row, %p
  %v = load f32 %x[%xi]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%inside = cmplt %i, %three
if %inside
  %r = load f32 %acc[%at]
  %row2 = mul %i, %four
  %yi = add %row2, %j
  store %y[%yi], %r
endif
)");
  EXPECT_THAT(step_error_message(guarded, "register_block(loop=0,tm=2,tn=2)", cpu_preset()),
              HasSubstr("has a condition that differs between the tiled threads"));
  // Along axis 0 (n) only, the guard is shared by the tile.
  const ir::Kernel along_n = applied(guarded, "register_block(loop=0,tm=1,tn=4)", cpu_preset());
  EXPECT_EQ(compare_runs(guarded, along_n), "");
}
