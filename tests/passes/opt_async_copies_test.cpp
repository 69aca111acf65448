// async_copies(): 16-byte loads that a thread stores unchanged to LOCAL
// memory (row_cache's LOCAL row, vectorized) become asynchronous copies, a
// run's copies issued together ahead of the row's loose ends, one commit and
// wait before the first use; the results are the interpreter's, bit for bit
// (the interpreter writes each copy at its wait and reports any early read).
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"

#include <gmock/gmock.h>

#include <algorithm>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& async_copies() { return *find_optimization("async_copies"); }

DeviceInfo copying_gpu() {
  DeviceInfo d = gpu_preset();
  for (unsigned dtype = 1; dtype < KILN_DTYPE_COUNT; ++dtype) d.op_kind_dtypes[KILN_OP_COPY_ASYNC] |= 1u << dtype;
  d.vector_width_mask |= 1u << 8;
  return d;
}

std::size_t count_kind(const ir::Kernel& k, ir::OpKind kind) {
  return static_cast<std::size_t>(
      std::count_if(k.ops.begin(), k.ops.end(), [&](const ir::Op& op) { return op.kind == kind; }));
}

// The first op of `kind`, or the kernel's size.
ir::ValueId first_of(const ir::Kernel& k, ir::OpKind kind, ir::DType dtype, std::uint8_t lanes) {
  for (ir::ValueId id = 0; id < k.size(); ++id)
    if (k[id].kind == kind && k[id].dtype == dtype && k[id].lanes == lanes) return id;
  return static_cast<ir::ValueId>(k.size());
}

std::size_t local_vector_stores(const ir::Kernel& k) {
  return static_cast<std::size_t>(std::count_if(k.ops.begin(), k.ops.end(), [&](const ir::Op& op) {
    return op.kind == ir::OpKind::Store && op.lanes == 8 && k[op.src[0]].kind == ir::OpKind::Storage &&
           k[op.src[0]].scope() == ir::Scope::Local;
  }));
}

// Rows that start anywhere (n odd): aligned blocks of 8 halves (16 bytes),
// each thread's first 2 cached in LOCAL memory (row_cache local=1), the
// loose ends scalar, the reductions' loose ends first (the recipe form of
// core/tune/default_space.cpp at 64 threads).
constexpr std::string_view kSoftmaxLocalRow =
    "reciprocal_divide(); split_aligned(loop=2,factor=8); unroll(loop=4,factor=0); split_aligned(loop=1,factor=8); "
    "unroll(loop=3,factor=0); unroll(loop=1,factor=0); split_aligned(loop=0,factor=8); unroll(loop=2,factor=0); "
    "unroll(loop=0,factor=0); tiled_reduce(loop=0,local=64,branch=4); tiled_reduce(loop=1,local=64,branch=4); "
    "tiled_reduce(loop=2,local=64,branch=4); tiled_reduce(loop=3,local=64,branch=4); "
    "tiled_reduce(loop=4,local=64,branch=4); peel_loop(loop=3,count=2); peel_loop(loop=1,count=2); "
    "peel_loop(loop=0,count=2); row_cache(loop=0,local=1); unroll(loop=0,factor=0); vectorize(lanes=8)";

}  // namespace

TEST(AsyncCopies, ALocalRowsBlocksBecomeCopiesIssuedTogetherAheadOfItsLooseEnds) {
  const DeviceInfo device = copying_gpu();
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    // 3 rows of 2001 halves: rows start at residues 0, 1 and 2 mod 8.
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 2001}, dtype);
    Result<ir::Kernel> cached = optimize(k.kernel, parse_sequence(kSoftmaxLocalRow).value(), device);
    ASSERT_TRUE(cached.ok()) << cached.error().to_string();
    EXPECT_EQ(count_kind(*cached, ir::OpKind::CopyAsync), 0u);
    Result<ir::Kernel> copied =
        optimize(k.kernel, parse_sequence(std::string(kSoftmaxLocalRow) + "; async_copies()").value(), device);
    ASSERT_TRUE(copied.ok()) << copied.error().to_string();
    const std::string text = ir::print(*copied);
    // Each thread's 2 cached blocks are copied, committed and waited for once.
    EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyAsync), 2u) << text;
    EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyCommit), 1u) << text;
    EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyWait), 1u) << text;
    // No 16-byte vector is stored to LOCAL memory any more: the copies write it.
    EXPECT_EQ(local_vector_stores(*cached), 2u);
    EXPECT_EQ(local_vector_stores(*copied), 0u) << text;
    // The copies go out before the first scalar load of the row (its loose
    // ends), the wait after it.
    const ir::ValueId copy = first_of(*copied, ir::OpKind::CopyAsync, dtype, 8);
    const ir::ValueId scalar = first_of(*copied, ir::OpKind::Load, dtype, 1);
    const ir::ValueId wait = first_of(*copied, ir::OpKind::CopyWait, ir::DType::Invalid, 1);
    EXPECT_LT(copy, scalar) << text;
    EXPECT_LT(scalar, wait) << text;
    // Bit for bit the cached kernel's results; within the kernel's tolerance
    // of the plain one (the sums are reassociated by the recipe, not here).
    EXPECT_EQ(compare_outcomes(run_on_interpreter(*cached, k.args, 11), run_on_interpreter(*copied, k.args, 11), 0), "");
    EXPECT_EQ(compare_standard(k, *copied, 11, 4), "");
  }
}

