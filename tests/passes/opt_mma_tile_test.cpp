// mma_tile: matrix products on the warp MMA op. The rewritten kernels run on
// the dummy device with "mma": true (the reference interpreter behind the
// plugin ABI) and must give the untuned kernel's outputs exactly: f16/bf16
// products are exact in f32 and the MMA sums k ascending, as the loop does.
#include "passes/device_runner.hpp"
#include "passes/mma_support.hpp"
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

#include <memory>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& mma_tile() { return *find_optimization("mma_tile"); }

// c[16,8] = a[16,16] b[16,8], f16 in memory, f32 accumulation (the standard
// matmul's form).
constexpr std::string_view kTiny = R"(
%a = param 0 global f16[256]
%b = param 1 global f16[128]
%c = param 2 global_mut f16[128]
%m = const i64 16
%n = const i64 8
%k = const i64 16
%j = index group 0 %n
%i = index group 1 %m
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%row = mul %i, %k
%p = loop %k
  %ai = add %row, %p
  %x16 = load f16 %a[%ai]
  %x = cast f32 %x16
  %bp = mul %p, %n
  %bi = add %bp, %j
  %y16 = load f16 %b[%bi]
  %y = cast f32 %y16
  %xy = mul %x, %y
  %s = load f32 %acc[%at]
  %t = add %s, %xy
  store %acc[%at], %t
endloop
%r = load f32 %acc[%at]
%r16 = cast f16 %r
%crow = mul %i, %n
%ci = add %crow, %j
store %c[%ci], %r16
)";

}  // namespace

