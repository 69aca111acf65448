// The dummy's timed launch: simulated (timer MODEL), deterministic with and
// without noise, and ranking obviously better kernel variants better, as a
// real GPU would.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "dummy_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Id = WireBuilder::Id;

// Buffers for a kernel's params (zero-filled, sized from PARAM imm).
struct Buffers {
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<kiln_arg> args;
  Buffers(const AbiPlugin& p, kiln_device* device, const std::vector<kiln_op>& ops) {
    for (const kiln_op& op : ops)
      if (op.kind == KILN_OP_PARAM) {
        owned.push_back(std::make_unique<DeviceBuffer>(p, device, std::vector<float>(op.imm)));
        args.push_back(owned.back()->arg());
      }
  }
};

void show(const char* what, std::uint64_t better, std::uint64_t worse) {
  std::printf("[ model    ] %s: %llu ns vs %llu ns (x%.1f)\n", what, static_cast<unsigned long long>(better),
              static_cast<unsigned long long>(worse), static_cast<double>(worse) / static_cast<double>(better));
}

std::uint64_t time_of(const AbiPlugin& p, const std::vector<kiln_op>& ops) {
  kiln_device* device = p.open(0);
  Buffers buffers(p, device, ops);
  return simulated_ns(p, device, ops, buffers.args);
}

// out[g] = sum of x[g*R .. g*R+R), one thread per row, each iteration reading
// through LOCAL storage (copied once per group by all threads) or straight
// from global memory, R times per thread: the reuse a tiling optimization buys.
std::vector<kiln_op> repeated_reads(bool through_local) {
  const std::int64_t groups = 64, threads = 128, reps = 64;
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, threads);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, groups * threads);
  const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, threads);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id zero = w.const_i64(0);
  const Id t = w.local_index(0, w.const_i64(threads));
  const Id g = w.group_index(0, w.const_i64(groups));
  if (through_local) {
    w.store(KILN_DTYPE_F32, s, t, w.load(KILN_DTYPE_F32, px, t));
    w.barrier();
  }
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0.0f));
  const Id r = w.loop(w.const_i64(reps));
  const Id at = w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, t, r), w.const_i64(threads));
  const Id v = w.load(KILN_DTYPE_F32, through_local ? s : px, at);
  w.store(KILN_DTYPE_F32, acc, zero, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), v));
  w.end_loop(r);
  w.store(KILN_DTYPE_F32, po, w.mad(KILN_DTYPE_I64, g, w.const_i64(threads), t), w.load(KILN_DTYPE_F32, acc, zero));
  return w.ops;
}

}  // namespace

TEST(DummyTiming, SimulatedTimesAreDeterministicWithoutNoise) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  const auto ops = wire_add_grouped(1 << 16, 256);
  Buffers buffers(*plugin, device, ops);
  kiln_program* program = plugin->compile(device, ops);
  const Timed first = launch_timed(*plugin, device, program, ops, buffers.args, 2, 5);
  const Timed second = launch_timed(*plugin, device, program, ops, buffers.args, 0, 3);
  EXPECT_EQ(first.timer, static_cast<std::uint32_t>(KILN_TIMER_MODEL));
  EXPECT_EQ(first.runs, 5u);  // repeats are simulated: one sample each
  EXPECT_EQ(second.runs, 3u);
  EXPECT_GT(first.min_ns, 0u);
  for (std::uint64_t s : first.samples) EXPECT_EQ(s, first.min_ns);
  EXPECT_EQ(first.median_ns, second.median_ns);
  plugin->api().program_release(program);
}

TEST(DummyTiming, NoiseIsSeededAndDeterministic) {
  auto samples = [](const std::string& options) {
    auto plugin = load_dummy(options);
    kiln_device* device = plugin->open(0);
    const auto ops = wire_add_grouped(1 << 16, 256);
    Buffers buffers(*plugin, device, ops);
    kiln_program* program = plugin->compile(device, ops);
    std::vector<std::uint64_t> all;
    for (int launch = 0; launch < 3; ++launch) {
      const Timed t = launch_timed(*plugin, device, program, ops, buffers.args, 1, 8);
      all.insert(all.end(), t.samples.begin(), t.samples.end());
    }
    plugin->api().program_release(program);
    return all;
  };
  const auto a = samples(R"({"noise": 0.05, "seed": 1})");
  const auto b = samples(R"({"noise": 0.05, "seed": 1})");
  const auto c = samples(R"({"noise": 0.05, "seed": 2})");
  const auto quiet = samples(R"({"seed": 1})");
  EXPECT_EQ(a, b);  // same seed, kernel and run indices: same samples
  EXPECT_NE(a, c);
  EXPECT_GT(std::set<std::uint64_t>(a.begin(), a.end()).size(), 20u);  // every sample differs
  double mean = 0;
  for (std::uint64_t s : a) mean += static_cast<double>(s) / a.size();
  EXPECT_NEAR(mean / quiet[0], 1.0, 0.05);  // centred on the noiseless time
}

