// The cost model ranks obviously better variants better: coalesced over
// strided access, a LOCAL-tiled matmul over an untiled one and 256 threads
// per group over 1 on a GPU-shaped device; contiguous inner loops on a CPU;
// and it scales with the work that VARIABLE lengths give.
#include "passes/pass_test_support.hpp"

#include "kiln/passes/cost.hpp"
#include "kiln/passes/optimization.hpp"

namespace {

using namespace kiln;
using passes::test::parse_valid;

std::string with_sizes(std::string text, std::initializer_list<std::pair<std::string, std::int64_t>> sizes) {
  for (const auto& [name, value] : sizes)
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at))
      text.replace(at, name.size(), std::to_string(value));
  return text;
}

// c[i, j] = sum_k a[i, k] b[k, j] on N x N, 16 x 16 threads per group,
// thread (lx, ly) of group (gx, gy) computes i = gy*16 + ly, j = gx*16 + lx.
constexpr std::string_view kMatmulHead = R"(
%a = param 0 global f32[NN2]
%b = param 1 global f32[NN2]
%c = param 2 global_mut f32[NN2]
%n = const i64 NN
%groups = const i64 GG
%t = const i64 16
%zero = const i64 0
%fz = const f32 0
%gx = index group 0 %groups
%gy = index group 1 %groups
%lx = index local 0 %t
%ly = index local 1 %t
%j0 = mul i64 %gx, %t
%j = add i64 %j0, %lx
%i0 = mul i64 %gy, %t
%i = add i64 %i0, %ly
%acc = storage register f32[1]
store f32 %acc[%zero], %fz
%arow = mul i64 %i, %n
)";

constexpr std::string_view kMatmulTail = R"(
%r = load f32 %acc[%zero]
%ci = add i64 %arow, %j
store f32 %c[%ci], %r
)";

constexpr std::string_view kUntiledLoop = R"(
%k = loop %n
  %ai = add i64 %arow, %k
  %av = load f32 %a[%ai]
  %bk = mul i64 %k, %n
  %bi = add i64 %bk, %j
  %bv = load f32 %b[%bi]
  %s = load f32 %acc[%zero]
  %m = mad f32 %av, %bv, %s
  store f32 %acc[%zero], %m
endloop %k
)";

// Each 16-wide slice of k: the group stages a 16x16 tile of a and of b in
// LOCAL storage, waits, and computes from LOCAL.
constexpr std::string_view kTiledLoop = R"(
%as = storage local f32[256]
%bs = storage local f32[256]
%lrow = mul i64 %ly, %t
%lidx = add i64 %lrow, %lx
%tile = loop %groups
  %tk = mul i64 %tile, %t
  %ak = add i64 %tk, %lx
  %ai = add i64 %arow, %ak
  %av = load f32 %a[%ai]
  store f32 %as[%lidx], %av
  %bk0 = add i64 %tk, %ly
  %bk = mul i64 %bk0, %n
  %bi = add i64 %bk, %j
  %bv = load f32 %b[%bi]
  store f32 %bs[%lidx], %bv
  barrier
  %kk = loop %t
    %ax = add i64 %lrow, %kk
    %x = load f32 %as[%ax]
    %by0 = mul i64 %kk, %t
    %by = add i64 %by0, %lx
    %y = load f32 %bs[%by]
    %s = load f32 %acc[%zero]
    %m = mad f32 %x, %y, %s
    store f32 %acc[%zero], %m
  endloop %kk
  barrier
endloop %tile
)";

ir::Kernel matmul(std::int64_t n, bool tiled) {
  std::string text = std::string(kMatmulHead) + std::string(tiled ? kTiledLoop : kUntiledLoop) + std::string(kMatmulTail);
  return parse_valid(with_sizes(text, {{"NN2", n * n}, {"NN", n}, {"GG", n / 16}}));
}

// One element per thread: out[e] = in[e] * 2 over 2^24 elements, with the
// grid and e as given.
ir::Kernel elementwise(std::string_view grid_and_element) {
  return parse_valid(std::string(R"(
%in = param 0 global f32[16777216]
%out = param 1 global_mut f32[16777216]
%two = const f32 2
%c256 = const i64 256
%c65536 = const i64 65536
%c16m = const i64 16777216
)") + std::string(grid_and_element) + R"(
%x = load f32 %in[%e]
%y = mul f32 %x, %two
store f32 %out[%e], %y
)");
}

double total(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const std::int64_t> variables = {}) {
  return passes::estimate_cost(kernel, device, variables).total_ns;
}

}  // namespace

