// pack_tile's bf16 form (dot=1): k pairs packed in u32 words and a register
// tile of dot_bf16 (x86's VDPBF16PS). The ops themselves: the text form, the
// verifier's rules, and c:0 against the interpreter bit for bit on random
// bf16 inputs, subnormals included (skipped, saying so, where c:0 does not
// claim dot_bf16: no AVX512_BF16 in the CPU or the compiler's target). The
// optimization: on the interpreter within the product's tolerance of the
// untuned kernel at sizes no block divides (odd K too), every access proved
// in range; on c:0 bit for bit with the interpreter running the packed kernel
// (37 x 41 x 29) and within tolerance of the untuned kernel at 1000 x 999 x 1001;
// configs and recipes only for bf16 inputs on a device that claims the ops.
#include "passes/device_runner.hpp"
#include "passes/mma_support.hpp"
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/passes/bounds.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"

#include <gmock/gmock.h>

#include <cstring>
#include <memory>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& pack_tile() { return *find_optimization("pack_tile"); }

// The CPU preset, claiming the bf16 ops as c:0 does on an AVX512_BF16 CPU.
DeviceInfo dot_preset() {
  DeviceInfo d = cpu_preset();
  d.op_kind_dtypes[KILN_OP_DOT_BF16] |= KILN_DTYPE_BIT(KILN_DTYPE_F32);
  d.op_kind_dtypes[KILN_OP_BF16_PAIR] |= KILN_DTYPE_BIT(KILN_DTYPE_U32);
  return d;
}

const Runtime* c_runtime() {
  static const std::unique_ptr<Runtime> runtime = []() -> std::unique_ptr<Runtime> {
    Result<Config> config = parse_config(
        R"({"plugins": {"c": {"enabled": true}, "dummy": {"enabled": false}, "opencl": {"enabled": false},
                        "vulkan": {"enabled": false}, "cuda": {"enabled": false}, "cblas": {"enabled": false}}})",
        "pack-tile-bf16-test-config.json");
    if (!config) return nullptr;
    Result<Runtime> made = Runtime::create(std::move(config).value());
    if (!made) return nullptr;
    return std::make_unique<Runtime>(std::move(made).value());
  }();
  return runtime.get();
}

// c:0 when it runs dot_bf16, else why not (the test skips with it).
std::variant<Device, std::string> c_device_with_dot() {
  const Runtime* runtime = c_runtime();
  if (runtime == nullptr) return std::string("the runtime did not start");
  const PluginRecord* record = runtime->plugin("c");
  if (record == nullptr || record->status != PluginStatus::Loaded || record->devices.empty())
    return std::string("c:0 is not there (the C plugin is not built or has no compiler)");
  const DeviceInfo& info = record->devices.front();
  if (!info.supports_op_kind(KILN_OP_DOT_BF16, KILN_DTYPE_F32))
    return std::string(info.has_feature(KILN_FEATURE_CPU_AVX512_BF16)
                           ? "c:0 does not claim dot_bf16: the compiler does not target AVX512_BF16"
                           : "c:0 does not claim dot_bf16: this CPU has no AVX512_BF16");
  return runtime->device(info.id).value();
}

// "" when every output has the same bytes.
std::string same_bits(const RunOutcome& want, const RunOutcome& got) {
  if (!want.error.empty()) return "the interpreter fails: " + want.error;
  if (!got.error.empty()) return "the device fails: " + got.error;
  for (std::size_t i = 0; i < want.outputs.size(); ++i) {
    const auto w = want.outputs[i].data(), g = got.outputs[i].data();
    if (w.size() != g.size()) return "output " + std::to_string(i) + " has another size";
    for (std::size_t at = 0; at + 4 <= w.size(); at += 4)
      if (std::memcmp(w.data() + at, g.data() + at, 4) != 0) {
        std::uint32_t a = 0, b = 0;
        std::memcpy(&a, w.data() + at, 4);
        std::memcpy(&b, g.data() + at, 4);
        char text[96];
        std::snprintf(text, sizeof text, "output %zu element %zu: interpreter %08x, device %08x", i, at / 4, a, b);
        return text;
      }
  }
  return "";
}

