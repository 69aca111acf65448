// async_fill(): the LOCAL row of row_cache(local=1), filled by storing
// 16-byte vector loads, is filled by COPY_ASYNC instead, all issued before
// the first load of the row, then a commit, a wait and a barrier; the loads
// read the storage. The results are the recipe's, exactly (the copies write
// the same values), on the interpreter and through the whole lowering.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/passes/pipeline.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& async_fill() { return *find_optimization("async_fill"); }

// The GPU preset with 16-byte copies (as CUDA's sm_80+ claim them), vectors
// of 8 and room for a long row in LOCAL memory.
DeviceInfo copying_gpu() {
  DeviceInfo d = gpu_preset();
  for (unsigned dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) d.op_kind_dtypes[KILN_OP_COPY_ASYNC] |= 1u << dt;
  d.vector_width_mask |= 1u << 8;
  d.local_memory_bytes = 232448;
  return d;
}

// The tuner's LOCAL-row recipe for a 3-loop kernel (softmax) or a 2-loop one
// (the norms) at odd n: split_aligned blocks of `lanes`, tiled over
// `threads`, each thread's guarded last block peeled, the row in LOCAL
// memory (row_cache local=1), unrolled by 4, vectorized.
std::string local_row_recipe(int loops, int lanes, int threads) {
  const std::string l = std::to_string(lanes), t = std::to_string(threads);
  std::string s = loops == 3 ? "reciprocal_divide(); " : "";
  for (int loop = loops - 1; loop >= 0; --loop)
    s += "split_aligned(loop=" + std::to_string(loop) + ",factor=" + l + "); unroll(loop=" + std::to_string(loop + 2) +
         ",factor=0); ";
  for (int loop = 0; loop < loops; ++loop) {
    const bool reduction = loop < loops - 1;
    const std::string split = ",local=" + t + ",branch=4)";
    if (!reduction) s += "tiled_reduce(loop=" + std::to_string(3 * loop) + split + "; ";
    s += "tiled_reduce(loop=" + std::to_string(3 * loop + 1) + split + "; ";
    if (!reduction) s += "tiled_reduce(loop=" + std::to_string(3 * loop + 2) + split + "; ";
  }
  for (int loop = loops - 1; loop >= 0; --loop) s += "peel_loop(loop=" + std::to_string(3 * loop + 1) + ",count=-1); ";
  s += "row_cache(loop=1,local=1); ";
  for (int loop = loops - 1; loop >= 0; --loop) s += "unroll(loop=" + std::to_string(3 * loop + 1) + ",factor=4); ";
  return s + "vectorize(lanes=" + l + ")";
}

ir::Kernel optimized(const kernels::StandardKernel& k, const std::string& sequence, const DeviceInfo& device) {
  Result<ir::Kernel> out = optimize(k.kernel, parse_sequence(sequence).value(), device);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
  return out.ok() ? std::move(out).value() : k.kernel;
}

std::vector<ir::ValueId> ops_of(const ir::Kernel& k, ir::OpKind kind) {
  std::vector<ir::ValueId> ids;
  for (ir::ValueId id = 0; id < k.size(); ++id)
    if (k[id].kind == kind) ids.push_back(id);
  return ids;
}

// A STORE into LOCAL storage of a value loaded from a buffer param.
bool stores_into_local(const ir::Kernel& k, ir::ValueId id) {
  if (k[id].kind != ir::OpKind::Store) return false;
  const ir::Op& memory = k[k[id].src[0]];
  const ir::Op& value = k[k[id].src[2]];
  return memory.kind == ir::OpKind::Storage && memory.scope() == ir::Scope::Local && value.kind == ir::OpKind::Load &&
         k[value.src[0]].kind == ir::OpKind::Param;
}

}  // namespace

TEST(AsyncFill, CopiesTheLocalRowBeforeItIsReadAndKeepsTheResults) {
  const DeviceInfo gpu = copying_gpu();
  struct Case {
    const char* name;
    int loops;
    ir::DType dtype;
    int lanes;
  };
  for (const Case& c : {Case{"softmax-rows", 3, ir::DType::F32, 4}, Case{"softmax-rows", 3, ir::DType::F16, 8},
                        Case{"rmsnorm-rows", 2, ir::DType::BF16, 8}, Case{"layernorm-rows", 2, ir::DType::F32, 4}}) {
    SCOPED_TRACE(std::string(c.name) + " " + std::string(ir::dtype_name(c.dtype)));
    // n = 3001: 375 blocks of 8 at 64 threads leave a loop of blocks per thread.
    const kernels::StandardKernel k = standard(c.name, {.m = 3, .n = 3001}, c.dtype);
    const ir::Kernel recipe = optimized(k, local_row_recipe(c.loops, c.lanes, 64), gpu);
    EXPECT_THAT(config_texts(async_fill(), recipe, gpu), ::testing::ElementsAre("async_fill()"));
    const ir::Kernel after = applied(recipe, "async_fill()", gpu);
    // Every block the recipe stored into LOCAL memory is copied instead.
    std::size_t fills = 0;
    for (ir::ValueId id = 0; id < recipe.size(); ++id) fills += stores_into_local(recipe, id);
    ASSERT_GT(fills, 0u) << ir::print(recipe);
    const auto copies = ops_of(after, ir::OpKind::CopyAsync);
    EXPECT_EQ(copies.size(), fills) << ir::print(after);
    for (ir::ValueId id = 0; id < after.size(); ++id) EXPECT_FALSE(stores_into_local(after, id)) << id << "\n" << ir::print(after);
    // ... all before one commit, one wait and a barrier, which come before any
    // read of the storage.
    const auto commits = ops_of(after, ir::OpKind::CopyCommit), waits = ops_of(after, ir::OpKind::CopyWait);
    ASSERT_EQ(commits.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_GT(commits[0], copies.back());
    EXPECT_EQ(waits[0], commits[0] + 1);
    EXPECT_EQ(after[waits[0] + 1].kind, ir::OpKind::Barrier);
    const ir::ValueId row = after[copies[0]].src[0];
    for (ir::ValueId id = 0; id < waits[0]; ++id)
      EXPECT_FALSE(after[id].kind == ir::OpKind::Load && after[id].src[0] == row) << id << "\n" << ir::print(after);
    // The same values: exactly the recipe's, and the untuned kernel's within its tolerance.
    EXPECT_EQ(compare_runs(recipe, after, {}, 0), "");
    EXPECT_EQ(compare_standard(k, after, 11), "");
  }
}

TEST(AsyncFill, OnlyWhereTheDeviceCopiesAndARowIsFilledFromMemory) {
  const DeviceInfo gpu = copying_gpu();
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 3001}, ir::DType::F16);
  const ir::Kernel recipe = optimized(k, local_row_recipe(3, 8, 64), gpu);
  // The GPU preset claims no COPY_ASYNC.
  EXPECT_TRUE(async_fill().configs(recipe, gpu_preset()).empty());
  EXPECT_THAT(step_error_message(recipe, "async_fill()", gpu_preset()), HasSubstr("copy_async"));
  // Blocks of 4 halves are 8 bytes, not a copy's 16.
  const ir::Kernel narrow = optimized(k, local_row_recipe(3, 4, 64), gpu);
  EXPECT_TRUE(async_fill().configs(narrow, gpu).empty());
  // No LOCAL row at all (the untuned kernel); and no parameters.
  EXPECT_TRUE(async_fill().configs(normalize(k.kernel, gpu), gpu).empty());
  EXPECT_THAT(step_error_message(recipe, "async_fill(loop=1)", gpu), HasSubstr("loop"));
}
