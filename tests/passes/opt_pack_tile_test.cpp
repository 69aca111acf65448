// pack_tile: the BLIS structure of a matrix product on one-thread groups (a
// bm x bn block of C per group in LOCAL storage, A and B packed per bk step,
// a tm x tn register tile of lanes-wide multiply-adds). Checked against the
// reference interpreter on random inputs at sizes no block divides (every
// guard and every edge: partial and wholly-outside micro-panels in m and n,
// a last k step past K), on the interpreter, the dummy device and c:0.
#include "passes/device_runner.hpp"
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/passes/bounds.hpp"
#include "kiln/passes/pipeline.hpp"

#include <gmock/gmock.h>

#include <memory>

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

const Optimization& pack_tile() { return *find_optimization("pack_tile"); }

// The dummy (as a CPU: one thread per group, 4- and 8-lane vectors) and c.
const Runtime* devices_runtime() {
  static const std::unique_ptr<Runtime> runtime = []() -> std::unique_ptr<Runtime> {
    Result<Config> config = parse_config(
        R"({"plugins": {"dummy": {"enabled": true, "options": {"simulate": [{"max_local_threads": 1, "vector_widths": [4, 8]}]}},
                        "c": {"enabled": true}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
                        "cuda": {"enabled": false}}})",
        "pack-tile-test-config.json");
    if (!config) return nullptr;
    Result<Runtime> made = Runtime::create(std::move(config).value());
    if (!made) return nullptr;
    return std::make_unique<Runtime>(std::move(made).value());
  }();
  return runtime.get();
}

const DeviceInfo* device_info(std::string_view plugin) {
  const Runtime* runtime = devices_runtime();
  if (runtime == nullptr) return nullptr;
  const PluginRecord* record = runtime->plugin(std::string(plugin));
  if (record == nullptr || record->status != PluginStatus::Loaded || record->devices.empty()) return nullptr;
  return &record->devices.front();
}

// 37 = 16 + 16 + 5 rows (with tm = 8 the last block has a partial and a
// wholly-outside micro-panel), 41 = 32 + 9 columns (tn = 16: the same), k
// 29 = 3 x 8 + 5 (the last step packs 3 zeros).
constexpr kernels::KernelSize kOdd{.m = 37, .n = 41, .k = 29};

}  // namespace

