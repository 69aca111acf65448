// tiled_reduce: a reduction (or parallel) loop split across the threads of
// a work-group, partials combined by a tree through LOCAL storage.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& tiled_reduce() { return *find_optimization("tiled_reduce"); }

// y[r] = sum of row r of x[2, 6], as the standard sum-rows writes it.
constexpr std::string_view kSumRows = R"(
%x = param 0 global f32[12]
%y = param 1 global_mut f32[2]
%rows = const i64 2
%n = const i64 6
%r = index group 0 %rows
%start = mul %r, %n
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %xi = add %start, %j
  %v = load f32 %x[%xi]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
store %y[%r], %sum
)";

}  // namespace

TEST(TiledReduce, SplitsTheRowAcrossThreadsAndCombinesByTree) {
  const ir::Kernel before = parse_valid(kSumRows);
  const ir::Kernel after = applied(before, "tiled_reduce(loop=0,local=4,branch=2)", gpu_preset());
  EXPECT_EQ(ir::print(after), ir::print(parse_valid(R"(
%x = param 0 global f32[12]
%y = param 1 global_mut f32[2]
%four = const i64 4
%tid = index local 0 %four
%zero_i = const i64 0
%first = eq %tid, %zero_i
%partial = storage register f32[1]
%shared = storage local f32[4]
%rows = const i64 2
%n = const i64 6
%r = index group 0 %rows
%start = mul %r, %n
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
# each thread from -0 (the identity of add), every 4th element from its own
%at2 = const i64 0
%minus0 = const f32 -0
store %partial[%at2], %minus0
%four2 = const i64 4
%two = const i64 2
%step = loop %two
  %base = mul %step, %four2
  %j = add %base, %tid
  %in = cmplt %j, %n
  if %in
    %xi = add %start, %j
    %v = load f32 %x[%xi]
    %s = load f32 %partial[%at2]
    %t = add %s, %v
    store %partial[%at2], %t
  endif
endloop
# partials to LOCAL storage; the tree: 4 -> 2 -> 1
%p = load f32 %partial[%at2]
store %shared[%tid], %p
barrier
%two2 = const i64 2
%lower2 = cmplt %tid, %two2
if %lower2
  %a1 = load f32 %shared[%tid]
  store %partial[%at2], %a1
  %two3 = const i64 2
  %o1 = add %tid, %two3
  %m1 = load f32 %partial[%at2]
  %b1 = load f32 %shared[%o1]
  %c1 = add %m1, %b1
  store %partial[%at2], %c1
  %d1 = load f32 %partial[%at2]
  store %shared[%tid], %d1
endif
barrier
%one = const i64 1
%lower1 = cmplt %tid, %one
if %lower1
  %a2 = load f32 %shared[%tid]
  store %partial[%at2], %a2
  %one2 = const i64 1
  %o2 = add %tid, %one2
  %m2 = load f32 %partial[%at2]
  %b2 = load f32 %shared[%o2]
  %c2 = add %m2, %b2
  store %partial[%at2], %c2
  %d2 = load f32 %partial[%at2]
  store %shared[%tid], %d2
endif
barrier
# every thread adds the total to its accumulator; thread 0 stores
%total = load f32 %shared[%at2]
%old = load f32 %acc[%at]
%new = add %old, %total
store %acc[%at], %new
%sum = load f32 %acc[%at]
if %first
  store %y[%r], %sum
endif
)")));
  EXPECT_EQ(compare_runs(before, after, {}, 1e-6), "");  // sums reassociated
}

TEST(TiledReduce, RowKernelsKeepTheirResults) {
  // Reductions at sizes the thread count does not divide, every tree
  // branching, and the loops of softmax and layernorm one after the other
  // on one LOCAL axis.
  struct Case {
    std::string_view kernel;
    std::vector<std::string_view> steps;
  };
  const Case cases[] = {
      {"sum-rows", {"tiled_reduce(loop=0,local=32,branch=2)"}},
      {"sum-rows", {"tiled_reduce(loop=0,local=64,branch=8)"}},
      {"max-rows", {"tiled_reduce(loop=0,local=128,branch=4)"}},
      {"max-rows", {"tiled_reduce(loop=0,local=24,branch=3)"}},  // not powers of two: guarded tree
      {"softmax-rows",
       {"tiled_reduce(loop=0,local=32,branch=2)", "tiled_reduce(loop=1,local=32,branch=4)",
        "tiled_reduce(loop=2,local=32,branch=2)"}},
      {"softmax-rows", {"tiled_reduce(loop=1,local=64,branch=2)"}},
      {"layernorm-rows", {"tiled_reduce(loop=0,local=64,branch=2)", "tiled_reduce(loop=1,local=64,branch=2)"}},
      {"rmsnorm-rows", {"tiled_reduce(loop=0,local=32,branch=4)", "tiled_reduce(loop=1,local=32,branch=2)"}},
      {"matmul", {"tiled_reduce(loop=0,local=16,branch=2)"}},
  };
  for (const Case& c : cases)
    for (const kernels::KernelSize size : {kernels::KernelSize{.m = 3, .n = 100, .k = 37}, kernels::KernelSize{.m = 2, .n = 7, .k = 5}}) {
      const kernels::StandardKernel k = standard(c.kernel, size);
      ir::Kernel current = k.kernel;
      std::string trace(c.kernel);
      for (std::string_view step : c.steps) {
        trace += " " + std::string(step);
        current = applied(current, step, gpu_preset());
      }
      EXPECT_EQ(compare_standard(k, current, 29, 4), "") << trace << " n=" << size.n;
    }
  for (ir::DType dtype : {ir::DType::I32, ir::DType::F16, ir::DType::F64, ir::DType::BF16}) {
    const kernels::StandardKernel k = standard("max-rows", {.m = 5, .n = 33}, dtype);
    EXPECT_EQ(compare_standard(k, applied(k.kernel, "tiled_reduce(loop=0,local=16,branch=2)", small_preset()), 1), "")
        << ir::dtype_name(dtype);
    const kernels::StandardKernel s = standard("sum-rows", {.m = 5, .n = 33}, dtype);
    EXPECT_EQ(compare_standard(s, applied(s.kernel, "tiled_reduce(loop=0,local=8,branch=4)", small_preset()), 2), "")
        << ir::dtype_name(dtype);
  }
}

// A writing loop split into blocks (split_loop + unroll: 4 stores at 4 * i + 0..3)
// is split across threads block by block, so each thread's stores stay
// consecutive and vectorize; blocks that could overlap are refused.
TEST(TiledReduce, SplitsAWritingLoopBlockByBlock) {
  constexpr std::string_view kBlocks = R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[16]
%n = const i64 4
%four = const i64 4
%one = const i64 1
%two = const i64 2
%three = const i64 3
%g = index group 0 %one
%j = loop %n
  %b = mul %j, %four
  %v0 = load f32 %x[%b]
  store %y[%b], %v0
  %b1 = add %b, %one
  %v1 = load f32 %x[%b1]
  store %y[%b1], %v1
  %b2 = add %b, %two
  %v2 = load f32 %x[%b2]
  store %y[%b2], %v2
  %b3 = add %b, %three
  %v3 = load f32 %x[%b3]
  store %y[%b3], %v3
endloop
)";
  const ir::Kernel before = parse_valid(kBlocks);
  const ir::Kernel split = applied(before, "tiled_reduce(loop=0,local=2)", gpu_preset());
  EXPECT_EQ(compare_runs(before, split), "");
  // Each thread's four stores stay consecutive: vectorize groups them.
  const ir::Kernel vectorized = applied(split, "vectorize(lanes=4)", gpu_preset());
  EXPECT_NE(ir::print(vectorized).find("store f32x4"), std::string::npos) << ir::print(vectorized);
  EXPECT_EQ(compare_runs(before, vectorized), "");
  // A block of 4 stores per step of 2: iteration i + 1 overwrites half of i's.
  std::string overlapping(kBlocks);
  overlapping.replace(overlapping.find("%b = mul %j, %four"), 18, "%b = mul %j, %two");
  EXPECT_THAT(step_error_message(parse_valid(overlapping), "tiled_reduce(loop=0,local=2)", gpu_preset()),
              HasSubstr("two iterations may store to one element"));
}

TEST(TiledReduce, HandlesDynamicTripCounts) {
  const ir::Kernel dynamic = parse_valid(R"(
%x = param 0 global f32[?]
%y = param 1 global_mut f32[?]
%rows = param 2 var i64
%n = param 3 var i64
%r = index group 0 %rows
%start = mul %r, %n
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %xi = add %start, %j
  %v = load f32 %x[%xi]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
store %y[%r], %sum
)");
  const std::vector<std::string> configs = config_texts(tiled_reduce(), dynamic, gpu_preset());
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "tiled_reduce(loop=0,local=1024,branch=2)");
  const ir::Kernel after = applied(dynamic, "tiled_reduce(loop=0,local=32,branch=2)", gpu_preset());
  const double sizes[][2] = {{3, 100}, {2, 32}, {1, 1}, {4, 0}};
  for (const auto& size : sizes) {
    const std::vector<double> scalars = {size[0], size[1]};
    // Buffers of the size the scalars make (args_of needs element counts).
    kernels::ArgSpec x{"x", kernels::ArgRole::Input, ir::DType::F32, static_cast<std::uint64_t>(std::max(1.0, size[0] * size[1]))};
    kernels::ArgSpec y{"y", kernels::ArgRole::Output, ir::DType::F32, static_cast<std::uint64_t>(size[0])};
    std::vector<kernels::ArgSpec> args = {x, y};
    for (double v : scalars)
      args.push_back({"v", kernels::ArgRole::Scalar, ir::DType::I64, 1, ir::encode_int(ir::DType::I64, static_cast<std::int64_t>(v))});
    EXPECT_EQ(compare_outcomes(run_on_interpreter(dynamic, args, 3), run_on_interpreter(after, args, 3), 1e-5), "")
        << size[0] << " x " << size[1];
  }
}