// Ranking tests leave out the launch overhead, which would blur small kernels.
constexpr const char* kNoOverhead = R"({"simulate": [{"launch_overhead_ns": 0}]})";

TEST(DummyTiming, CoalescedAccessBeatsStridedAccess) {
  auto plugin = load_dummy(kNoOverhead);
  const std::uint64_t coalesced = time_of(*plugin, wire_strided_copy(256, 256, 1));
  const std::uint64_t strided = time_of(*plugin, wire_strided_copy(256, 256, 16));
  show("stride 1 vs stride 16", coalesced, strided);
  EXPECT_LT(coalesced * 3, strided) << coalesced << " vs " << strided;
}

TEST(DummyTiming, ManyThreadsPerGroupBeatOneThreadPerGroup) {
  auto plugin = load_dummy(kNoOverhead);
  const std::int64_t n = 1 << 18;
  const std::uint64_t one = time_of(*plugin, wire_add_grouped(n, 1));
  const std::uint64_t many = time_of(*plugin, wire_add_grouped(n, 256));
  show("256 vs 1 thread per group", many, one);
  EXPECT_LT(many * 3, one) << many << " vs " << one;
}

TEST(DummyTiming, VectorAccessesIssueFewerInstructions) {
  // A compute-bound device (little issue rate, ample bandwidth): the 4-lane
  // version issues a quarter of the load/store instructions.
  auto plugin = load_dummy(R"({"simulate": [{"launch_overhead_ns": 0, "peak_gflops": 50,
                                            "memory_bandwidth_gbps": 100000}]})");
  const std::int64_t n = 1 << 18;
  const std::uint64_t scalar = time_of(*plugin, wire_add_grouped(n, 64, 1));
  const std::uint64_t vector = time_of(*plugin, wire_add_grouped(n, 64, 4));
  show("4-lane vs scalar accesses (compute-bound device)", vector, scalar);
  EXPECT_LT(vector * 3, scalar * 2) << vector << " vs " << scalar;
}

TEST(DummyTiming, TinyLaunchesCostTheLaunchOverhead) {
  auto plugin = load_dummy(R"({"simulate": [{"launch_overhead_ns": 4000}]})");
  const std::uint64_t tiny = time_of(*plugin, wire_add_grouped(64, 64));
  EXPECT_GE(tiny, 4000u);
  EXPECT_LT(tiny, 4000u + 1000u);
}

TEST(DummyTiming, ReuseThroughLocalStorageBeatsRepeatedGlobalReads) {
  auto plugin = load_dummy(kNoOverhead);
  const std::uint64_t local = time_of(*plugin, repeated_reads(true));
  const std::uint64_t global = time_of(*plugin, repeated_reads(false));
  show("reads through LOCAL vs repeated global reads", local, global);
  EXPECT_LT(local, global) << local << " vs " << global;
}

TEST(DummyTiming, LocalMemoryLimitsOccupancy) {
  // The same tree reduction, with a device whose LOCAL memory per unit fits
  // one group at a time, is slower than with room for many.
  const auto ops = wire_tree_sum(512, 64);
  auto roomy = load_dummy(R"({"simulate": [{"local_memory_per_unit": 65536}]})");
  const std::uint64_t many_groups = time_of(*roomy, ops);
  roomy.reset();
  auto tight = load_dummy(R"({"simulate": [{"local_memory_per_unit": 256}]})");
  const std::uint64_t one_group = time_of(*tight, ops);
  show("LOCAL memory for many groups per unit vs one", many_groups, one_group);
  EXPECT_LT(many_groups, one_group) << many_groups << " vs " << one_group;
}

TEST(DummyTiming, AbortStopsAfterASlowRun) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  const auto ops = wire_add_grouped(1 << 16, 256);
  Buffers buffers(*plugin, device, ops);
  kiln_program* program = plugin->compile(device, ops);
  kiln_timed_launch_args a{};
  a.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(ops, device, program, buffers.args);
  a.launch = kiln::sdk::launch_args_1_0(launch);
  a.launch_args = &launch;
  a.repeats = 10;
  a.abort_ns = 1;  // every simulated run is longer
  check(plugin->api().launch_timed(&a));
  EXPECT_EQ(a.runs, 1u);
  EXPECT_EQ(a.aborted, 1u);
  plugin->api().program_release(program);
}
