// row_cache: what one loop loads from a read-only buffer is kept in a
// REGISTER array that later loops of the same trip count read instead of
// memory; exact, composes with tiled_reduce, lane_reduce, unroll, vectorize.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& row_cache() { return *find_optimization("row_cache"); }

// How many LOADs of buffer param `slot` (printed "%<slot>[") the kernel has.
int loads_of(const ir::Kernel& kernel, int slot) {
  int n = 0;
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Load && kernel[op.src[0]].kind == ir::OpKind::Param && kernel[op.src[0]].attr == static_cast<std::uint32_t>(slot))
      ++n;
  return n;
}

constexpr std::string_view kTwoLoops = R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%n = const i64 8
%one = const i64 1
%g = index group 0 %one
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %v = load f32 %x[%j]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
%k = loop %n
  %w = load f32 %x[%k]
  %u = mul %w, %sum
  store %y[%k], %u
endloop
)";

}  // namespace

TEST(RowCache, TheSecondLoopReadsTheArray) {
  const ir::Kernel before = parse_valid(kTwoLoops);
  const ir::Kernel after = normalize(applied(before, "row_cache(loop=0)", cpu_preset()), cpu_preset());
  EXPECT_THAT(ir::print(after), HasSubstr("storage register f32[8]"));
  EXPECT_EQ(loads_of(after, 0), 1);  // x once, in the first loop
  EXPECT_EQ(compare_runs(before, after, {}, 0), "");  // exact
}

TEST(RowCache, RowKernelsReadTheirRowOnce) {
  // softmax: three loops, two of them reading the array; layernorm and
  // rmsnorm: two. Exact on the interpreter; f16 caches the f16 bits.
  for (std::string_view name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
      const kernels::StandardKernel k = standard(name, {.m = 3, .n = 37}, dtype);
      const ir::Kernel cached =
          normalize(applied(normalize(k.kernel, cpu_preset()), "row_cache(loop=0)", cpu_preset()), cpu_preset());
      EXPECT_EQ(loads_of(cached, 0), 1) << name << "\n" << ir::print(cached);
      EXPECT_EQ(compare_standard(k, cached, 7, 0), "") << name << " " << ir::dtype_name(dtype);
    }
}

int exps(const ir::Kernel& kernel) {
  int n = 0;
  // exp, or exp2 where the device has a native one (finalize's exp_base).
  for (const ir::Op& op : kernel.ops)
    n += op.kind == ir::OpKind::Unary && (op.unary() == ir::UnaryOp::Exp || op.unary() == ir::UnaryOp::Exp2);
  return n;
}

TEST(RowCache, SoftmaxComputesEachExpOnce) {
  // row_cache(loop=1): the writing loop reads the sum loop's exp(x - max);
  // then row_cache(loop=0): the sum loop reads the max loop's row.
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16}) {
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 29}, dtype);
    Result<ir::Kernel> out =
        optimize(k.kernel, parse_sequence("row_cache(loop=1); row_cache(loop=0)").value(), cpu_preset());
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_EQ(exps(*out), 1) << ir::print(*out);
    EXPECT_EQ(loads_of(*out, 0), 1) << ir::print(*out);
    EXPECT_EQ(compare_standard(k, *out, 19, 0), "") << ir::dtype_name(dtype);  // exact
  }
}

// computed=1: only values the loop computes are kept, no loaded one (a
// CPU's caches still hold a row it loaded): a 16-bit row's widened floats
// are, an f32 row (nothing converted) leaves nothing to keep.
TEST(RowCache, ComputedKeepsOnlyWhatTheLoopComputes) {
  EXPECT_THAT(step_error_message(parse_valid(kTwoLoops), "row_cache(loop=0,computed=1)", cpu_preset()),
              HasSubstr("computed=1 keeps no loaded value"));
  EXPECT_THAT(step_error_message(parse_valid(kTwoLoops), "row_cache(loop=0,computed=2)", cpu_preset()),
              HasSubstr("computed must be 0"));
  const kernels::StandardKernel f32 = standard("softmax-rows", {.m = 3, .n = 37}, ir::DType::F32);
  EXPECT_THAT(step_error_message(normalize(f32.kernel, cpu_preset()), "row_cache(loop=0,computed=1)", cpu_preset()),
              HasSubstr("computed=1 keeps no loaded value"));
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 37}, dtype);
    const ir::Kernel cached =
        normalize(applied(normalize(k.kernel, cpu_preset()), "row_cache(loop=0,computed=1)", cpu_preset()), cpu_preset());
    EXPECT_THAT(ir::print(cached), HasSubstr("storage register f32[37]"));  // the widened floats
    EXPECT_EQ(loads_of(cached, 0), 1) << ir::print(cached);
    EXPECT_EQ(compare_standard(k, cached, 7, 0), "");  // exact
  }
}