// out = dot_bf16(acc * s_acc, pair(a0, a1) * s_a, pair(b0, b1) * s_b) on
// 16-lane vectors, the scales putting the inputs near and below the
// smallest normal (bf16 and f32 keep subnormals: the products of the scaled
// values, and the accumulators, then exercise DAZ and FTZ).
std::string dot_kernel_text(const char* s_acc, const char* s_a, const char* s_b) {
  return std::string(R"(
%acc = param 0 global f32[4096]
%a0 = param 1 global bf16[4096]
%a1 = param 2 global bf16[4096]
%b0 = param 3 global bf16[4096]
%b1 = param 4 global bf16[4096]
%out = param 5 global_mut f32[4096]
%n = const i64 256
%g = index group 0 %n
%sixteen = const i64 16
%at = mul i64 %g, %sixteen
%sacc = const f32 )") + s_acc + R"(
%sa = const bf16 )" + s_a + R"(
%sb = const bf16 )" + s_b + R"(
%vsacc = broadcast f32x16 %sacc
%vsa = broadcast bf16x16 %sa
%vsb = broadcast bf16x16 %sb
%x = load f32x16 %acc[%at]
%xs = mul f32x16 %x, %vsacc
%p = load bf16x16 %a0[%at]
%ps = mul bf16x16 %p, %vsa
%q = load bf16x16 %a1[%at]
%qs = mul bf16x16 %q, %vsa
%r = load bf16x16 %b0[%at]
%rs = mul bf16x16 %r, %vsb
%t = load bf16x16 %b1[%at]
%ts = mul bf16x16 %t, %vsb
%wa = bf16_pair u32x16 %ps, %qs
%wb = bf16_pair u32x16 %rs, %ts
%d = dot_bf16 f32x16 %xs, %wa, %wb
store f32x16 %out[%at], %d
)";
}

// 37 = 16 + 16 + 5 rows, 41 = 32 + 9 columns, k 29 (odd: the last pair is half padding).
constexpr kernels::KernelSize kOdd{.m = 37, .n = 41, .k = 29};

}  // namespace

TEST(DotBf16, TextRoundTripsAndTheVerifierChecksTypes) {
  const std::string text = dot_kernel_text("1", "1", "1");
  const ir::Kernel k = parse_valid(text);
  const std::string printed = ir::print(k);
  EXPECT_THAT(printed, HasSubstr("bf16_pair u32x16 %"));
  EXPECT_THAT(printed, HasSubstr("dot_bf16 f32x16 %"));
  EXPECT_EQ(ir::print(parse_valid(printed)), printed);
  // A bf16 word of f32 values, a dot of bf16 vectors: the verifier's rules.
  std::string bad_pair = text;
  bad_pair.replace(bad_pair.find("bf16_pair u32x16 %ps, %qs"), 25, "bf16_pair u32x16 %xs, %qs");
  Result<ir::Kernel> parsed = ir::parse(bad_pair);
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  EXPECT_THAT(ir::verify(*parsed).error().message, HasSubstr("bf16_pair u32x16 takes two bf16x16 values"));
  std::string bad_dot = text;
  bad_dot.replace(bad_dot.find("dot_bf16 f32x16 %xs, %wa, %wb"), 29, "dot_bf16 f32x16 %xs, %wa, %ps");
  parsed = ir::parse(bad_dot);
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  EXPECT_THAT(ir::verify(*parsed).error().message, HasSubstr("b must be u32x16 (bf16_pair words)"));
}