TEST(AsyncCopies, RolledLocalRowsCopyEachIterationsBlocks) {
  // The LOCAL row left in a loop (unrolled by 2): each iteration copies its
  // two blocks, then waits; layernorm f16 at an odd n on 32 threads.
  const kernels::StandardKernel k = standard("layernorm-rows", {.m = 2, .n = 4001}, ir::DType::F16);
  const std::string sequence =
      "split_aligned(loop=1,factor=8); unroll(loop=3,factor=0); split_aligned(loop=0,factor=8); "
      "unroll(loop=2,factor=0); unroll(loop=0,factor=0); tiled_reduce(loop=0,local=32,branch=4); "
      "tiled_reduce(loop=1,local=32,branch=4); tiled_reduce(loop=2,local=32,branch=4); "
      "tiled_reduce(loop=3,local=32,branch=4); peel_loop(loop=2,count=-1); peel_loop(loop=0,count=-1); "
      "row_cache(loop=0,local=1); unroll(loop=2,factor=2); unroll(loop=0,factor=2); vectorize(lanes=8); async_copies()";
  Result<ir::Kernel> copied = optimize(k.kernel, parse_sequence(sequence).value(), copying_gpu());
  ASSERT_TRUE(copied.ok()) << copied.error().to_string();
  const std::string text = ir::print(*copied);
  EXPECT_GE(count_kind(*copied, ir::OpKind::CopyAsync), 2u) << text;
  const ir::Blocks blocks = ir::analyze_blocks(*copied);
  const ir::ValueId copy = first_of(*copied, ir::OpKind::CopyAsync, ir::DType::F16, 8);
  ASSERT_LT(copy, copied->size());
  EXPECT_GT(blocks.loop_depth[copy], 0u) << text;  // in the thread's loop over its blocks
  EXPECT_EQ(compare_standard(k, *copied, 5, 4), "");
}

TEST(AsyncCopies, ConfigsAndRefusals) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 2001}, ir::DType::F16);
  const ir::Kernel cached = optimize(k.kernel, parse_sequence(kSoftmaxLocalRow).value(), copying_gpu()).value();
  EXPECT_THAT(config_texts(async_copies(), cached, copying_gpu()), ::testing::ElementsAre("async_copies()"));
  // A device without asynchronous copies: no config, and the step says why.
  EXPECT_TRUE(async_copies().configs(cached, gpu_preset()).empty());
  EXPECT_THAT(step_error_message(cached, "async_copies()", gpu_preset()), HasSubstr("copy_async"));
  // Nothing stored to LOCAL memory (the row read again instead).
  EXPECT_THAT(step_error_message(k.kernel, "async_copies()", copying_gpu()), HasSubstr("LOCAL memory"));
  // Applied once, the kernel has copies of its own.
  const ir::Kernel copied = applied(cached, "async_copies()", copying_gpu());
  EXPECT_TRUE(async_copies().configs(copied, copying_gpu()).empty());
  EXPECT_THAT(step_error_message(copied, "async_copies()", copying_gpu()), HasSubstr("copies of its own"));
  EXPECT_THAT(step_error_message(cached, "async_copies(loop=0)", copying_gpu()), HasSubstr("loop"));
}

namespace {

// Each of 64 threads loads two 16-byte chunks of x, keeps them in LOCAL
// memory (its own slots) and adds them up after a use of the first: the
// shape of a LOCAL row, written by hand. `@MIDDLE@` is replaced by the cases
// below (between the first store and the second load).
constexpr std::string_view kTwoChunks = R"(
%x = param 0 global f32[512]
%y = param 1 global_mut f32[256]
%l = storage local f32[512]
%r = storage register f32[4]
%n = const i64 64
%t = index local 0 %n
%four = const i64 4
%eight = const i64 8
%zero = const i64 0
%a = mul i64 %t, %eight
%va = load f32x4 %x[%a]
store f32x4 %l[%a], %va
%w = mul f32x4 %va, %va
@MIDDLE@
%b = add i64 %a, %four
%vb = load f32x4 %x[%b]
store f32x4 %l[%b], %vb
%sa = load f32x4 %l[%a]
%sb = load f32x4 %l[%b]
%s = add f32x4 %sa, %sb
%u = add f32x4 %s, %w
%o = mul i64 %t, %four
store f32x4 %y[%o], %u
)";