TEST(CostModel, TheTiledMatmulComputesTheSameAsTheUntiled) {
  // The hand-written kernels the ranking test compares are both correct.
  const std::string diff = passes::test::compare_runs(matmul(32, false), matmul(32, true), {}, 1e-5);
  EXPECT_EQ(diff, "");
}

TEST(CostModel, RanksCoalescedAccessAboveStrided) {
  const ir::Kernel coalesced = elementwise(R"(
%g = index group 0 %c65536
%l = index local 0 %c256
%g256 = mul i64 %g, %c256
%e = add i64 %g256, %l)");
  const ir::Kernel strided = elementwise(R"(
%g = index group 0 %c65536
%l = index local 0 %c256
%l64k = mul i64 %l, %c65536
%e = add i64 %l64k, %g)");
  const auto gpu = passes::gpu_preset();
  const passes::CostEstimate good = passes::estimate_cost(coalesced, gpu);
  const passes::CostEstimate bad = passes::estimate_cost(strided, gpu);
  EXPECT_LT(good.global_bytes, bad.global_bytes);
  EXPECT_NEAR(good.global_bytes, 2.0 * 16777216 * 4, 1);  // exactly what it uses
  EXPECT_LT(good.total_ns * 4, bad.total_ns);
}

TEST(CostModel, RanksALocalTiledMatmulAboveAnUntiledOneOnAGpu) {
  const auto gpu = passes::gpu_preset();
  const passes::CostEstimate untiled = passes::estimate_cost(matmul(1024, false), gpu);
  const passes::CostEstimate tiled = passes::estimate_cost(matmul(1024, true), gpu);
  EXPECT_LT(tiled.global_bytes * 4, untiled.global_bytes);
  EXPECT_GT(tiled.barrier_ns, 0);
  EXPECT_GT(tiled.local_memory_ns, 0);
  EXPECT_LT(tiled.total_ns, untiled.total_ns);
  EXPECT_NEAR(tiled.flops, 2.0 * 1024 * 1024 * 1024, 1e6);
}

TEST(CostModel, RanksFullGroupsAboveOneThreadPerGroupOnAGpu) {
  const ir::Kernel full = elementwise(R"(
%g = index group 0 %c65536
%l = index local 0 %c256
%g256 = mul i64 %g, %c256
%e = add i64 %g256, %l)");
  const ir::Kernel single = elementwise(R"(
%e = index group 0 %c16m)");
  const auto gpu = passes::gpu_preset();
  const passes::CostEstimate many = passes::estimate_cost(full, gpu);
  const passes::CostEstimate one = passes::estimate_cost(single, gpu);
  EXPECT_GT(many.occupancy, 10 * one.occupancy);
  EXPECT_LT(many.total_ns * 4, one.total_ns);
}

TEST(CostModel, RanksContiguousInnerLoopsAboveStridedOnACpu) {
  // Row sums read along the row (stride 1); column sums down the column.
  constexpr std::string_view kSum = R"(
%x = param 0 global f32[1048576]
%y = param 1 global_mut f32[1024]
%n = const i64 1024
%zero = const i64 0
%fz = const f32 0
%r = index group 0 %n
%acc = storage register f32[1]
store f32 %acc[%zero], %fz
%k = loop %n
  ELEMENT
  %v = load f32 %x[%e]
  %s = load f32 %acc[%zero]
  %t = add f32 %s, %v
  store f32 %acc[%zero], %t
endloop %k
%out = load f32 %acc[%zero]
store f32 %y[%r], %out
)";
  auto kernel = [&](std::string element) {
    std::string text(kSum);
    text.replace(text.find("ELEMENT"), 7, element);
    return parse_valid(text);
  };
  const ir::Kernel rows = kernel("%base = mul i64 %r, %n\n  %e = add i64 %base, %k");
  const ir::Kernel columns = kernel("%base = mul i64 %k, %n\n  %e = add i64 %base, %r");
  const auto cpu = passes::cpu_preset();
  EXPECT_LT(passes::estimate_cost(rows, cpu).global_bytes * 8, passes::estimate_cost(columns, cpu).global_bytes);
  EXPECT_LT(total(rows, cpu), total(columns, cpu));
}