TEST(RowCache, ComposesWithTiledReduceUnrollAndVectorize) {
  // The GPU recipe: every loop split across the threads, each thread's
  // share cached, the loops unrolled (constant slots).
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view sequence;
    int loads;  // of x, after
  };
  const Case cases[] = {
      {"softmax-rows", {.m = 3, .n = 200},
       "tiled_reduce(loop=0,local=64,branch=4); tiled_reduce(loop=1,local=64,branch=4); "
       "tiled_reduce(loop=2,local=64,branch=4); row_cache(loop=0); unroll(loop=2,factor=0); "
       "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
       4},  // ceil(200 / 64) guarded loads per thread
      {"rmsnorm-rows", {.m = 2, .n = 130},
       "tiled_reduce(loop=0,local=32,branch=2); tiled_reduce(loop=1,local=32,branch=2); row_cache(loop=0); "
       "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
       5},
      {"layernorm-rows", {.m = 2, .n = 512},
       "tiled_reduce(loop=0,local=64,branch=2); tiled_reduce(loop=1,local=64,branch=2); row_cache(loop=0); "
       "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
       8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + ": " + std::string(c.sequence));
    const kernels::StandardKernel k = standard(c.kernel, c.size);
    Result<ir::Kernel> optimized = optimize(k.kernel, parse_sequence(c.sequence).value(), gpu_preset());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    EXPECT_EQ(loads_of(*optimized, 0), c.loads) << ir::print(*optimized);
    EXPECT_EQ(compare_standard(k, *optimized, 11, 4), "");  // the trees reassociate; the cache does not
  }
}

// The dtype of the REGISTER array of `elements` (row_cache's), or Invalid.
ir::DType register_array_dtype(const ir::Kernel& kernel, std::uint64_t elements) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Storage && op.scope() == ir::Scope::Register && op.imm == elements) return op.dtype;
  return ir::DType::Invalid;
}

TEST(RowCache, AGpuKeepsA16BitRowAsLoadedWhenItsFloatsWouldFillTheRegisters) {
  // Each of 1024 threads keeps ceil(16000 / 1024) = 16 elements: 64 bytes
  // as floats. Where that is at most half of a thread's share of the
  // register file (register_bytes, the share at max_local_threads: 1024 in
  // the preset) the floats are kept (no conversion where they are read
  // again); where it is more, the halves as loaded (32 bytes), widened
  // where read. Exact either way; an f32 row has nothing narrower to keep.
  const std::string sequence =
      "tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); row_cache(loop=0); "
      "unroll(loop=1,factor=0); unroll(loop=0,factor=0)";
  for (std::uint64_t register_bytes : {128u, 96u}) {
    DeviceInfo device = gpu_preset();
    device.register_bytes = register_bytes;
    for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16, ir::DType::F32}) {
      SCOPED_TRACE(std::to_string(register_bytes) + " bytes, " + std::string(ir::dtype_name(dtype)));
      const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 2, .n = 16000}, dtype);
      Result<ir::Kernel> out = optimize(k.kernel, parse_sequence(sequence).value(), device);
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      const bool bits = dtype != ir::DType::F32 && register_bytes < 128;
      EXPECT_EQ(register_array_dtype(*out, 16), bits ? dtype : ir::DType::F32) << ir::print(*out);
      EXPECT_EQ(loads_of(*out, 0), 16) << ir::print(*out);
      EXPECT_EQ(compare_standard(k, *out, 23, 4), "");
    }
  }
}