TEST(TiledReduce, ConfigsFitTheDevice) {
  const kernels::StandardKernel k = standard("sum-rows", {.m = 64, .n = 4096});
  const std::vector<std::string> gpu = config_texts(tiled_reduce(), k.kernel, gpu_preset());
  EXPECT_THAT(gpu, ::testing::Contains("tiled_reduce(loop=0,local=1024,branch=2)"));
  EXPECT_THAT(gpu, ::testing::Contains("tiled_reduce(loop=0,local=32,branch=8)"));
  for (const std::string& text : config_texts(tiled_reduce(), k.kernel, small_preset()))
    EXPECT_THAT(text, ::testing::Not(::testing::AnyOf(HasSubstr("local=1024"), HasSubstr("local=512")))) << text;
  EXPECT_TRUE(tiled_reduce().configs(k.kernel, cpu_preset()).empty());  // one thread per group
  // A short row: no more threads than elements (beyond one warp's worth).
  for (const std::string& text : config_texts(tiled_reduce(), standard("sum-rows", {.m = 4, .n = 40}).kernel, gpu_preset()))
    EXPECT_THAT(text, ::testing::AnyOf(HasSubstr("local=64,"), HasSubstr("local=32,"))) << text;
  // Softmax: after the first loop is split, the others reuse its axis.
  const kernels::StandardKernel softmax = standard("softmax-rows", {.m = 4, .n = 1000});
  const ir::Kernel first = applied(softmax.kernel, "tiled_reduce(loop=0,local=256,branch=2)", gpu_preset());
  const std::vector<std::string> next = config_texts(tiled_reduce(), first, gpu_preset());
  EXPECT_THAT(next, ::testing::Contains("tiled_reduce(loop=2,local=256,branch=2)"));
  EXPECT_THAT(next, ::testing::Not(::testing::Contains("tiled_reduce(loop=2,local=1024,branch=2)")));  // 256 x 1024 threads
  // Every config applies and keeps the results.
  const kernels::StandardKernel small = standard("layernorm-rows", {.m = 2, .n = 50});
  for (const std::string& text : config_texts(tiled_reduce(), small.kernel, small_preset()))
    EXPECT_EQ(compare_standard(small, applied(small.kernel, text, small_preset()), 29, 4), "") << text;
}

