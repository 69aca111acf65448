// local_tile: LOCAL-memory tiling of matrix products (tiles of both
// operands staged per work-group, a register tile per thread).
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& local_tile() { return *find_optimization("local_tile"); }

// c[4,4] = a[4,2] b[2,4].
constexpr std::string_view kMatmul = R"(
%a = param 0 global f32[8]
%b = param 1 global f32[8]
%c = param 2 global_mut f32[16]
%n = const i64 4
%k = const i64 2
%j = index group 0 %n
%i = index group 1 %n
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

}  // namespace

TEST(LocalTile, StagesBothOperandsAndTilesTheThreads) {
  const ir::Kernel before = parse_valid(kMatmul);
  // One 4 x 4 block per group, 2 x 2 threads of 2 x 2 outputs, k in steps of 2.
  const ir::Kernel after = applied(before, "local_tile(bm=4,bn=4,bk=2,tm=2,tn=2)", gpu_preset());
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%a = param 0 global f32[8]
%b = param 1 global f32[8]
%c = param 2 global_mut f32[16]
%four = const i64 4
%two = const i64 2
%one = const i64 1
# columns: group gj (axis 0), thread lx (local axis 0), 2 columns each: jb, jb + 1
%gj = index group 0 %one
%lx = index local 0 %two
%j0 = mul %gj, %four
%lxt = mul %lx, %two
%jb = add %j0, %lxt
%j1 = add %jb, %one
# rows: group gi (axis 1), thread ly (local axis 1), 2 rows each: ib, ib + 1
%gi = index group 1 %one
%ly = index local 1 %two
%i0 = mul %gi, %four
%lyt = mul %ly, %two
%ib = add %i0, %lyt
%i1 = add %ib, %one
%zero = const f32 0
%acc = storage register f32[4]
%at = const i64 0
store %acc[%at], %zero
store %acc[%one], %zero
store %acc[%two], %zero
%three = const i64 3
store %acc[%three], %zero
%row0 = mul %ib, %two
%row1 = mul %i1, %two
# the tiles, [k][row] and [k][column]
%as = storage local f32[8]
%bs = storage local f32[8]
%tyx = mul %ly, %two
%t = add %tyx, %lx
%kt = loop %one
  %k0 = mul %kt, %two
  # a: 8 elements, 2 per thread; thread t copies row t, both k (k is fastest in a)
  %ar0 = add %i0, %t
  %arow0 = mul %ar0, %two
  %aidx0 = add %arow0, %k0
  %av0 = load f32 %a[%aidx0]
  store %as[%t], %av0
  %ar1 = add %i0, %t
  %k1 = add %k0, %one
  %arow1 = mul %ar1, %two
  %aidx1 = add %arow1, %k1
  %av1 = load f32 %a[%aidx1]
  %as1 = add %four, %t
  store %as[%as1], %av1
  # b: 8 elements, 2 per thread; thread t copies columns 2 (t % 2) and 2 (t % 2) + 1 of k row t / 2
  %bk = div %t, %two
  %bm = mod %t, %two
  %bc = mul %bm, %two
  %bj0 = add %j0, %bc
  %bkk0 = add %k0, %bk
  %brow0 = mul %bkk0, %four
  %bidx0 = add %brow0, %bj0
  %bv0 = load f32 %b[%bidx0]
  %bsrow0 = mul %bk, %four
  %bs0 = add %bsrow0, %bc
  store %bs[%bs0], %bv0
  %bc1 = add %bc, %one
  %bj1 = add %j0, %bc1
  %bkk1 = add %k0, %bk
  %brow1 = mul %bkk1, %four
  %bidx1 = add %brow1, %bj1
  %bv1 = load f32 %b[%bidx1]
  %bsrow1 = mul %bk, %four
  %bs1 = add %bsrow1, %bc1
  store %bs[%bs1], %bv1
  barrier
  # the 2 x 2 tile from LOCAL storage (the old loads of a and b are dead)
  %kk = loop %two
    %kabs = add %k0, %kk
    %arow = mul %kk, %four
    %abase = add %arow, %lyt
    %brow = mul %kk, %four
    %bbase = add %brow, %lxt
    %ai0 = add %row0, %kabs
    %ai1 = add %row1, %kabs
    %x0 = load f32 %as[%abase]
    %abase1 = add %abase, %one
    %x1 = load f32 %as[%abase1]
    %bp = mul %kabs, %four
    %bi0 = add %bp, %jb
    %bi1 = add %bp, %j1
    %y0 = load f32 %bs[%bbase]
    %bbase1 = add %bbase, %one
    %y1 = load f32 %bs[%bbase1]
    %x0y0 = mul %x0, %y0
    %x0y1 = mul %x0, %y1
    %x1y0 = mul %x1, %y0
    %x1y1 = mul %x1, %y1
    %s00 = load f32 %acc[%at]
    %s01 = load f32 %acc[%one]
    %s10 = load f32 %acc[%two]
    %s11 = load f32 %acc[%three]
    %t00 = add %s00, %x0y0
    %t01 = add %s01, %x0y1
    %t10 = add %s10, %x1y0
    %t11 = add %s11, %x1y1
    store %acc[%at], %t00
    store %acc[%one], %t01
    store %acc[%two], %t10
    store %acc[%three], %t11
  endloop
  barrier
endloop
%r00 = load f32 %acc[%at]
%r01 = load f32 %acc[%one]
%r10 = load f32 %acc[%two]
%r11 = load f32 %acc[%three]
%crow0 = mul %ib, %four
%crow1 = mul %i1, %four
%c00 = add %crow0, %jb
%c01 = add %crow0, %j1
%c10 = add %crow1, %jb
%c11 = add %crow1, %j1
store %c[%c00], %r00
store %c[%c01], %r01
store %c[%c10], %r10
store %c[%c11], %r11
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(LocalTile, StandardMatrixProductsKeepTheirResults) {
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {"matmul", {.m = 128, .n = 128, .k = 16}, "local_tile(bm=128,bn=128,bk=8,tm=8,tn=8)"},
      {"matmul", {.m = 64, .n = 128, .k = 32}, "local_tile(bm=64,bn=128,bk=32,tm=4,tn=8)"},
      {"matmul", {.m = 24, .n = 40, .k = 15}, "local_tile(bm=8,bn=20,bk=5,tm=2,tn=4)"},     // strided copies, guarded
      {"matmul", {.m = 6, .n = 9, .k = 7}, "local_tile(bm=3,bn=9,bk=7,tm=1,tn=3)"},
      {"matmul-bt", {.m = 64, .n = 64, .k = 24}, "local_tile(bm=64,bn=64,bk=8,tm=4,tn=4)"},  // b read k-fastest
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + " " + std::string(c.step));
    const kernels::StandardKernel k = standard(c.kernel, c.size);
    const ir::Kernel after = applied(k.kernel, c.step, gpu_preset());
    EXPECT_EQ(compare_standard(k, after, 17), "");
  }
  for (ir::DType dtype : {ir::DType::F16, ir::DType::I32}) {
    const kernels::StandardKernel k = standard("matmul", {.m = 16, .n = 16, .k = 8}, dtype);
    EXPECT_EQ(compare_standard(k, applied(k.kernel, "local_tile(bm=16,bn=16,bk=4,tm=4,tn=2)", small_preset()), 3), "")
        << ir::dtype_name(dtype);
  }
}