TEST(RowCache, ComposesWithLaneReduceOnTheCpu) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 2, .n = 64});
  const char* sequence =
      "split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
      "lane_reduce(loop=0,lanes=16); row_cache(loop=0); vectorize(lanes=16)";
  Result<ir::Kernel> optimized = optimize(k.kernel, parse_sequence(sequence).value(), cpu_preset());
  ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
  const std::string text = ir::print(*optimized);
  EXPECT_THAT(text, HasSubstr("= load f32x16 %0["));
  EXPECT_EQ(loads_of(*optimized, 0), 1) << text;
  EXPECT_EQ(compare_standard(k, *optimized, 13, 4), "");
}

TEST(RowCache, ConfigsAndRefusals) {
  const ir::Kernel k = parse_valid(kTwoLoops);
  EXPECT_THAT(config_texts(row_cache(), k, cpu_preset()), ::testing::ElementsAre("row_cache(loop=0)"));
  EXPECT_THAT(step_error_message(k, "row_cache(loop=1)", cpu_preset()), HasSubstr("no later LOOP"));
  EXPECT_THAT(step_error_message(k, "row_cache(loop=2)", cpu_preset()), HasSubstr("no LOOP number 2"));
  EXPECT_THAT(step_error_message(k, "row_cache(loop=0,size=4)", cpu_preset()), HasSubstr("size"));
  EXPECT_THAT(step_error_message(k, "row_cache()", cpu_preset()), HasSubstr("loop"));
  // A row too long for a GPU thread's registers.
  const kernels::StandardKernel wide = standard("softmax-rows", {.m = 2, .n = 4096});
  EXPECT_THAT(step_error_message(wide.kernel, "row_cache(loop=0)", gpu_preset()), HasSubstr("bytes of REGISTER storage per thread"));
  // A later loop reading other elements (x[j + 1]) is not rewritten.
  const ir::Kernel shifted = parse_valid(R"(
%x = param 0 global f32[9]
%y = param 1 global_mut f32[8]
%n = const i64 8
%one = const i64 1
%g = index group 0 %one
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %v = load f32 %x[%j]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
%k = loop %n
  %k1 = add %k, %one
  %w = load f32 %x[%k1]
  %u = mul %w, %sum
  store %y[%k], %u
endloop
)");
  EXPECT_THAT(step_error_message(shifted, "row_cache(loop=0)", cpu_preset()), HasSubstr("no later LOOP"));
  // A load under a condition the producer did not have stays a load.
  const ir::Kernel guarded = parse_valid(R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%n = const i64 8
%four = const i64 4
%one = const i64 1
%g = index group 0 %one
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %in = cmplt %j, %four
  if %in
    %v = load f32 %x[%j]
    %s = load f32 %acc[%at]
    %t = add %s, %v
    store %acc[%at], %t
  endif
endloop
%sum = load f32 %acc[%at]
%k = loop %n
  %w = load f32 %x[%k]
  %u = mul %w, %sum
  store %y[%k], %u
endloop
)");
  EXPECT_THAT(step_error_message(guarded, "row_cache(loop=0)", cpu_preset()), HasSubstr("no later LOOP"));
}

TEST(RowCache, LocalFormKeepsSoftmaxsExponentialsFromA16BitRow) {
  // local=1 on softmax's sum loop: the writing loop reads the f32
  // exponentials (its 16-bit loads and their conversions go), then
  // row_cache(loop=0,local=1) gives the sum loop the 16-bit row: two LOCAL
  // arrays, one exp per element, x read once; exact.
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16}) {
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 200}, dtype);
    Result<ir::Kernel> out = optimize(
        k.kernel,
        parse_sequence("tiled_reduce(loop=0,local=64,branch=4); tiled_reduce(loop=1,local=64,branch=4); "
                       "tiled_reduce(loop=2,local=64,branch=4); row_cache(loop=1,local=1); row_cache(loop=0,local=1)")
            .value(),
        gpu_preset());
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    const std::string text = ir::print(*out);
    EXPECT_THAT(text, HasSubstr("storage local f32[256]")) << text;
    EXPECT_THAT(text, HasSubstr("storage local " + std::string(ir::dtype_name(dtype)) + "[256]")) << text;
    EXPECT_EQ(exps(*out), 1) << text;
    EXPECT_EQ(loads_of(*out, 0), 1) << text;
    EXPECT_EQ(compare_standard(k, *out, 19, 4), "") << ir::dtype_name(dtype);
  }
}