TEST(TiledReduce, RefusesLoopsItCannotSplit) {
  const ir::Kernel k = parse_valid(kSumRows);
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=4)", cpu_preset()), HasSubstr("one thread per group"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=1,local=4)", gpu_preset()), HasSubstr("loop=1 does not exist"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=2048)", gpu_preset()),
              HasSubstr("2048 threads per group exceed the device's 1024"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=4,branch=1)", gpu_preset()), HasSubstr("branch must be"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0)", gpu_preset()), HasSubstr("missing parameter 'local'"));
  // A running value read in the loop (a prefix sum) is not a reduction.
  const ir::Kernel prefix = parse_valid(R"(
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
  %u = load f32 %acc[%at]
  store %y[%j], %u
endloop
)");
  EXPECT_THAT(step_error_message(prefix, "tiled_reduce(loop=0,local=4)", gpu_preset()),
              HasSubstr("reads an accumulator in the middle of the reduction"));
  // Iterations that store to one element: order matters.
  const ir::Kernel last_wins = parse_valid(R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[1]
%n = const i64 8
%one = const i64 1
%g = index group 0 %one
%at = const i64 0
%j = loop %n
  %v = load f32 %x[%j]
  store %y[%at], %v
endloop
)");
  EXPECT_THAT(step_error_message(last_wins, "tiled_reduce(loop=0,local=4)", gpu_preset()),
              HasSubstr("every iteration stores to the same element"));
  EXPECT_TRUE(tiled_reduce().configs(last_wins, gpu_preset()).empty());
  EXPECT_TRUE(tiled_reduce().configs(prefix, gpu_preset()).empty());
}