TEST(PackTile, PacksPanelsAndRunsTheRegisterTile) {
  const ir::Kernel before = parse_valid(kMatmul);
  const ir::Kernel after = normalize(applied(before, "pack_tile(bm=2,bn=4,bk=3,tm=2,tn=4,lanes=4)", cpu_preset()), cpu_preset());
  // Two groups of 2 x 4 (the n axis has one group and goes); LOCAL storage:
  // A's block (2 x 3), B's (3 x 4), the C block (2 x 4); REGISTER: the 2 x 4
  // tile. The block is zeroed, A and B packed (one k step), the tile loaded,
  // k steps of a 4-lane B load, two broadcasts of A and two vector
  // multiply-adds, the tile stored back, then the block to C.
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%0 = param 0 global f32[12]
%1 = param 1 global f32[12]
%2 = param 2 global_mut f32[16]
%3 = const f32 0
%4 = const i64 0
%5 = const i64 2
%6 = const i64 3
%7 = const i64 4
%8 = index group 1 %5
%9 = storage local f32[6]
%10 = storage local f32[12]
%11 = storage local f32[8]
%12 = storage register f32[8]
%13 = mul i64 %8, %5
%14 = broadcast f32x4 %3
%15 = loop %5
  %16 = mul i64 %15, %7
  store f32x4 %11[%16], %14
endloop %15
%19 = loop %5
  %20 = add i64 %13, %19
  %21 = mul i64 %19, %6
  %22 = mul i64 %20, %6
  %23 = loop %6
    %24 = add i64 %22, %23
    %25 = load f32 %0[%24]
    %26 = add i64 %21, %23
    store f32 %9[%26], %25
  endloop %23
endloop %19
%30 = loop %6
  %31 = mul i64 %30, %7
  %32 = loop %7
    %33 = add i64 %31, %32
    %34 = load f32 %1[%33]
    store f32 %10[%33], %34
  endloop %32
endloop %30
%38 = load f32x4 %11[%4]
store f32x4 %12[%4], %38
%40 = load f32x4 %11[%7]
store f32x4 %12[%7], %40
%42 = loop %6
  %43 = mul i64 %42, %7
  %44 = load f32x4 %10[%43]
  %45 = load f32 %9[%42]
  %46 = broadcast f32x4 %45
  %47 = load f32x4 %12[%4]
  %48 = mad f32x4 %44, %46, %47
  store f32x4 %12[%4], %48
  %50 = add i64 %42, %6
  %51 = load f32 %9[%50]
  %52 = broadcast f32x4 %51
  %53 = load f32x4 %12[%7]
  %54 = mad f32x4 %44, %52, %53
  store f32x4 %12[%7], %54
endloop %42
%57 = load f32x4 %12[%4]
store f32x4 %11[%4], %57
%59 = load f32x4 %12[%7]
store f32x4 %11[%7], %59
%61 = loop %5
  %62 = add i64 %13, %61
  %63 = mul i64 %62, %7
  %64 = mul i64 %61, %7
  %65 = loop %7
    %66 = add i64 %64, %65
    %67 = load f32 %11[%66]
    %68 = add i64 %63, %65
    store f32 %2[%68], %67
  endloop %65
endloop %61
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

// The same multiply-adds in the same order from 0: the interpreter gives the
// untuned kernel's result bit for bit, whatever the blocks, guards and dtypes.
TEST(PackTile, GivesTheUntunedResultExactlyAtOddSizes) {
  const DeviceInfo device = cpu_preset();
  for (const char* step : {"pack_tile(bm=16,bn=32,bk=8,tm=8,tn=16,lanes=4,unroll=2)",   // every edge
                           "pack_tile(bm=40,bn=48,bk=29,tm=4,tn=8,lanes=8,unroll=1)",   // one block wider than the matrix
                           "pack_tile(bm=8,bn=8,bk=32,tm=2,tn=8,lanes=2,unroll=4)",     // k step past K, many groups
                           "pack_tile(bm=6,bn=4,bk=5,tm=3,tn=2,lanes=1,unroll=5)"}) {  // scalar
    for (const auto& [name, dtype] : {std::pair{"matmul", ir::DType::F32}, std::pair{"matmul-bt", ir::DType::F32},
                                      std::pair{"matmul", ir::DType::F16}, std::pair{"matmul", ir::DType::BF16}}) {
      const kernels::StandardKernel k = standard(name, kOdd, dtype);
      const ir::Kernel after = applied(normalize(k.kernel, device), step, device);
      EXPECT_EQ(compare_standard(k, after, 7, 0), "") << step << " on " << name << " " << ir::dtype_name(dtype);
      // Every access proved in range: the bounds policy adds no guard (the kernel runs as measured).
      for (const AccessBounds& a : classify_accesses(after))
        EXPECT_EQ(a.verdict, AccessVerdict::InRange) << step << ": " << describe_access(after, a);
    }
  }
  // Exact multiples: no guard at all.
  const kernels::StandardKernel k = standard("matmul", {.m = 32, .n = 64, .k = 16});
  const ir::Kernel after = applied(normalize(k.kernel, device), "pack_tile(bm=16,bn=32,bk=8,tm=8,tn=16,lanes=16)", device);
  EXPECT_EQ(ir::print(after).find("min i64"), std::string::npos) << ir::print(after);
  EXPECT_EQ(compare_standard(k, after, 3, 0), "");
}

// On real devices, against the interpreter: the dummy (the interpreter
// behind the ABI: exact) and c:0 (gcc contracts the multiply-adds to FMA:
// the kernel's tolerance).
TEST(PackTile, MatchesTheInterpreterOnTheDummyAndC) {
  for (const char* plugin : {"dummy", "c"}) {
    const DeviceInfo* info = device_info(plugin);
    if (info == nullptr) {
      if (std::string_view(plugin) == "dummy") FAIL() << "the dummy device is not there (it is built with the tests)";
      GTEST_SKIP() << "c:0 is not there (the C plugin is not built or has no compiler)";
    }
    const Device device = devices_runtime()->device(info->id).value();
    const std::int64_t lanes = info->vector_widths().back();
    const std::string step = "pack_tile(bm=16,bn=32,bk=8,tm=8,tn=16,lanes=" + std::to_string(lanes) + ",unroll=2)";
    // Two compiles on c:0 (a second each): f32, and f16 with B transposed (conversions, strided packing).
    for (const auto& [name, dtype] : {std::pair{"matmul", ir::DType::F32}, std::pair{"matmul-bt", ir::DType::F16}}) {
      const kernels::StandardKernel k = standard(name, kOdd, dtype);
      Result<ir::Kernel> lowered = optimize(k.kernel, {OptStep::parse(step).value()}, *info);
      ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
      const double tolerance = std::string_view(plugin) == "dummy" ? 0 : k.tolerance;
      EXPECT_EQ(compare_outcomes(run_on_interpreter(k.kernel, k.args, 11), run_on_device(device, *lowered, k.args, 11), tolerance),
                "")
          << step << " on " << info->id << ", " << name << " " << ir::dtype_name(dtype);
    }
  }
}

TEST(PackTile, RefusesWhatDoesNotFit) {
  const DeviceInfo device = cpu_preset();
  const ir::Kernel matmul = parse_valid(kMatmul);
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=4,lanes=4,mc=2)", device),
              HasSubstr("unknown parameter 'mc'"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=4)", device), HasSubstr("lanes"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=2,lanes=4)", device),
              HasSubstr("lanes=4 does not divide tn=2"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=3,tn=4,lanes=4)", device),
              HasSubstr("tm=3 does not divide bm=4"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=4,lanes=4,unroll=2)", device),
              HasSubstr("unroll=2 does not divide bk=3"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=4,lanes=32)", device), HasSubstr("lanes must be"));
  EXPECT_THAT(step_error_message(matmul, "pack_tile(bm=1024,bn=1024,bk=512,tm=8,tn=32,lanes=16)", device),
              HasSubstr("LOCAL bytes per group"));
  // Not a matrix product.
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 4, .n = 8}).kernel, "pack_tile(bm=4,bn=4,bk=3,tm=2,tn=4,lanes=4)",
                                 device),
              HasSubstr("not a matrix product"));
}