std::string two_chunks(std::string_view middle) {
  std::string text(kTwoChunks);
  text.replace(text.find("@MIDDLE@"), 8, middle);
  return text;
}

}  // namespace

TEST(AsyncCopies, TwoChunksGoOutTogetherAndTheirUsesReadLocalMemory) {
  const ir::Kernel before = parse_valid(two_chunks(""));
  const ir::Kernel after = applied(before, "async_copies()", copying_gpu());
  const std::string text = ir::print(after);
  EXPECT_EQ(count_kind(after, ir::OpKind::CopyAsync), 2u) << text;
  EXPECT_EQ(local_vector_stores(after), 0u) << text;
  // Both copies before the wait, the wait before the first use (the square).
  const ir::ValueId wait = first_of(after, ir::OpKind::CopyWait, ir::DType::Invalid, 1);
  ir::ValueId last_copy = 0;
  for (ir::ValueId id = 0; id < after.size(); ++id)
    if (after[id].kind == ir::OpKind::CopyAsync) last_copy = id;
  EXPECT_LT(last_copy, wait) << text;
  EXPECT_LT(wait, first_of(after, ir::OpKind::Binary, ir::DType::F32, 4)) << text;
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(AsyncCopies, LeavesWhatItCannotProveTheSame) {
  const DeviceInfo device = copying_gpu();
  {
    // A barrier ends the run: each chunk gets its own copy, commit and wait.
    const ir::Kernel before = parse_valid(two_chunks("barrier"));
    const ir::Kernel after = applied(before, "async_copies()", device);
    EXPECT_EQ(count_kind(after, ir::OpKind::CopyAsync), 2u) << ir::print(after);
    EXPECT_EQ(count_kind(after, ir::OpKind::CopyWait), 2u) << ir::print(after);
    EXPECT_EQ(compare_runs(before, after), "");
  }
  // The thread reads the storage between its first load and its last store:
  // the copies would land after that read.
  EXPECT_THAT(step_error_message(parse_valid(two_chunks("%peek = load f32 %l[%zero]\nstore f32 %r[%zero], %peek")),
                                 "async_copies()", device),
              HasSubstr("LOCAL memory"));
  // Stores out of their loads' order: the thread reads the first chunk's
  // slot after the second chunk's store and before its own.
  EXPECT_THAT(step_error_message(parse_valid(R"(
%x = param 0 global f32[512]
%y = param 1 global_mut f32[512]
%l = storage local f32[512]
%n = const i64 64
%t = index local 0 %n
%four = const i64 4
%eight = const i64 8
%a = mul i64 %t, %eight
%b = add i64 %a, %four
%va = load f32x4 %x[%a]
%vb = load f32x4 %x[%b]
store f32x4 %l[%a], %vb
store f32x4 %l[%b], %vb
%old = load f32x4 %l[%a]
store f32x4 %l[%a], %va
%s = add f32x4 %old, %va
store f32x4 %y[%a], %s
)"),
                                 "async_copies()", device),
              HasSubstr("LOCAL memory"));
  // The second chunk's index is read from memory after the first chunk's
  // value is used: its copy cannot go out with the first, so neither moves.
  std::string late_index = two_chunks("%ri = storage register i64[1]\nstore i64 %ri[%zero], %four\n%k = load i64 %ri[%zero]");
  late_index.replace(late_index.find("%b = add i64 %a, %four"), 22, "%b = add i64 %a, %k");
  EXPECT_THAT(step_error_message(parse_valid(late_index), "async_copies()", device), HasSubstr("LOCAL memory"));
  // 8-byte chunks are not what a copy moves, and a source the launch writes
  // (GLOBAL_MUT) is not copied; a 16-byte chunk of a read-only one is.
  const auto one_chunk = [](std::string_view source, std::string_view type) {
    std::string text = R"(
%x = param 0 SOURCE f32[512]
%y = param 1 global_mut f32[512]
%l = storage local f32[512]
%n = const i64 64
%t = index local 0 %n
%eight = const i64 8
%a = mul i64 %t, %eight
%va = load TYPE %x[%a]
store TYPE %l[%a], %va
%w = add TYPE %va, %va
store TYPE %y[%a], %w
)";
    text.replace(text.find("SOURCE"), 6, source);
    for (std::size_t at = text.find("TYPE"); at != std::string::npos; at = text.find("TYPE")) text.replace(at, 4, type);
    return text;
  };
  EXPECT_THAT(step_error_message(parse_valid(one_chunk("global", "f32x2")), "async_copies()", device),
              HasSubstr("LOCAL memory"));
  EXPECT_THAT(step_error_message(parse_valid(one_chunk("global_mut", "f32x4")), "async_copies()", device),
              HasSubstr("LOCAL memory"));
  const ir::Kernel copied = parse_valid(one_chunk("global", "f32x4"));
  EXPECT_EQ(count_kind(applied(copied, "async_copies()", device), ir::OpKind::CopyAsync), 1u);
}