TEST(MmaTile, OneWarpOneTile) {
  const ir::Kernel before = parse_valid(kTiny);
  const ir::Kernel after = applied(before, "mma_tile(warps=1,tm=1,tn=1)", mma_preset());
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%a = param 0 global f16[256]
%b = param 1 global f16[128]
%c = param 2 global_mut f16[128]
# one group, one warp: lane = the local index, g = lane / 4, t = lane % 4
%one = const i64 1
%gn = index group 0 %one
%gm = index group 1 %one
%n32 = const i64 32
%lane = index local 0 %n32
%four = const i64 4
%g = div i64 %lane, %four
%t = mod i64 %lane, %four
%two = const i64 2
%t2 = mul i64 %t, %two
%n16 = const i64 16
%m0 = mul i64 %gm, %n16
%n8 = const i64 8
%n0 = mul i64 %gn, %n8
# rows g and g + 8: A row offsets (16 per row), C row offsets (8 per row)
%mg = add i64 %m0, %g
%a_row0 = mul i64 %mg, %n16
%c_row0 = mul i64 %mg, %n8
%mg8 = add i64 %mg, %n8
%a_row1 = mul i64 %mg8, %n16
%c_row1 = mul i64 %mg8, %n8
# B column g; C columns 2t, 2t + 1; the lane's k offsets 2t, 2t + 1, 2t + 8, 2t + 9
%ng = add i64 %n0, %g
%nt = add i64 %n0, %t2
%nt1 = add i64 %nt, %one
%t2p1 = add i64 %t2, %one
%t2p8 = add i64 %t2, %n8
%n9 = const i64 9
%t2p9 = add i64 %t2, %n9
# one f32x4 accumulator, zeroed
%acc = storage register f32[4]
%zf = const f32 0
%zero4 = broadcast f32x4 %zf
%at = const i64 0
store f32x4 %acc[%at], %zero4
%zh = const f16 0
%kt = loop %one
  %k0 = mul i64 %kt, %n16
  %k00 = add i64 %k0, %t2
  %bk00 = mul i64 %k00, %n8
  %k01 = add i64 %k0, %t2p1
  %bk01 = mul i64 %k01, %n8
  %k08 = add i64 %k0, %t2p8
  %bk08 = mul i64 %k08, %n8
  %k09 = add i64 %k0, %t2p9
  %bk09 = mul i64 %k09, %n8
  # A: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1), then the same at k + 8
  %v46 = add i64 %a_row0, %k00
  %v47 = load f16 %a[%v46]
  %v48 = add i64 %a_row0, %k01
  %v49 = load f16 %a[%v48]
  %v50 = add i64 %a_row1, %k00
  %v51 = load f16 %a[%v50]
  %v52 = add i64 %a_row1, %k01
  %v53 = load f16 %a[%v52]
  %v54 = add i64 %a_row0, %k08
  %v55 = load f16 %a[%v54]
  %v56 = add i64 %a_row0, %k09
  %v57 = load f16 %a[%v56]
  %v58 = add i64 %a_row1, %k08
  %v59 = load f16 %a[%v58]
  %v60 = add i64 %a_row1, %k09
  %v61 = load f16 %a[%v60]
  %fa0 = broadcast f16x8 %v47
  %v63 = insert f16x8 %fa0[1], %v49
  %v64 = insert f16x8 %v63[2], %v51
  %v65 = insert f16x8 %v64[3], %v53
  %v66 = insert f16x8 %v65[4], %v55
  %v67 = insert f16x8 %v66[5], %v57
  %v68 = insert f16x8 %v67[6], %v59
  %fa = insert f16x8 %v68[7], %v61
  # B: (2t, g), (2t + 1, g), (2t + 8, g), (2t + 9, g)
  %v70 = add i64 %bk00, %ng
  %v71 = load f16 %b[%v70]
  %v72 = add i64 %bk01, %ng
  %v73 = load f16 %b[%v72]
  %v74 = add i64 %bk08, %ng
  %v75 = load f16 %b[%v74]
  %v76 = add i64 %bk09, %ng
  %v77 = load f16 %b[%v76]
  %fb0 = broadcast f16x4 %v71
  %v79 = insert f16x4 %fb0[1], %v73
  %v80 = insert f16x4 %v79[2], %v75
  %fb = insert f16x4 %v80[3], %v77
  %d0 = load f32x4 %acc[%at]
  %d = mma m16n8k16 f16 %fa, %fb, %d0
  store f32x4 %acc[%at], %d
endloop %kt
# C: element i at row g + 8 (i / 2), column 2t + i % 2
%r = load f32x4 %acc[%at]
%v87 = extract f32 %r[0]
%v88 = cast f16 %v87
%v89 = add i64 %c_row0, %nt
store f16 %c[%v89], %v88
%v91 = extract f32 %r[1]
%v92 = cast f16 %v91
%v93 = add i64 %c_row0, %nt1
store f16 %c[%v93], %v92
%v95 = extract f32 %r[2]
%v96 = cast f16 %v95
%v97 = add i64 %c_row1, %nt
store f16 %c[%v97], %v96
%v99 = extract f32 %r[3]
%v100 = cast f16 %v99
%v101 = add i64 %c_row1, %nt1
store f16 %c[%v101], %v100
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(MmaTile, MatchesTheUntunedKernelExactlyOnTheDummy) {
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {"matmul", {.m = 64, .n = 64, .k = 64}, "mma_tile(warps=4,tm=2,tn=2)"},     // no guards
      {"matmul", {.m = 64, .n = 64, .k = 64}, "mma_tile(warps=1,tm=4,tn=8)"},
      {"matmul", {.m = 33, .n = 17, .k = 40}, "mma_tile(warps=2,tm=1,tn=2)"},     // every side guarded
      {"matmul", {.m = 33, .n = 17, .k = 40}, "mma_tile(warps=8,tm=1,tn=1)"},
      {"matmul", {.m = 1, .n = 1, .k = 1}, "mma_tile(warps=1,tm=1,tn=1)"},
      {"matmul", {.m = 100, .n = 72, .k = 50}, "mma_tile(warps=4,tm=2,tn=4)"},
      {"matmul-bt", {.m = 48, .n = 40, .k = 37}, "mma_tile(warps=2,tm=2,tn=1)"},  // B read k-fastest
  };
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.kernel) + " " + std::to_string(c.size.m) + "x" + std::to_string(c.size.n) + "x" +
                   std::to_string(c.size.k) + " " + std::string(ir::dtype_name(dtype)) + " " + std::string(c.step));
      EXPECT_EQ(differs_on_dummy(standard(c.kernel, c.size, dtype), c.step), "");
    }
}

TEST(MmaTile, EveryConfigOfAnOddShapeMatches) {
  const DeviceInfo* info = mma_device_info();
  ASSERT_NE(info, nullptr);
  const kernels::StandardKernel k = standard("matmul", {.m = 33, .n = 17, .k = 40}, ir::DType::F16);
  const std::vector<std::string> configs = config_texts(mma_tile(), k.kernel, *info);
  ASSERT_FALSE(configs.empty());
  for (const std::string& step : configs) {
    SCOPED_TRACE(step);
    EXPECT_EQ(differs_on_dummy(k, step, 0, 9), "");
  }
}

TEST(MmaTile, AppliesToTheNormalizedKernel) {
  // What the tuner hands it: the always-on passes' form of the matmul.
  const DeviceInfo* info = mma_device_info();
  ASSERT_NE(info, nullptr);
  const kernels::StandardKernel k = standard("matmul", {.m = 40, .n = 24, .k = 24}, ir::DType::BF16);
  const ir::Kernel normalized = passes::normalize(k.kernel, *info);
  EXPECT_FALSE(mma_tile().configs(normalized, *info).empty()) << ir::print(normalized);
  Result<ir::Kernel> lowered = passes::optimize(k.kernel, parse_sequence("mma_tile(warps=2,tm=2,tn=1)").value(), *info);
  ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
  EXPECT_THAT(ir::print(*lowered), HasSubstr("mma m16n8k16 bf16"));
  EXPECT_EQ(compare_standard(k, *lowered, 3, 0), "");
}