// Configs only where a group is one thread; every one applies, and the
// interpreter agrees with the first few at a size with every edge.
TEST(PackTile, ConfigsOnOneThreadGroupsApply) {
  EXPECT_TRUE(pack_tile().configs(normalize(standard("matmul", {.m = 256, .n = 256, .k = 256}).kernel, gpu_preset()),
                                  gpu_preset())
                  .empty());
  const DeviceInfo device = cpu_preset();
  const ir::Kernel big = normalize(standard("matmul", {.m = 1024, .n = 1024, .k = 1024}).kernel, device);
  const std::vector<OptStep> configs = pack_tile().configs(big, device);
  ASSERT_GE(configs.size(), 8u);
  EXPECT_LE(configs.size(), 200u);
  for (const OptStep& step : configs) {
    EXPECT_EQ(step.param("lanes"), 16) << step.to_string();
    EXPECT_TRUE(pack_tile().apply(big, step, device).ok()) << step.to_string();
  }
  const kernels::StandardKernel odd = standard("matmul", {.m = 70, .n = 90, .k = 50});
  const ir::Kernel small = normalize(odd.kernel, device);
  const std::vector<OptStep> small_configs = pack_tile().configs(small, device);
  ASSERT_FALSE(small_configs.empty());
  for (std::size_t i = 0; i < small_configs.size() && i < 3; ++i)
    EXPECT_EQ(compare_standard(odd, applied(small, small_configs[i].to_string(), device), 5, 0), "") << small_configs[i].to_string();
}