namespace {

// A preset that claims SUBGROUP_REDUCE on every number dtype, in subgroups
// of up to its warp_size.
DeviceInfo with_subgroups(DeviceInfo d) {
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (dt != KILN_DTYPE_BOOL) d.op_kind_dtypes[KILN_OP_SUBGROUP_REDUCE] |= KILN_DTYPE_BIT(dt);
  return d;
}

std::size_t count_kind(const ir::Kernel& k, ir::OpKind kind) {
  return static_cast<std::size_t>(std::count_if(k.ops.begin(), k.ops.end(), [&](const ir::Op& op) { return op.kind == kind; }));
}

bool has_local_storage(const ir::Kernel& k) {
  return std::any_of(k.ops.begin(), k.ops.end(),
                     [](const ir::Op& op) { return op.kind == ir::OpKind::Storage && op.scope() == ir::Scope::Local; });
}

}  // namespace

TEST(TiledReduce, SubgroupFormEndsTheTreeInOneSubgroupReduce) {
  const ir::Kernel before = parse_valid(kSumRows);
  const DeviceInfo small = with_subgroups(small_preset());  // subgroups of up to 8
  const ir::Kernel tree = applied(before, "tiled_reduce(loop=0,local=16,branch=2)", small);
  const ir::Kernel sub = applied(before, "tiled_reduce(loop=0,local=16,branch=2,subgroup=4)", small);
  const std::string text = ir::print(sub);
  EXPECT_NE(text.find("subgroup_reduce add 4 f32"), std::string::npos) << text;
  // Barriers: after the partials, 16 -> 8 -> 4 by the tree, after thread 0
  // stores the total (the tree alone: after the partials and 16 -> ... -> 1).
  EXPECT_EQ(count_kind(sub, ir::OpKind::Barrier), 4u) << text;
  EXPECT_EQ(count_kind(tree, ir::OpKind::Barrier), 5u);
  // The butterfly is the tree's order: the same bits.
  EXPECT_EQ(compare_runs(tree, sub, {}, 0), "");
  EXPECT_EQ(compare_runs(before, sub, {}, 1e-6), "");
}

