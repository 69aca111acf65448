// row_cache(loop): the loop-th LOOP (the producer) keeps what it loads from
// read-only buffers, and the float values it computes, in a REGISTER array;
// the later LOOPs of the same block and trip count (consumers) that load or
// compute the same values read the array instead. Softmax reads its row in
// three loops (max, sum of exp, write) and computes exp(x - max) in two:
// with the sum loop's exp cached for the writing loop (row_cache(loop=1))
// and the max loop's row for the sum loop (row_cache(loop=0)), memory sees
// each element once and each exp is computed once; on a GPU, after
// tiled_reduce, each thread caches its share of the row.
//
//   producer:  v = f(x[g(j)])          ->  v = f(x[g(j)])
//                                          store cache[j * S + q], v
//   consumer:  w = f(x[g(j')])         ->  w = load cache[j' * S + q]
//
// q numbers the cached values of the producer's body (S of them, counted in
// elements: each value's lanes). A consumer value is replaced only when it
// is *equivalent* to producer value q (loop_equivalence.hpp: the same
// expression with the producer's counter renamed to the consumer's, loads
// of read-only buffers at equivalent indices), and so is the condition of
// every IF between it and its loop; only the largest such expressions (with
// a user that is not matched) are read from the array. The two loops have
// the same trip count (one SSA value), run in the same thread, and GLOBAL
// buffers are read-only for a launch (kernel_ir.h), so the consumer reads
// exactly the value the producer had at the same counter: the rewrite is
// exact, and a value under conditions the producer's did not share is
// recomputed as before. Integer (index) arithmetic is never cached.
//
// Composes with tiled_reduce (run it first: the producer and consumers are
// then the per-thread loops over the thread's share, guards included),
// lane_reduce (the producer's values are its copies), and unroll and
// vectorize after it: fully unrolled loops give the array constant indices
// (registers on a GPU), consecutive cached values consecutive slots, which
// vectorize groups into vector stores and loads. On a GPU a 16-bit row
// whose floats would fill the thread's registers is kept as loaded (plan()).
// computed=1 keeps no loaded value, only what the loop computes from them
// (for a CPU, whose caches still hold the row: cacheable()).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "loop_equivalence.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <map>
#include <set>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "row_cache";
// A CPU keeps REGISTER arrays on the thread's stack (in L1/L2); a device
// with threads per group must hold them in its registers.
constexpr std::uint64_t kMaxCpuCacheBytes = 256 * 1024;

struct Plan {
  ValueId producer = ir::kNoValue;
  std::vector<ValueId> cached;                 // producer values, in order (q)
  std::vector<std::int64_t> offsets;           // slot offset of each, in elements
  std::int64_t stride = 0;                     // S
  std::int64_t count = 0;                      // trip count
  ir::DType dtype = ir::DType::Invalid;
  std::map<ValueId, std::size_t> replaced;     // consumer value -> q
  std::map<ValueId, ValueId> consumer_loop;    // consumer value -> its LOOP
  // local=1: the array is LOCAL storage, `threads` slots per element, the
  // thread's own at `thread` (its LOCAL index): nothing shared, no barrier.
  bool local = false;
  ValueId thread = ir::kNoValue;
  std::int64_t threads = 1;
};

// The IFs between `id` and `loop`, innermost first; nullopt when an inner
// LOOP lies between them (its iterations would need slots of their own).
std::optional<std::vector<ValueId>> guards(const Kernel& kernel, const ir::Blocks& blocks, ValueId id, ValueId loop) {
  std::vector<ValueId> ifs;
  for (ValueId p = blocks.parent[id]; p != loop; p = blocks.parent[p]) {
    if (p == ir::kNoValue || kernel[p].kind != OpKind::If) return std::nullopt;
    ifs.push_back(p);
  }
  return ifs;
}