TEST(LocalTile, ThenVectorizeGivesTheHandWrittenShape) {
  // The GPU probe's shape (tests/support/probe_kernels.hpp): 128 x 128
  // blocks, 8 x 8 per thread, float4 copies into LOCAL storage and float4
  // reads from it, float4 stores of c.
  const kernels::StandardKernel k = standard("matmul", {.m = 128, .n = 128, .k = 16});
  const ir::Kernel tiled = applied(k.kernel, "local_tile(bm=128,bn=128,bk=8,tm=8,tn=8)", gpu_preset());
  const ir::Kernel vectorized = applied(tiled, "vectorize(lanes=4)", gpu_preset());
  const std::string text = ir::print(vectorized);
  EXPECT_THAT(text, HasSubstr("= load f32x4 %0["));   // a, 4 consecutive k per thread
  EXPECT_THAT(text, HasSubstr("= load f32x4 %1["));   // b, 4 consecutive columns
  EXPECT_THAT(text, HasSubstr("store f32x4 %2["));    // c
  EXPECT_EQ(compare_standard(k, vectorized, 9), "");
}

TEST(LocalTile, ConfigsFitTheDevice) {
  const kernels::StandardKernel k = standard("matmul", {.m = 1024, .n = 1024, .k = 1024});
  const std::vector<std::string> gpu = config_texts(local_tile(), k.kernel, gpu_preset());
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu.front(), "local_tile(bm=128,bn=128,bk=8,tm=8,tn=8)");
  // 128 x 128 with 4 x 4 per thread is 1024 threads: too many for the small
  // device (256), as are tiles over its 16 KiB of LOCAL memory.
  for (const std::string& text : config_texts(local_tile(), k.kernel, small_preset())) {
    EXPECT_THAT(text, ::testing::Not(HasSubstr("bm=128,bn=128,bk=32")));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("bm=128,bn=128,bk=8,tm=4,tn=4")));
  }
  EXPECT_TRUE(local_tile().configs(k.kernel, cpu_preset()).empty());  // one thread per group
  // Odd sizes: no block size divides them.
  EXPECT_TRUE(local_tile().configs(standard("matmul", {.m = 100, .n = 100, .k = 100}).kernel, gpu_preset()).empty());
  EXPECT_TRUE(local_tile().configs(standard("sum-rows", {.m = 128, .n = 128}).kernel, gpu_preset()).empty());
  EXPECT_TRUE(local_tile().configs(standard("transpose", {.m = 128, .n = 128}).kernel, gpu_preset()).empty());
}