TEST(TiledReduce, OneSubgroupNeedsNoLocalMemoryAndNoBarrier) {
  const ir::Kernel before = parse_valid(kSumRows);
  const DeviceInfo gpu = with_subgroups(gpu_preset());
  const ir::Kernel tree = applied(before, "tiled_reduce(loop=0,local=32,branch=2)", gpu);
  const ir::Kernel sub = applied(before, "tiled_reduce(loop=0,local=32,branch=2,subgroup=32)", gpu);
  EXPECT_EQ(count_kind(sub, ir::OpKind::Barrier), 0u) << ir::print(sub);
  EXPECT_FALSE(has_local_storage(sub)) << ir::print(sub);
  EXPECT_EQ(count_kind(sub, ir::OpKind::SubgroupReduce), 1u);
  EXPECT_EQ(compare_runs(tree, sub, {}, 0), "");
}

TEST(TiledReduce, SubgroupFormsOfRowKernelsKeepTheirResults) {
  // Every dtype the brief names, each reduction tiled_reduce meets (sum,
  // max, and softmax's and layernorm's loops on one axis), one subgroup and
  // several, with branch 2 bitwise equal to the plain tree.
  const DeviceInfo gpu = with_subgroups(gpu_preset());
  struct Case {
    std::string_view kernel;
    std::vector<std::string_view> steps;
  };
  const Case cases[] = {
      {"sum-rows", {"tiled_reduce(loop=0,local=32,branch=2,subgroup=32)"}},
      {"sum-rows", {"tiled_reduce(loop=0,local=256,branch=8,subgroup=32)"}},
      {"max-rows", {"tiled_reduce(loop=0,local=128,branch=2,subgroup=16)"}},
      {"softmax-rows",
       {"tiled_reduce(loop=0,local=64,branch=2,subgroup=32)", "tiled_reduce(loop=1,local=64,branch=4,subgroup=32)",
        "tiled_reduce(loop=2,local=64,branch=2)"}},
      {"layernorm-rows", {"tiled_reduce(loop=0,local=128,branch=2,subgroup=32)", "tiled_reduce(loop=1,local=128,branch=2)"}},
      {"rmsnorm-rows", {"tiled_reduce(loop=0,local=32,branch=2,subgroup=32)", "tiled_reduce(loop=1,local=32,branch=2)"}},
  };
  for (const Case& c : cases)
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::I32}) {
      if (dtype == ir::DType::I32 && c.kernel != "sum-rows" && c.kernel != "max-rows") continue;
      const kernels::StandardKernel k = standard(c.kernel, {.m = 3, .n = 300}, dtype);
      ir::Kernel sub = k.kernel, tree = k.kernel;
      std::string trace = std::string(c.kernel) + " " + std::string(ir::dtype_name(dtype));
      for (std::string_view step : c.steps) {
        trace += " " + std::string(step);
        sub = applied(sub, step, gpu);
        std::string plain(step);
        if (const auto at = plain.find(",subgroup="); at != std::string::npos) plain = plain.substr(0, at) + ")";
        tree = applied(tree, plain, gpu);
      }
      EXPECT_GT(count_kind(sub, ir::OpKind::SubgroupReduce), 0u) << trace;
      EXPECT_EQ(compare_standard(k, sub, 31, 4), "") << trace;
      if (c.steps.front().find("branch=2") != std::string_view::npos && c.steps.size() == 1) {
        EXPECT_EQ(compare_outcomes(run_on_interpreter(tree, k.args, 31), run_on_interpreter(sub, k.args, 31), 0), "")
            << trace << ": not the tree's bits";
      }
    }
}