// keep_bits: a 16-bit row is kept as loaded and widened again where it is
// read (a conversion is cheap). In LOCAL storage (local=1) always: bytes are
// what is scarce, a LOCAL array of f32 would hold half the rows per SM. In
// a GPU's registers when the floats would take more than half of a
// thread's share of the register file (plan()).
// keep_loads: loads themselves are kept, not only what is computed from
// them. computed=1 keeps only computed values: on a CPU the row a loop
// loaded is still in L1/L2 when the next loop reads it again (the array is
// at most kMaxCpuCacheBytes), so a stack copy of it only adds a store and a
// load per element, while a 16-bit row's widened floats save a conversion.
// softmax 4096 x 16384 on c:0 (2026-12-06, its tuning's medians), the max
// loop's values kept for the sum loop: f32 21.0 ms against 15.1 without
// (nothing converted: computed=1 does not apply), f16 10.8 against 12.2.
bool cacheable(const Kernel& kernel, const ir::Op& op, bool keep_bits, bool keep_loads) {
  if (read_only_load(kernel, op)) return keep_loads;
  switch (op.kind) {
    case OpKind::Cast:
      return ir::is_float(op.dtype) && !keep_bits;
    case OpKind::Unary: case OpKind::Binary: case OpKind::Mad: case OpKind::Select:
      return ir::is_float(op.dtype);
    default: return false;
  }
}