// VDPBF16PS against the interpreter: the same bits, lane by lane, on random
// inputs at four scales (ordinary; bf16 inputs around the smallest normal,
// whose products matter to the sums; products below f32's normal range;
// everything tiny: subnormal accumulators and flushed results).
TEST(DotBf16, CRunsItAsTheInterpreterBitForBit) {
  auto device = c_device_with_dot();
  if (auto* why = std::get_if<std::string>(&device)) GTEST_SKIP() << *why;
  for (const auto& [s_acc, s_a, s_b] : {std::tuple{"1", "1", "1"}, std::tuple{"1e-37", "1e-38", "1"},
                                        std::tuple{"1e-36", "1e-20", "1e-19"}, std::tuple{"1e-39", "1e-22", "1e-20"}}) {
    const ir::Kernel k = parse_valid(dot_kernel_text(s_acc, s_a, s_b));
    const std::vector<kernels::ArgSpec> args = kernels::args_of(k).value();
    for (std::uint64_t seed : {3u, 4u})
      EXPECT_EQ(same_bits(run_on_interpreter(k, args, seed), run_on_device(std::get<Device>(device), k, args, seed)), "")
          << "scales acc " << s_acc << ", a " << s_a << ", b " << s_b << ", seed " << seed;
  }
}

TEST(PackTileBf16, MatchesTheUntunedKernelOnTheInterpreterAtOddSizes) {
  const DeviceInfo device = dot_preset();
  for (const char* step : {"pack_tile(bm=16,bn=32,bk=8,tm=8,tn=16,lanes=4,unroll=2,dot=1)",    // every edge, odd K
                           "pack_tile(bm=40,bn=48,bk=30,tm=4,tn=8,lanes=8,unroll=1,dot=1)",    // one block past the matrix
                           "pack_tile(bm=8,bn=8,bk=32,tm=2,tn=8,lanes=2,unroll=4,dot=1)",      // k step past K
                           "pack_tile(bm=6,bn=4,bk=10,tm=3,tn=2,lanes=1,unroll=5,dot=1)"}) {  // scalar
    for (const char* name : {"matmul", "matmul-bt"}) {
      const kernels::StandardKernel k = standard(name, kOdd, ir::DType::BF16);
      const ir::Kernel after = applied(normalize(k.kernel, device), step, device);
      EXPECT_THAT(ir::print(after), HasSubstr("dot_bf16")) << step;
      EXPECT_EQ(compare_standard(k, after, 7), "") << step << " on " << name;
      for (const AccessBounds& a : classify_accesses(after))
        EXPECT_EQ(a.verdict, AccessVerdict::InRange) << step << ": " << describe_access(after, a);
    }
  }
}

TEST(PackTileBf16, MatchesTheInterpreterOnC) {
  auto device = c_device_with_dot();
  if (auto* why = std::get_if<std::string>(&device)) GTEST_SKIP() << *why;
  const Device& c = std::get<Device>(device);
  const DeviceInfo& info = c.info();
  // Bit for bit: the packed kernel on c:0 and on the interpreter.
  {
    const kernels::StandardKernel k = standard("matmul", kOdd, ir::DType::BF16);
    Result<ir::Kernel> lowered =
        optimize(k.kernel, {OptStep::parse("pack_tile(bm=16,bn=32,bk=8,tm=8,tn=16,lanes=16,unroll=2,dot=1)").value()}, info);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_EQ(same_bits(run_on_interpreter(*lowered, k.args, 11), run_on_device(c, *lowered, k.args, 11)), "");
    EXPECT_EQ(compare_outcomes(run_on_interpreter(k.kernel, k.args, 11), run_on_device(c, *lowered, k.args, 11), k.tolerance), "");
  }
  // 1000 x 999 x 1001 (every edge of the default recipe's blocks, odd K):
  // within tolerance of the untuned kernel, both on c:0 (the interpreter
  // would take minutes at this size).
  {
    const kernels::StandardKernel k = standard("matmul", {.m = 1000, .n = 999, .k = 1001}, ir::DType::BF16);
    Result<ir::Kernel> lowered =
        optimize(k.kernel, {OptStep::parse("pack_tile(bm=256,bn=512,bk=256,tm=8,tn=32,lanes=16,unroll=4,dot=1)").value()}, info);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_EQ(compare_outcomes(run_on_device(c, k.kernel, k.args, 5), run_on_device(c, *lowered, k.args, 5), k.tolerance), "");
  }
}