TEST(CostModel, AVectorStoreAtAnyIndexReadsItsLinesFirstOnACpu) {
  // rmsnorm rows of 1001 (they start at every residue): the writing loop
  // vectorized at any index stores unaligned vectors, which cannot stream,
  // so each line is read before it is written; on split_aligned's blocks
  // the stores are aligned. The model counts x in both loops and w (4 KB)
  // per row: about 16 bytes an element against 12.
  const auto k = kernels::make_standard_kernel("rmsnorm-rows", {.m = 64, .n = 1001}).value();
  const auto cpu = passes::cpu_preset();
  const auto lower = [&](std::string_view sequence) {
    return passes::optimize(k.kernel, passes::parse_sequence(sequence).value(), cpu).value();
  };
  const ir::Kernel any_index =
      lower("split_loop(loop=1,factor=16,tail=1); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); vectorize(lanes=16)");
  const ir::Kernel aligned = lower(
      "split_aligned(loop=1,factor=16,flat=1); split_aligned(loop=0,factor=16,flat=1); split_loop(loop=3,factor=16); "
      "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=16); vectorize(lanes=16)");
  ASSERT_NE(ir::print(any_index).find("store unaligned f32x16"), std::string::npos);
  ASSERT_EQ(ir::print(aligned).find("store unaligned"), std::string::npos);
  const double ratio = passes::estimate_cost(any_index, cpu).global_bytes / passes::estimate_cost(aligned, cpu).global_bytes;
  EXPECT_GT(ratio, 1.15);
  EXPECT_LT(ratio, 1.4);
  EXPECT_LT(total(aligned, cpu), total(any_index, cpu));
}

TEST(CostModel, AScalarStoreReadsItsLinesFirstOnACpu) {
  // The same rows with the writing loop left scalar: its stores cannot
  // stream either (only whole 64-byte vectors do), so they move twice their
  // bytes, as the unaligned vectors above; the aligned blocks stay cheaper.
  // Unpriced, the scalar loop tied with them on preset:cpu and took the
  // norms' untuned pick at odd lengths (rmsnorm f32 1024 x 50257 on c:0,
  // 2026-12-06: 26 GB/s against 31).
  const auto k = kernels::make_standard_kernel("rmsnorm-rows", {.m = 64, .n = 1001}).value();
  const auto cpu = passes::cpu_preset();
  const auto lower = [&](std::string_view sequence) {
    return passes::optimize(k.kernel, passes::parse_sequence(sequence).value(), cpu).value();
  };
  const ir::Kernel scalar_writes = lower("lane_reduce(loop=0,lanes=16); vectorize(lanes=16)");
  const ir::Kernel aligned = lower(
      "split_aligned(loop=1,factor=16,flat=1); split_aligned(loop=0,factor=16,flat=1); split_loop(loop=3,factor=16); "
      "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=16); vectorize(lanes=16)");
  ASSERT_NE(ir::print(scalar_writes).find("store f32 %"), std::string::npos) << ir::print(scalar_writes);
  const double ratio =
      passes::estimate_cost(scalar_writes, cpu).global_bytes / passes::estimate_cost(aligned, cpu).global_bytes;
  EXPECT_GT(ratio, 1.15);
  EXPECT_LT(ratio, 1.4);
  EXPECT_LT(total(aligned, cpu), total(scalar_writes, cpu));
}