TEST(RowCache, LocalFormKeepsEachThreadsShareInLocalMemory) {
  // local=1: the row in LOCAL storage (each thread its own slots, no
  // barrier), 16-bit rows kept 16-bit (widened again where they are read),
  // the loops left rolled; exact like the REGISTER form.
  struct Case {
    std::string_view kernel;
    ir::DType dtype;
    kernels::KernelSize size;
    std::string_view sequence;
    std::string_view storage;
  };
  const Case cases[] = {
      {"softmax-rows", ir::DType::F16, {.m = 3, .n = 200},
       "reciprocal_divide(); tiled_reduce(loop=0,local=64,branch=4); tiled_reduce(loop=1,local=64,branch=4); "
       "tiled_reduce(loop=2,local=64,branch=4); row_cache(loop=0,local=1)",
       "storage local f16[256]"},  // ceil(200 / 64) slots for each of the 64 threads
      {"rmsnorm-rows", ir::DType::F32, {.m = 2, .n = 130},
       "tiled_reduce(loop=0,local=32,branch=2); tiled_reduce(loop=1,local=32,branch=2); row_cache(loop=0,local=1); "
       "unroll(loop=1,factor=2)",
       "storage local f32[160]"},
      {"layernorm-rows", ir::DType::BF16, {.m = 2, .n = 512},
       "split_loop(loop=1,factor=4); unroll(loop=2,factor=0); split_loop(loop=0,factor=4); unroll(loop=1,factor=0); "
       "tiled_reduce(loop=0,local=32,branch=2); tiled_reduce(loop=1,local=32,branch=2); row_cache(loop=0,local=1); "
       "vectorize(lanes=4)",
       "storage local bf16[512]"},  // 4 blocks of 4 for each of the 32 threads
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + ": " + std::string(c.sequence));
    const kernels::StandardKernel k = standard(c.kernel, c.size, c.dtype);
    Result<ir::Kernel> optimized = optimize(k.kernel, parse_sequence(c.sequence).value(), gpu_preset());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    const std::string text = ir::print(*optimized);
    EXPECT_THAT(text, HasSubstr(c.storage)) << text;
    EXPECT_EQ(loads_of(*optimized, 0), 1) << text;  // x in the first loop only
    EXPECT_EQ(compare_standard(k, *optimized, 17, 4), "");
  }
  // Where the REGISTER form is refused (n = 4096 at 64 threads: 64 floats a
  // thread) the LOCAL one fits; refused without a LOCAL axis, beyond the
  // device's LOCAL memory, and for other values of local.
  const kernels::StandardKernel wide = standard("softmax-rows", {.m = 2, .n = 4096});
  const char* split = "tiled_reduce(loop=0,local=64,branch=4); tiled_reduce(loop=1,local=64,branch=4); "
                      "tiled_reduce(loop=2,local=64,branch=4); ";
  EXPECT_TRUE(optimize(wide.kernel, parse_sequence(std::string(split) + "row_cache(loop=0,local=1)").value(), gpu_preset()).ok());
  EXPECT_THAT(step_error_message(wide.kernel, "row_cache(loop=0,local=1)", gpu_preset()), HasSubstr("LOCAL axis"));
  const kernels::StandardKernel huge = standard("softmax-rows", {.m = 2, .n = 65536});
  Result<ir::Kernel> refused =
      optimize(huge.kernel, parse_sequence(std::string(split) + "row_cache(loop=0,local=1)").value(), gpu_preset());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().to_string(), HasSubstr("bytes of LOCAL storage per group"));
  const ir::Kernel k = parse_valid(kTwoLoops);
  EXPECT_THAT(step_error_message(k, "row_cache(loop=0,local=2)", cpu_preset()), HasSubstr("local must be"));
  EXPECT_THAT(step_error_message(k, "row_cache(loop=0,local=1)", cpu_preset()), HasSubstr("threads per group"));
}