std::variant<Plan, std::string> plan(const Kernel& kernel, const ir::Blocks& blocks, ValueId producer,
                                     const DeviceInfo& device, bool local, bool keep_bits, bool keep_loads) {
  Plan p;
  p.producer = producer;
  if (local) {
    if (device.max_local_threads <= 1) return std::string("local=1 needs threads per group (LOCAL storage)");
    const auto axis = single_local_axis(kernel);
    if (!axis) return std::string("local=1 needs exactly one LOCAL axis (0) of constant length: tiled_reduce's threads");
    p.local = true;
    p.thread = axis->first;
    p.threads = axis->second;
    // The index must be in scope where the producer and consumers run.
    if (p.thread > producer) return std::string("the LOCAL index is defined after the loop");
  }
  const ir::Op& loop = kernel[producer];
  const auto count = ir::constant_int(kernel, loop.src[0]);
  if (!count || *count < 1) return std::string("the loop's trip count is not a positive constant (the cache needs a size)");
  p.count = *count;
  // Consumers: later LOOPs in the same block with the same trip count.
  std::vector<ValueId> consumers;
  for (ValueId id = blocks.end[producer] + 1; id < kernel.size(); ++id) {
    if (blocks.parent[id] != blocks.parent[producer]) {
      if (blocks.parent[producer] != ir::kNoValue && id >= blocks.end[blocks.parent[producer]]) break;
      continue;
    }
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Loop &&
        (op.src[0] == loop.src[0] || ir::constant_int(kernel, op.src[0]) == count))
      consumers.push_back(id);
  }
  // Candidates: what the producer loads from read-only buffers, and the
  // float values it computes (exp(x - max) in softmax's sum loop is what its
  // writing loop recomputes). Index arithmetic (integers) is cheaper to
  // recompute than to keep.
  std::vector<std::vector<ValueId>> producer_guards;
  std::vector<ValueId> candidates;
  for (ValueId id = producer + 1; id < blocks.end[producer]; ++id) {
    if (!cacheable(kernel, kernel[id], keep_bits, keep_loads)) continue;
    auto g = guards(kernel, blocks, id, producer);
    if (!g) continue;
    candidates.push_back(id);
    producer_guards.push_back(*g);
  }
  std::vector<bool> used(candidates.size(), false);
  for (ValueId consumer : consumers) {
    LoopEquivalence same(kernel, blocks, producer, consumer);
    std::map<ValueId, std::size_t> matched;  // consumer op -> candidate
    for (ValueId id = consumer + 1; id < blocks.end[consumer]; ++id) {
      const ir::Op& op = kernel[id];
      if (!cacheable(kernel, op, keep_bits, keep_loads)) continue;
      const auto g = guards(kernel, blocks, id, consumer);
      if (!g) continue;
      for (std::size_t q = 0; q < candidates.size(); ++q) {
        if (g->size() != producer_guards[q].size() || !same(candidates[q], id)) continue;
        bool match = true;
        for (std::size_t k = 0; match && k < g->size(); ++k)
          match = same(kernel[producer_guards[q][k]].src[0], kernel[(*g)[k]].src[0]);
        if (!match) continue;
        matched[id] = q;
        break;
      }
    }
    // Only the largest matched expressions are read from the cache: those
    // with a user in the consumer that is not matched itself (their operands
    // then go with DCE).
    // In the LOCAL form a conversion is not cached: a CAST whose every user
    // is matched goes with them (softmax's writing loop reads the sum loop's
    // exponentials, not the 16-bit row they were computed from).
    std::set<ValueId> dropped_casts;
    if (keep_bits)
      for (ValueId user = blocks.end[consumer] - 1; user > consumer; --user) {
        if (kernel[user].kind != OpKind::Cast || matched.count(user)) continue;
        bool all_matched = true, any = false;
        for (ValueId later = user + 1; all_matched && later < blocks.end[consumer]; ++later)
          for (ValueId operand : kernel[later].operands())
            if (operand == user) {
              any = true;
              all_matched = all_matched && (matched.count(later) || dropped_casts.count(later));
            }
        if (any && all_matched) dropped_casts.insert(user);
      }
    for (ValueId user = consumer + 1; user < blocks.end[consumer]; ++user) {
      if (matched.count(user) || dropped_casts.count(user)) continue;
      for (ValueId operand : kernel[user].operands()) {
        auto m = matched.find(operand);
        if (m == matched.end() || p.replaced.count(operand)) continue;
        used[m->second] = true;
        p.replaced[operand] = m->second;
        p.consumer_loop[operand] = consumer;
      }
    }
  }
  // Slots for the loads some consumer reads again, in program order.
  std::vector<std::size_t> slot_of(candidates.size(), SIZE_MAX);
  for (std::size_t q = 0; q < candidates.size(); ++q) {
    if (!used[q]) continue;
    const ir::Op& op = kernel[candidates[q]];
    if (p.dtype == ir::DType::Invalid) p.dtype = op.dtype;
    if (op.dtype != p.dtype) return std::string("the reused values have different dtypes");
    if (!p.cached.empty() && op.lanes != kernel[p.cached.front()].lanes)
      return std::string("the reused values have different vector widths");
    slot_of[q] = p.cached.size();
    p.cached.push_back(candidates[q]);
    p.offsets.push_back(p.stride);
    p.stride += op.lanes;
  }
  if (p.cached.empty())
    return std::string(keep_loads ? "no later LOOP of the same trip count loads or computes what this loop does"
                                  : "no later LOOP of the same trip count computes what this loop does (computed=1 "
                                    "keeps no loaded value)");
  for (auto& [load, q] : p.replaced) q = slot_of[q];
  if (p.local) {
    // Against the group's LOCAL memory: this array (every thread's share)
    // and the LOCAL storage the kernel has already (tree partials, an
    // earlier row_cache's array).
    const std::uint64_t array = static_cast<std::uint64_t>(p.count * p.stride * p.threads) * ir::dtype_bytes(p.dtype);
    if (auto why = local_memory_refusal(kernel, array, device, "the cache")) return *why;
    return p;
  }
  // Against the limit: this array and the REGISTER storage the kernel has
  // already (accumulators, an earlier row_cache's array).
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(p.count * p.stride) * ir::dtype_bytes(p.dtype) + storage_bytes(kernel, ir::Scope::Register);
  const std::uint64_t limit = device.max_local_threads > 1 ? device.register_bytes : kMaxCpuCacheBytes;
  if (bytes > limit)
    return "the cache would make " + std::to_string(bytes) + " bytes of REGISTER storage per thread, more than the " +
           std::to_string(limit) + " a thread may keep";
  return p;
}