TEST(CostModel, AccessesThatTogetherCoverTheirStrideStreamOnACpu) {
  // Row sums in lane partials: 16 scalar loads an iteration (lane_reduce
  // alone), or two 16-wide vectors (32 lanes), each at a stride of 16 or 32
  // elements, together read the row once: the same bytes as one 16-wide
  // vector an iteration, not a cache line per access (16 and 2 times the
  // bytes before 2026-12-06, which priced the vectors of 32 lanes above the
  // elementwise recipe's gathers across rows on c:0).
  const auto k = kernels::make_standard_kernel("sum-rows", {.m = 64, .n = 4096}, ir::DType::F16).value();
  const auto cpu = passes::cpu_preset();
  const auto bytes = [&](std::string_view sequence) {
    const ir::Kernel lowered = passes::optimize(k.kernel, passes::parse_sequence(sequence).value(), cpu).value();
    return passes::estimate_cost(lowered, cpu).global_bytes;
  };
  const double one_vector = bytes("lane_reduce(loop=0,lanes=16); vectorize(lanes=16)");
  EXPECT_NEAR(one_vector, 64.0 * 4096 * 2, 64.0 * 64);  // the rows, and a sum a row
  EXPECT_NEAR(bytes("lane_reduce(loop=0,lanes=32); vectorize(lanes=16)"), one_vector, 1);
  EXPECT_NEAR(bytes("lane_reduce(loop=0,lanes=16)"), one_vector, 1);
  // Siblings that leave gaps in their stride still cost a line each: two
  // of every 16 elements read.
  const ir::Kernel sparse = parse_valid(R"(
%x = param 0 global f32[65536]
%y = param 1 global_mut f32[4096]
%n = const i64 4096
%one = const i64 1
%sixteen = const i64 16
%r = index group 0 %n
%base = mul i64 %r, %sixteen
%a = load f32 %x[%base]
%i = add i64 %base, %one
%b = load f32 %x[%i]
%s = add f32 %a, %b
store f32 %y[%r], %s
)");
  EXPECT_GT(passes::estimate_cost(sparse, cpu).global_bytes, 4096.0 * 2 * 64);
}