TEST(TiledReduce, SubgroupConfigsOnlyWhereTheDeviceClaimsTheOp) {
  const kernels::StandardKernel k = standard("sum-rows", {.m = 64, .n = 4096});
  auto with_subgroup = [](const std::vector<std::string>& texts) {
    std::vector<std::string> out;
    for (const std::string& t : texts)
      if (t.find("subgroup=") != std::string::npos) out.push_back(t);
    return out;
  };
  EXPECT_TRUE(with_subgroup(config_texts(tiled_reduce(), k.kernel, gpu_preset())).empty());
  const std::vector<std::string> claimed = with_subgroup(config_texts(tiled_reduce(), k.kernel, with_subgroups(gpu_preset())));
  EXPECT_THAT(claimed, ::testing::Contains("tiled_reduce(loop=0,local=1024,branch=4,subgroup=32)"));
  EXPECT_THAT(claimed, ::testing::Contains("tiled_reduce(loop=0,local=32,branch=2,subgroup=32)"));
  EXPECT_THAT(claimed, ::testing::Not(::testing::Contains("tiled_reduce(loop=0,local=32,branch=8,subgroup=32)")));
  // A device that claims other dtypes only: none for f32.
  DeviceInfo ints = gpu_preset();
  ints.op_kind_dtypes[KILN_OP_SUBGROUP_REDUCE] = KILN_DTYPE_BIT(KILN_DTYPE_I32);
  EXPECT_TRUE(with_subgroup(config_texts(tiled_reduce(), k.kernel, ints)).empty());
  // A parallel loop (nothing to reduce) has none either.
  EXPECT_TRUE(with_subgroup(config_texts(tiled_reduce(), standard("add", {.m = 1, .n = 4096}).kernel,
                                         with_subgroups(gpu_preset())))
                  .empty());
  // Every proposed config applies and keeps the results (small device: subgroups of 8).
  const DeviceInfo small = with_subgroups(small_preset());
  const kernels::StandardKernel norm = standard("layernorm-rows", {.m = 2, .n = 50});
  const std::vector<std::string> texts = with_subgroup(config_texts(tiled_reduce(), norm.kernel, small));
  EXPECT_FALSE(texts.empty());
  for (const std::string& text : texts) EXPECT_EQ(compare_standard(norm, applied(norm.kernel, text, small), 29, 4), "") << text;
}

TEST(TiledReduce, SubgroupFormRefusesWhatDoesNotFit) {
  const ir::Kernel k = parse_valid(kSumRows);
  const DeviceInfo gpu = with_subgroups(gpu_preset());
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroup=32)", gpu_preset()),
              HasSubstr("subgroup=32: the device does not claim subgroup_reduce on f32"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroup=64)", gpu),
              HasSubstr("subgroups of up to 32 threads (warp_size)"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroup=12)", gpu), HasSubstr("a power of two"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=96,subgroup=32)", gpu),
              HasSubstr("local=96 is not a power-of-two multiple"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,branch=3,subgroup=32)", gpu),
              HasSubstr("branch=3 is not a power of two"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroups=32)", gpu),
              HasSubstr("unknown parameter 'subgroups' (expected: loop, local, branch, subgroup, subgroup_first)"));
}

// subgroup_first=1: each subgroup reduces its lanes first (shuffles), lane 0
// of each puts its total in LOCAL memory, and after one barrier every thread
// combines the subgroups' totals with a second subgroup_reduce: one barrier
// where the tree takes one a level.
TEST(TiledReduce, SubgroupsFirstNeedOneBarrier) {
  const ir::Kernel before = parse_valid(kSumRows);
  const DeviceInfo gpu = with_subgroups(gpu_preset());
  const ir::Kernel tree = applied(before, "tiled_reduce(loop=0,local=128,branch=2,subgroup=32)", gpu);
  const ir::Kernel first = applied(before, "tiled_reduce(loop=0,local=128,subgroup=32,subgroup_first=1)", gpu);
  const std::string text = ir::print(first);
  EXPECT_EQ(count_kind(first, ir::OpKind::Barrier), 1u) << text;
  EXPECT_GT(count_kind(tree, ir::OpKind::Barrier), 1u);
  EXPECT_NE(text.find("subgroup_reduce add 32 f32"), std::string::npos) << text;
  EXPECT_NE(text.find("subgroup_reduce add 4 f32"), std::string::npos) << text;
  EXPECT_EQ(compare_runs(before, first, {}, 1e-6), "");
  // Every row kernel's reductions, every float dtype and int sums and
  // maxima, on subgroups of 32 (1024 threads: 32 totals) and of 8 (a small
  // device: 64 threads, 8 totals).
  const DeviceInfo small = with_subgroups(small_preset());
  struct Case {
    std::string_view kernel;
    std::vector<std::string_view> steps;
    const DeviceInfo* device;
  };
  const Case cases[] = {
      {"sum-rows", {"tiled_reduce(loop=0,local=1024,subgroup=32,subgroup_first=1)"}, &gpu},
      {"max-rows", {"tiled_reduce(loop=0,local=64,subgroup=8,subgroup_first=1)"}, &small},
      {"softmax-rows",
       {"tiled_reduce(loop=0,local=256,subgroup=32,subgroup_first=1)",
        "tiled_reduce(loop=1,local=256,subgroup=32,subgroup_first=1)", "tiled_reduce(loop=2,local=256,branch=2)"},
       &gpu},
      {"layernorm-rows", {"tiled_reduce(loop=0,local=512,subgroup=32,subgroup_first=1)", "tiled_reduce(loop=1,local=512,branch=2)"}, &gpu},
      {"rmsnorm-rows", {"tiled_reduce(loop=0,local=64,subgroup=32,subgroup_first=1)", "tiled_reduce(loop=1,local=64,branch=2)"}, &gpu},
  };
  for (const Case& c : cases)
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::I32}) {
      if (dtype == ir::DType::I32 && c.kernel != "sum-rows" && c.kernel != "max-rows") continue;
      const kernels::StandardKernel k = standard(c.kernel, {.m = 3, .n = 3001}, dtype);
      ir::Kernel current = k.kernel;
      std::string trace = std::string(c.kernel) + " " + std::string(ir::dtype_name(dtype));
      for (std::string_view step : c.steps) current = applied(current, step, *c.device);
      EXPECT_EQ(compare_standard(k, current, 37, 4), "") << trace;
    }
}