TEST(MmaTile, Tf32OnlyWhenAsked) {
  const kernels::StandardKernel k = standard("matmul", {.m = 33, .n = 17, .k = 40});
  EXPECT_TRUE(mma_tile().configs(k.kernel, mma_preset()).empty());  // f32: never proposed
  EXPECT_THAT(step_error_message(k.kernel, "mma_tile(warps=1,tm=1,tn=1)", mma_preset()), HasSubstr("need tf32=1"));
  const std::string_view step = "mma_tile(warps=2,tm=2,tn=2,tf32=1)";
  EXPECT_THAT(ir::print(applied(k.kernel, step, mma_preset())), HasSubstr("mma m16n8k8 tf32"));
  // tf32 keeps 10 mantissa bits of each input: about 2^-11 relative per
  // product; the sums of 40 products of [-1, 1] inputs stay within 1e-2.
  EXPECT_EQ(differs_on_dummy(k, step, 1e-2), "");
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 16, .n = 8, .k = 16}, ir::DType::F16).kernel,
                                 "mma_tile(warps=1,tm=1,tn=1,tf32=1)", mma_preset()),
              HasSubstr("tf32=1 is for f32 inputs"));
}

TEST(MmaTile, ConfigsNeedTheOpAndTheFeature) {
  const kernels::StandardKernel f16 = standard("matmul", {.m = 256, .n = 256, .k = 64}, ir::DType::F16);
  const std::vector<std::string> configs = config_texts(mma_tile(), f16.kernel, mma_preset());
  EXPECT_EQ(configs.size(), 48u);  // warps 1, 2, 4, 8 x tm 1, 2, 4 x tn 1, 2, 4, 8
  EXPECT_EQ(configs.front(), "mma_tile(warps=1,tm=1,tn=1)");
  EXPECT_TRUE(mma_tile().configs(f16.kernel, gpu_preset()).empty());  // no MMA claimed
  EXPECT_THAT(step_error_message(f16.kernel, "mma_tile(warps=1,tm=1,tn=1)", gpu_preset()),
              HasSubstr("does not run mma m16n8k16 f16"));
  DeviceInfo no_bf16 = mma_preset();
  no_bf16.features[KILN_FEATURE_WORD(KILN_FEATURE_MMA_M16N8K16_BF16)] &= ~KILN_FEATURE_MASK(KILN_FEATURE_MMA_M16N8K16_BF16);
  EXPECT_FALSE(mma_tile().configs(f16.kernel, no_bf16).empty());
  EXPECT_TRUE(mma_tile().configs(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::BF16).kernel, no_bf16).empty());
  // Small matrices: no block larger than the matrix padded to 16 x 8 (here 32 x 8).
  const std::vector<std::string> small =
      config_texts(mma_tile(), standard("matmul", {.m = 20, .n = 8, .k = 8}, ir::DType::F16).kernel, mma_preset());
  EXPECT_EQ(small, (std::vector<std::string>{"mma_tile(warps=1,tm=1,tn=1)", "mma_tile(warps=1,tm=2,tn=1)",
                                             "mma_tile(warps=2,tm=1,tn=1)"}));
  EXPECT_TRUE(mma_tile().configs(standard("sum-rows", {.m = 64, .n = 64}, ir::DType::F16).kernel, mma_preset()).empty());
}

TEST(MmaTile, RefusesWhatDoesNotFit) {
  const kernels::StandardKernel k = standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16);
  EXPECT_THAT(step_error_message(k.kernel, "mma_tile(warps=4,tm=2,tn=2,bk=32)", mma_preset()),
              HasSubstr("unknown parameter 'bk'"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_tile(tm=2,tn=2)", mma_preset()), HasSubstr("missing parameter 'warps'"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_tile(warps=3,tm=2,tn=2)", mma_preset()), HasSubstr("warps must be 1, 2, 4 or 8"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_tile(warps=4,tm=2,tn=2,tf32=2)", mma_preset()), HasSubstr("tf32 must be 0 or 1"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 16, .n = 16, .k = 8}, ir::DType::I32).kernel,
                                 "mma_tile(warps=1,tm=1,tn=1)", mma_preset()),
              HasSubstr("A and B are i32"));
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 64, .n = 64}, ir::DType::F16).kernel, "mma_tile(warps=1,tm=1,tn=1)",
                                 mma_preset()),
              HasSubstr("not a matrix product"));
  // Once rewritten, the kernel has LOCAL threads and is not matched again.
  const ir::Kernel tiled = applied(k.kernel, "mma_tile(warps=4,tm=2,tn=2)", mma_preset());
  EXPECT_THAT(step_error_message(tiled, "mma_tile(warps=4,tm=2,tn=2)", mma_preset()), HasSubstr("already has LOCAL threads"));
}