TEST(CostModel, PricesTranscendentalsAboveAdds) {
  auto unary = [](std::string_view op) {
    return parse_valid(std::string(R"(
%in = param 0 global f32[65536]
%out = param 1 global_mut f32[65536]
%n = const i64 65536
%e = index group 0 %n
%x = load f32 %in[%e]
%y = )") + std::string(op) + R"( f32 %x
store f32 %out[%e], %y
)");
  };
  const auto cpu = passes::cpu_preset();
  EXPECT_GT(passes::estimate_cost(unary("exp"), cpu).compute_ns, 2 * passes::estimate_cost(unary("neg"), cpu).compute_ns);
}

TEST(CostModel, UsesVariableLengthsAndAssumes1024WithoutThem) {
  const auto k = kernels::make_standard_kernel("add-dyn", {.n = 8}).value();
  const auto gpu = passes::gpu_preset();
  const std::int64_t small[] = {0, 0, 0, 1000};
  const std::int64_t large[] = {0, 0, 0, 1000000};
  const std::int64_t assumed[] = {0, 0, 0, 1024};
  EXPECT_LT(total(k.kernel, gpu, small), total(k.kernel, gpu, large));
  EXPECT_EQ(total(k.kernel, gpu), total(k.kernel, gpu, assumed));
  const passes::CostEstimate e = passes::estimate_cost(k.kernel, gpu, large);
  EXPECT_NEAR(e.flops, 1e6, 1);
  EXPECT_GT(e.launch_ns, 0);
}

// A GPU thread loads at most 16 bytes at once: 8 f32 lanes are two 16-byte
// loads strided by 32 bytes across the warp, each touching every sector the
// vectors span. On the H200 the 8-lane f32 row recipes ran 1.2-1.4x slower
// than their 4-lane twins; the model prices the 8-lane add's traffic at
// twice the 4-lane one's, and 8 f16 lanes (16 bytes) like 4 f32 lanes.
TEST(CostModel, CountsVectorsWiderThanSixteenBytesAsStridedPiecesOnAGpu) {
  DeviceInfo gpu = passes::gpu_preset();
  gpu.vector_width_mask |= (1u << 4) | (1u << 8);
  auto traffic = [&](ir::DType dtype, int lanes) {
    const auto k = kernels::make_standard_kernel("add", {.n = 1 << 24}, dtype).value();
    const std::string sequence = "coarsen(axis=0,factor=" + std::to_string(lanes) +
                                 ",mode=0); unroll(loop=0,factor=0); vectorize(lanes=" + std::to_string(lanes) +
                                 "); split_local(axis=0,factor=256)";
    Result<ir::Kernel> lowered = passes::optimize(k.kernel, passes::parse_sequence(sequence).value(), gpu);
    EXPECT_TRUE(lowered.ok()) << sequence;
    return lowered ? passes::estimate_cost(*lowered, gpu).global_bytes : 0.0;
  };
  const double f32_4 = traffic(ir::DType::F32, 4);
  EXPECT_NEAR(f32_4, 3.0 * 4 * (1 << 24), 1);  // two inputs and one output, each byte once
  EXPECT_NEAR(traffic(ir::DType::F32, 8), 2 * f32_4, 1);
  EXPECT_NEAR(traffic(ir::DType::F16, 8), f32_4 / 2, 1);
}

// The global bytes an IF's body moves count in the share of threads and
// iterations that take it, where the condition compares affine indices that
// differ between a group's threads (counted over the indices' values): a
// quarter of a group's threads (lid < 64 of 256), a row's last block
// (k * 256 + lid < 2900 over 12 blocks of 256: 2900 of 3072) and a bounds
// guard over the grid (e < 16776216 of 16777216). A condition the indices do
// not decide (a loaded value), or one the same in all of a group's threads,
// leaves the body taken, as before. On the H200 the tuned softmax f16 rows
// at n = 50257 read a 13th block of 8 in 137 of 512 threads, which had
// counted for all (128 of its 1335 MB).
TEST(CostModel, CountsAGuardedBodysGlobalBytesByTheShareOfThreadsThatTakeIt) {
  const auto gpu = passes::gpu_preset();
  const auto guarded = [](std::string_view condition, std::string_view rows) {
    return parse_valid(std::string(R"(
%in = param 0 global f32[16777216]
%out = param 1 global_mut f32[16777216]
%flag = param 2 global i64[1]
%zero = const i64 0
%c64 = const i64 64
%c256 = const i64 256
%c2900 = const i64 2900
%c65536 = const i64 65536
%c16m = const i64 16776216
%c16384 = const i64 16384
%g = index group 0 %c65536
%l = index local 0 %c256
%base = mul i64 %g, %c256
%e = add i64 %base, %l
)") + std::string(rows) + std::string(condition) + R"(
if %c
  %x = load f32 %in[%i]
  store f32 %out[%i], %x
endif
)" + (rows.empty() ? "" : "endloop %k\n"));
  };
  const auto bytes = [&](std::string_view condition, std::string_view rows = "") {
    return passes::estimate_cost(guarded(condition, rows), gpu).global_bytes;
  };
  const double all = 2.0 * 4 * (1 << 24);  // one load and one store of 4 bytes a thread
  const std::string_view element = "%i = add i64 %e, %zero\n";
  EXPECT_NEAR(bytes(std::string(element) + "%c = cmplt bool %l, %c64\n"), all / 4, 1);
  EXPECT_NEAR(bytes(std::string(element) + "%c = cmpgt bool %c16m, %e\n"), all * 16776216 / 16777216, 1);
  // Twelve blocks of 256 a thread, the last partly past 2900.
  const std::string_view blocks = "%c12 = const i64 12\n%k = loop %c12\n%kb = mul i64 %k, %c256\n";
  EXPECT_NEAR(bytes("%j = add i64 %kb, %l\n%i = add i64 %e, %zero\n%c = cmplt bool %j, %c2900\n", blocks),
              12 * all * 2900 / 3072, 1);
  // The same in all of a group's threads (a quarter of the groups): taken.
  EXPECT_NEAR(bytes(std::string(element) + "%c = cmplt bool %g, %c16384\n"), all, 1);
  // Not decided by the indices: taken (and the flag's load, the same in
  // every thread: one 32-byte sector a group of 256, an eighth of a byte a
  // thread).
  EXPECT_NEAR(bytes(std::string(element) + "%n = load i64 %flag[%zero]\n%c = cmplt bool %l, %n\n"),
              all + (1 << 24) / 8, 1);
}

// A global load whose address is the same in every thread of a group (it
// may differ between groups) moves its sectors once per group, not once per
// warp: the first warp's access misses, the L1 serves the group's other
// warps. On the H200 the tuned softmax f16 rows at n = 50257 (0.76x of add)
// read split_aligned's scalar heads and tails that way in all 512 threads,
// priced at a 32-byte sector a warp (87 MB of its 1185), and the model took
// a kernel that ran at 0.58x. A group of one warp, a load under an IF that
// some of the group's threads take (the group moves it if any does: taken),
// and stores keep a sector a warp.
TEST(CostModel, MovesALoadTheSameInEveryThreadOfAGroupOncePerGroup) {
  const auto gpu = passes::gpu_preset();
  constexpr std::int64_t kThreads = std::int64_t{1} << 24;
  const auto bytes = [&](std::int64_t threads, std::string_view body) {
    return passes::estimate_cost(parse_valid(with_sizes(R"(
%in = param 0 global f32[16777216]
%out = param 1 global_mut f32[16777216]
%groups = const i64 GROUPS
%threads = const i64 THREADS
%c64 = const i64 64
%g = index group 0 %groups
%l = index local 0 %threads
%base = mul i64 %g, %threads
%e = add i64 %base, %l
)" + std::string(body),
                                                         {{"GROUPS", kThreads / threads}, {"THREADS", threads}})),
                                 gpu)
        .global_bytes;
  };
  const double stores = 4.0 * kThreads;  // out[e]: 4 bytes a thread
  const std::string_view same_in_the_group = "%x = load f32 %in[%g]\nstore f32 %out[%e], %x\n";
  // 256 threads: 32 bytes a group (was 32 a warp, 8 warps a group).
  EXPECT_NEAR(bytes(256, same_in_the_group), stores + 32.0 * (kThreads / 256), 1);
  // One warp a group: 32 bytes a group and a warp, as before.
  EXPECT_NEAR(bytes(32, same_in_the_group), stores + 32.0 * (kThreads / 32), 1);
  // Under lid < 64: the stores by their share, the load once a group.
  EXPECT_NEAR(bytes(256, "%c = cmplt bool %l, %c64\nif %c\n" + std::string(same_in_the_group) + "endif\n"),
              stores / 4 + 32.0 * (kThreads / 256), 1);
  // A store to an address the same in the whole group: a sector a warp.
  EXPECT_NEAR(bytes(256, "%x = load f32 %in[%e]\nstore f32 %out[%g], %x\n"), 4.0 * kThreads + 32.0 * (kThreads / 32), 1);
}

// Scalar loads of one buffer a few elements apart in one block (the lanes of
// an unrolled block that vectorize left scalar: rmsnorm's weight after
// split_aligned, whose blocks start where the row's do) touch, warp by warp,
// the sectors the group of them spans together, which the L1 serves after
// the first touch: each is priced at its share. The weight of rmsnorm at
// n = 50257 in blocks of 4 halves was priced 8 bytes an element instead of 2,
// so the untuned pick was a scalar row (0.63x of add on the H100) where the
// aligned blocks ran 0.93x tuned. A load alone keeps its strided price.
TEST(CostModel, PricesAThreadsNeighbouringScalarLoadsAtTheirShareOfTheSectorsTheySpan) {
  const auto gpu = passes::gpu_preset();
  constexpr std::int64_t kThreads = std::int64_t{1} << 20;
  const auto bytes = [&](std::string_view loads) {
    return passes::estimate_cost(parse_valid(R"(
%in = param 0 global f16[4194304]
%out = param 1 global_mut f16[1048576]
%groups = const i64 4096
%threads = const i64 256
%c4 = const i64 4
%g = index group 0 %groups
%l = index local 0 %threads
%base = mul i64 %g, %threads
%e = add i64 %base, %l
%b = mul i64 %e, %c4
)" + std::string(loads) + "store f16 %out[%e], %y\n"),
                                 gpu)
        .global_bytes;
  };
  const double stores = 2.0 * kThreads;
  // Four halves a thread, 8 bytes apart between threads: 256 bytes a warp
  // (8 sectors) for the four loads together, 2 bytes a load and thread.
  const std::string four = R"(%x0 = load f16 %in[%b]
%c1 = const i64 1
%c2 = const i64 2
%c3 = const i64 3
%i1 = add i64 %b, %c1
%i2 = add i64 %b, %c2
%i3 = add i64 %b, %c3
%x1 = load f16 %in[%i1]
%x2 = load f16 %in[%i2]
%x3 = load f16 %in[%i3]
%s0 = add f16 %x0, %x1
%s1 = add f16 %x2, %x3
%y = add f16 %s0, %s1
)";
  EXPECT_NEAR(bytes(four), stores + 4 * 2.0 * kThreads, 1);
  // One of them alone: its 8 sectors a warp, 8 bytes a thread.
  EXPECT_NEAR(bytes("%y = load f16 %in[%b]\n"), stores + 8.0 * kThreads, 1);
}