TEST(TiledReduce, SubgroupsFirstConfigsAndRefusals) {
  const ir::Kernel k = parse_valid(kSumRows);
  const DeviceInfo gpu = with_subgroups(gpu_preset());
  const std::vector<std::string> texts = config_texts(tiled_reduce(), standard("sum-rows", {.m = 64, .n = 4096}).kernel, gpu);
  EXPECT_THAT(texts, ::testing::Contains("tiled_reduce(loop=0,local=1024,subgroup=32,subgroup_first=1)"));
  EXPECT_THAT(texts, ::testing::Contains("tiled_reduce(loop=0,local=64,subgroup=32,subgroup_first=1)"));
  EXPECT_THAT(texts, ::testing::Not(::testing::Contains("tiled_reduce(loop=0,local=32,subgroup=32,subgroup_first=1)")));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroup_first=1)", gpu), HasSubstr("needs subgroup=w"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=32,subgroup=32,subgroup_first=1)", gpu),
              HasSubstr("one subgroup"));
  // Subgroups of 8 at 128 threads: 16 totals, more than a subgroup holds.
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=128,subgroup=8,subgroup_first=1)",
                                 with_subgroups(small_preset())),
              HasSubstr("not one subgroup"));
  EXPECT_THAT(step_error_message(k, "tiled_reduce(loop=0,local=64,subgroup=32,subgroup_first=2)", gpu),
              HasSubstr("subgroup_first must be 0 or 1"));
}

// A subgroup's total is the same in every lane of a LOCAL axis 0 whose length
// divides the subgroup: softmax's sum and writing loops after a one-warp
// maximum reuse that axis (one warp per row: no LOCAL memory, no barrier, one
// LOCAL axis), where they used to take a second axis of their own.
TEST(TiledReduce, LoopsAfterAOneSubgroupReductionReuseItsAxis) {
  const DeviceInfo device = with_subgroups(gpu_preset());
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 100});
  ir::Kernel current = k.kernel;
  for (std::string_view step : {"tiled_reduce(loop=0,local=32,branch=2,subgroup=32)",
                                "tiled_reduce(loop=1,local=32,branch=2,subgroup=32)", "tiled_reduce(loop=2,local=32,branch=2)"})
    current = applied(current, step, device);
  EXPECT_EQ(count_kind(current, ir::OpKind::Barrier), 0u) << ir::print(current);
  EXPECT_FALSE(has_local_storage(current)) << ir::print(current);
  EXPECT_EQ(count_kind(current, ir::OpKind::Index), 2u) << ir::print(current);  // the row and one LOCAL axis
  EXPECT_EQ(compare_standard(k, current, 31, 4), "");
}