// The dummy with its dot_bf16 option (the interpreter behind the ABI) runs
// the packed kernel exactly as the interpreter does, on any CPU.
TEST(PackTileBf16, RunsOnTheDummyWithItsOption) {
  const DeviceInfo* found = dot_bf16_device_info();
  ASSERT_TRUE(found != nullptr) << "the dummy device is not there (it is built with the tests)";
  const DeviceInfo& info = *found;
  ASSERT_TRUE(info.supports_op_kind(KILN_OP_DOT_BF16, KILN_DTYPE_F32));
  ASSERT_TRUE(info.has_feature(KILN_FEATURE_CPU_AVX512_BF16));
  const Device device = mma_runtime()->device(info.id).value();
  const kernels::StandardKernel k = standard("matmul-bt", kOdd, ir::DType::BF16);
  Result<ir::Kernel> lowered =
      optimize(k.kernel, {OptStep::parse("pack_tile(bm=16,bn=16,bk=8,tm=8,tn=8,lanes=8,unroll=2,dot=1)").value()}, info);
  ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
  EXPECT_THAT(ir::print(*lowered), HasSubstr("dot_bf16 f32x8"));
  EXPECT_EQ(same_bits(run_on_interpreter(*lowered, k.args, 13), run_on_device(device, *lowered, k.args, 13)), "");
}

TEST(PackTileBf16, ConfigsAndRecipesOnlyForBf16OnADeviceWithTheOps) {
  const DeviceInfo with = dot_preset(), without = cpu_preset();
  const ir::Kernel bf16 = normalize(standard("matmul", {.m = 1024, .n = 1024, .k = 1024}, ir::DType::BF16).kernel, with);
  const ir::Kernel f32 = normalize(standard("matmul", {.m = 1024, .n = 1024, .k = 1024}).kernel, with);
  const std::vector<OptStep> configs = pack_tile().configs(bf16, with);
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front().param("dot"), 1) << configs.front().to_string();  // the heuristic schedule's choice
  for (const OptStep& step : configs) {
    if (step.param("dot") == 1) {
      EXPECT_TRUE(pack_tile().apply(bf16, step, with).ok()) << step.to_string();
    }
  }
  for (const OptStep& step : pack_tile().configs(f32, with)) EXPECT_EQ(step.param("dot"), 0) << step.to_string();
  for (const OptStep& step : pack_tile().configs(bf16, without)) EXPECT_EQ(step.param("dot"), 0) << step.to_string();
  // Refusals.
  EXPECT_THAT(step_error_message(f32, "pack_tile(bm=256,bn=512,bk=256,tm=8,tn=32,lanes=16,unroll=4,dot=1)", with),
              HasSubstr("dot=1 takes bf16 inputs"));
  EXPECT_THAT(step_error_message(bf16, "pack_tile(bm=256,bn=512,bk=256,tm=8,tn=32,lanes=16,unroll=4,dot=1)", without),
              HasSubstr("dot=1 needs a device that runs dot_bf16"));
  EXPECT_THAT(step_error_message(bf16, "pack_tile(bm=256,bn=512,bk=255,tm=8,tn=32,lanes=16,unroll=1,dot=1)", with),
              HasSubstr("must be even"));
  EXPECT_THAT(step_error_message(bf16, "pack_tile(bm=256,bn=512,bk=256,tm=8,tn=32,lanes=16,unroll=4,dot=2)", with),
              HasSubstr("dot must be 0 or 1"));
  // The default space's bf16 recipes lower a bf16 matmul to dot_bf16 on such a device only.
  const tune::SearchSpace& space = tune::default_search_space();
  const kernels::StandardKernel small = standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::BF16);
  int found = 0;
  for (const OptSequence& recipe : space.recipes) {
    const std::string text = to_string(recipe);
    if (text.find("dot=1") == std::string::npos) continue;
    ++found;
    Result<ir::Kernel> lowered = space.lower(small.kernel, recipe, with);
    ASSERT_TRUE(lowered.ok()) << text << ": " << lowered.error().to_string();
    EXPECT_THAT(ir::print(*lowered), HasSubstr("dot_bf16")) << text;
    EXPECT_FALSE(space.lower(small.kernel, recipe, without).ok()) << text;
  }
  EXPECT_GE(found, 2);
}