TEST(LocalTile, ConfigsSkipDynamicLengths) {
  const ir::Kernel dynamic = parse_valid(R"(
%a = param 0 global f32[?]
%b = param 1 global f32[?]
%c = param 2 global_mut f32[?]
%n = param 3 var i64
%j = index group 0 %n
%i = index group 1 %n
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%p = loop %n
  %row = mul %i, %n
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
  EXPECT_TRUE(local_tile().configs(dynamic, gpu_preset()).empty());
  EXPECT_THAT(step_error_message(dynamic, "local_tile(bm=64,bn=64,bk=8,tm=4,tn=4)", gpu_preset()),
              HasSubstr("dynamic trip count"));
}

TEST(LocalTile, RefusesStepsThatDoNotFit) {
  const kernels::StandardKernel k = standard("matmul", {.m = 96, .n = 64, .k = 20});
  EXPECT_THAT(step_error_message(k.kernel, "local_tile(bm=64,bn=64,bk=4,tm=4,tn=4)", gpu_preset()),
              HasSubstr("bm=64 does not divide GROUP axis 1's length 96"));
  EXPECT_THAT(step_error_message(k.kernel, "local_tile(bm=32,bn=64,bk=8,tm=4,tn=4)", gpu_preset()),
              HasSubstr("bk=8 does not divide the trip count 20"));
  EXPECT_THAT(step_error_message(k.kernel, "local_tile(bm=32,bn=64,bk=4,tm=1,tn=1)", gpu_preset()),
              HasSubstr("threads per group exceed"));
  EXPECT_THAT(step_error_message(k.kernel, "local_tile(bm=32,bn=64,bk=4,tm=3,tn=4)", gpu_preset()),
              HasSubstr("tm must divide bm"));
  EXPECT_THAT(step_error_message(k.kernel, "local_tile(bm=32,bn=64,bk=4,tm=4)", gpu_preset()),
              HasSubstr("missing parameter 'tn'"));
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 64, .n = 64}).kernel, "local_tile(bm=32,bn=32,bk=4,tm=4,tn=4)",
                                 gpu_preset()),
              HasSubstr("not a matrix product: "));
  // Once tiled, a kernel has LOCAL threads and is not tiled again.
  const ir::Kernel tiled = applied(k.kernel, "local_tile(bm=32,bn=64,bk=4,tm=4,tn=4)", gpu_preset());
  EXPECT_THAT(step_error_message(tiled, "local_tile(bm=32,bn=64,bk=4,tm=4,tn=4)", gpu_preset()),
              HasSubstr("already has LOCAL threads"));
}