// The plan for row_cache(loop, local): LOCAL keeps 16-bit rows as loaded; in
// registers the floats, unless on a GPU (threads per group: the array is
// the thread's registers) they would take more than half of its share of
// the register file at the kernel's group size and the row as loaded takes
// less (a whole f16 row of 50257 at 1024 threads: 7 blocks of 8, 56 floats
// in 224 of 256 bytes, spilling; as loaded 28 registers).
std::variant<Plan, std::string> plan(const Kernel& kernel, const ir::Blocks& blocks, ValueId producer,
                                     const DeviceInfo& device, bool local, bool computed = false) {
  if (local) return plan(kernel, blocks, producer, device, true, true, !computed);
  auto floats = plan(kernel, blocks, producer, device, false, false, !computed);
  if (device.max_local_threads <= 1 || device.register_bytes == 0) return floats;
  const auto axis = single_local_axis(kernel);
  const std::uint64_t threads = axis && axis->second > 0 ? static_cast<std::uint64_t>(axis->second) : 1;
  const std::uint64_t share = device.register_bytes * device.max_local_threads / threads;
  const auto* p = std::get_if<Plan>(&floats);
  const auto array_bytes = [](const Plan& q) {
    return static_cast<std::uint64_t>(q.count * q.stride) * ir::dtype_bytes(q.dtype);
  };
  if (p != nullptr && 2 * array_bytes(*p) <= share) return floats;
  auto bits = plan(kernel, blocks, producer, device, false, true, !computed);
  const auto* b = std::get_if<Plan>(&bits);
  if (b == nullptr || (p != nullptr && array_bytes(*b) >= array_bytes(*p))) return floats;
  return bits;
}

class RowCache final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "keeps what a LOOP loads from read-only buffers (computed=1: only what it computes from them) in a "
           "REGISTER array; later LOOPs of the same trip count that load the same elements read the array instead "
           "(exact)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number) {
      if (std::holds_alternative<Plan>(plan(kernel, blocks, loops[number], device, false)))
        steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}}));
      if (std::holds_alternative<Plan>(plan(kernel, blocks, loops[number], device, true)))
        steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"local", 1}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(known_params(step, {"loop", "local", "computed"}));
    KILN_TRY_ASSIGN(const std::int64_t loop_number, require_param(step, "loop"));
    const std::int64_t local = step.param("local", 0);
    if (local != 0 && local != 1) return step_error(step, "local must be 0 (REGISTER) or 1 (LOCAL)");
    const std::int64_t computed = step.param("computed", 0);
    if (computed != 0 && computed != 1)
      return step_error(step, "computed must be 0 (loads and computed values) or 1 (computed values only)");
    const std::vector<std::int64_t> params = {loop_number};
    KILN_TRY_ASSIGN(const auto site, step_loop(step, kernel, params[0]));
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    auto planned = plan(kernel, blocks, site.loop, device, local == 1, computed == 1);
    if (std::holds_alternative<std::string>(planned)) return step_error(step, std::get<std::string>(planned));
    const Plan& p = std::get<Plan>(planned);

    std::map<ValueId, std::size_t> producer_slot;
    for (std::size_t q = 0; q < p.cached.size(); ++q) producer_slot[p.cached[q]] = q;
    ValueId first_op = 0;
    while (first_op < kernel.size() && kernel[first_op].kind == OpKind::Param) ++first_op;
    Value cache;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      // STORAGE outside every LOOP and IF: in front of the first non-PARAM op.
      if (id == first_op)
        cache = b.storage(p.local ? ir::Scope::Local : ir::Scope::Register, p.dtype,
                          static_cast<std::uint64_t>(p.count * p.stride * p.threads));
      // REGISTER: j * S + q. LOCAL: the S values of a thread's iteration j
      // consecutive (one vector access after vectorize), the threads' runs
      // side by side: (j * T + t) * S + q.
      const auto slot = [&](ValueId loop, std::size_t q) {
        Value row = rw.map(loop);
        if (p.local) row = b.add(b.mul(row, b.constant_i64(p.threads)), rw.map(p.thread));
        return b.add(b.mul(row, b.constant_i64(p.stride)), b.constant_i64(p.offsets[q]));
      };
      if (auto produced = producer_slot.find(id); produced != producer_slot.end()) {
        const Value v = rw.copy(id);
        b.store(cache, slot(p.producer, produced->second), v);
        return true;
      }
      if (auto consumed = p.replaced.find(id); consumed != p.replaced.end()) {
        rw.replace(id, b.load(cache, slot(p.consumer_loop.at(id), consumed->second), kernel[id].lanes));
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& row_cache() {
  static const RowCache instance;
  return instance;
}

}  // namespace kiln::passes::opts
