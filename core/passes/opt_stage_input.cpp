// stage_input(param): every group copies the read-only GLOBAL param of slot
// `param` whole into LOCAL storage at its start, its threads sharing the
// copy in chunks of 16 bytes (or the device's widest vector under that),
// and every LOAD of that param reads the copy; a
// BARRIER before the first of those loads makes the copy the group's.
//
//   start:  for each round r < K = ceil(C / T) of thread t, c = t + r * T:
//             store S[c * L], load P[c * L]        (L lanes; C = E / L)
//           (the last round, when T does not divide C: select(c < C,
//           load P[min(c, C - 1) * L], 0): chunks past the end are zeros
//           in S's padding, every thread's chunks its own)
//           tail = load P[min(C * L + t, E - 1)]   (the E % L elements left)
//   ...
//           barrier; if t < E % L: store S[C * L + t], tail; barrier
//   uses:   load P[i]  ->  load S[i]
//
// Why: rmsnorm's weights are one row's worth of bytes that every group
// reads in its writing loop. Read from global memory there, each thread waits
// for them (an L2 round trip under the load of the whole GPU) with nothing
// left to overlap: its row is already loaded and its stores go out without
// waiting. Copied at the start, they travel with the row's loads, and with
// `async_copies` after this step (the chunks become copies that nothing
// waits for until the first barrier; the zero-filled ones cp.async's
// zero-filling form) through no registers. Every thread copies the same
// number of chunks as straight code, so that they are one run of copies.
//
// Legal: a read-only param is not written by any op of the launch, so the
// copy holds what the loads would have read; the copy's elements are
// written before the barriers and read only after them, by any thread. The
// tail is loaded at the start (its index clamped, so every thread's load is
// in bounds) and stored between two barriers, so that no store of it meets a
// copy still in flight. Vector loads of the param at any element index
// (KILN_ACCESS_UNALIGNED) become one LOCAL load a lane where the device
// reads vectors at any index from params only (the CUDA plugin), and stay
// vectors where it claims them everywhere.
//
// Needs threads per group (one LOCAL axis of constant length: tiled_reduce's
// threads) and LOCAL memory for the copy beside what the kernel has; refused
// where the first load of the param comes before the LOCAL index, and where
// a thread would copy more than kMaxChunksPerThread chunks (straight code).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <string>
#include <variant>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "stage_input";
constexpr std::int64_t kMaxChunksPerThread = 64;

struct Plan {
  ValueId param = ir::kNoValue;
  ir::DType dtype = ir::DType::Invalid;
  std::int64_t elements = 0;       // E
  std::int64_t lanes = 0;          // L: a chunk (16 bytes, or the widest vector under)
  std::int64_t chunks = 0;         // C = E / L whole chunks
  std::int64_t rounds = 0;         // K = ceil(C / T) chunks a thread
  std::int64_t storage = 0;        // S's elements: K * T chunks, and the tail
  ValueId thread = ir::kNoValue;   // the LOCAL index
  std::int64_t threads = 0;        // T
  ValueId barrier_before = ir::kNoValue;  // the top-level op holding the first load
  std::vector<ValueId> loads;
};

// The param op of slot `slot`, if it is a read-only GLOBAL buffer.
std::optional<ValueId> read_only_param(const Kernel& kernel, std::int64_t slot) {
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Param && static_cast<std::int64_t>(op.attr) == slot)
      return op.param_kind() == ir::ParamKind::Global ? std::optional<ValueId>(id) : std::nullopt;
  }
  return std::nullopt;
}

std::variant<Plan, std::string> plan(const Kernel& kernel, std::int64_t slot, const DeviceInfo& device) {
  if (device.max_local_threads <= 1) return std::string("needs threads per group (LOCAL storage shared by a group)");
  const auto axis = single_local_axis(kernel);
  if (!axis) return std::string("needs exactly one LOCAL axis (0) of constant length: tiled_reduce's threads");
  const auto param = read_only_param(kernel, slot);
  if (!param) return "param " + std::to_string(slot) + " is not a read-only (global) buffer of the kernel";
  Plan p;
  p.param = *param;
  p.dtype = kernel[p.param].dtype;
  p.elements = static_cast<std::int64_t>(kernel[p.param].imm);
  const auto bytes = static_cast<std::int64_t>(ir::dtype_bytes(p.dtype));
  if (bytes < 1 || 16 % bytes != 0) return std::string("the param's elements do not divide a 16-byte chunk");
  // A chunk: 16 bytes where the device has such vectors (what async_copies
  // copies), else its widest vector under that (Vulkan's GLSL: 4 lanes).
  p.lanes = 1;
  for (std::uint32_t width : device.vector_widths())
    if (width * bytes <= 16 && 16 % (width * bytes) == 0) p.lanes = std::max<std::int64_t>(p.lanes, width);
  p.chunks = p.elements / p.lanes;
  p.thread = axis->first;
  p.threads = axis->second;
  p.rounds = (p.chunks + p.threads - 1) / p.threads;
  if (p.rounds > kMaxChunksPerThread)
    return "each thread would copy more than " + std::to_string(kMaxChunksPerThread) + " chunks";
  p.storage = std::max(p.rounds * p.threads * p.lanes, (p.elements + p.lanes - 1) / p.lanes * p.lanes);
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  for (ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == OpKind::Load && kernel[id].src[0] == p.param) p.loads.push_back(id);
  if (p.loads.empty()) return std::string("the kernel loads nothing from the param");
  ValueId top = p.loads.front();
  while (blocks.parent[top] != ir::kNoValue) top = blocks.parent[top];
  p.barrier_before = top;
  if (blocks.parent[p.thread] != ir::kNoValue || p.thread >= top)
    return std::string("the param is read before the LOCAL index is defined at the kernel's top level");
  const std::uint64_t array = static_cast<std::uint64_t>(p.storage) * static_cast<std::uint64_t>(bytes);
  if (auto why = local_memory_refusal(kernel, array, device, "the copy")) return *why;
  return p;
}

class StageInput final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "each group copies a read-only param whole into LOCAL memory at its start (16-byte chunks shared by its "
           "threads) and reads it there after a barrier (exact)";
  }

  // Params smaller than the kernel's largest buffer (what every group
  // reads whole, as rmsnorm's weights, rather than its own part of).
  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel) || device.max_local_threads <= 1) return steps;
    std::uint64_t largest = 0;
    for (const ir::Op& op : kernel.ops)
      if (op.kind == OpKind::Param && op.is_memory()) largest = std::max(largest, op.imm);
    for (const ir::Op& op : kernel.ops) {
      if (op.kind != OpKind::Param || op.param_kind() != ir::ParamKind::Global || op.imm >= largest) continue;
      const auto slot = static_cast<std::int64_t>(op.attr);
      if (std::holds_alternative<Plan>(plan(kernel, slot, device))) steps.push_back(make_step(kName, {{"param", slot}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(known_params(step, {"param"}));
    KILN_TRY_ASSIGN(const std::int64_t slot, require_param(step, "param"));
    auto planned = plan(kernel, slot, device);
    if (std::holds_alternative<std::string>(planned)) return step_error(step, std::get<std::string>(planned));
    const Plan& p = std::get<Plan>(planned);
    const bool unaligned_everywhere = device.has_feature(KILN_FEATURE_UNALIGNED_VECTORS);
    const std::int64_t tail = p.elements - p.chunks * p.lanes;
    std::vector<bool> is_load(kernel.size(), false);
    for (ValueId id : p.loads) is_load[id] = true;
    ValueId first_op = 0;
    while (first_op < kernel.size() && kernel[first_op].kind == OpKind::Param) ++first_op;
    Value copy, tail_value;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == first_op)
        copy = b.storage(ir::Scope::Local, p.dtype, static_cast<std::uint64_t>(p.storage));
      if (id == p.thread) {
        const Value t = rw.copy(id);
        const Value param = rw.map(p.param);
        const auto lanes = static_cast<std::uint8_t>(p.lanes);
        for (std::int64_t round = 0; round < p.rounds; ++round) {
          const Value c = b.add(t, b.constant_i64(round * p.threads));
          const Value at = b.mul(c, b.constant_i64(p.lanes));
          if ((round + 1) * p.threads <= p.chunks) {
            b.store(copy, at, b.load(param, at, lanes));
            continue;
          }
          const Value last = b.constant_i64(p.chunks - 1);
          const Value source = b.load(param, b.mul(b.min(c, last), b.constant_i64(p.lanes)), lanes);
          const Value zeros = b.broadcast(b.constant_bits(p.dtype, 0), lanes);
          b.store(copy, at, b.select(b.cmplt(c, b.constant_i64(p.chunks)), source, zeros));
        }
        if (tail > 0)
          tail_value = b.load(param, b.min(b.add(t, b.constant_i64(p.chunks * p.lanes)), b.constant_i64(p.elements - 1)));
        return true;
      }
      if (id == p.barrier_before) {
        b.barrier();
        if (tail > 0) {
          const Value t = rw.map(p.thread);
          b.if_then(b.cmplt(t, b.constant_i64(tail)),
                    [&] { b.store(copy, b.add(t, b.constant_i64(p.chunks * p.lanes)), tail_value); });
          b.barrier();
        }
      }
      if (is_load[id]) {
        const ir::Op& load = kernel[id];
        const Value index = rw.map(load.src[1]);
        if (load.lanes == 1 || load.attr == 0 || unaligned_everywhere) {
          ir::Op op = load;  // the same access (lanes, alignment attr), of the copy
          op.src[0] = copy.id;
          op.src[1] = index.id;
          rw.replace(id, b.append(op));
        } else {
          Value v = b.broadcast(b.load(copy, index), load.lanes);
          for (std::uint32_t lane = 1; lane < load.lanes; ++lane)
            v = b.insert(v, b.load(copy, b.add(index, b.constant_i64(lane))), lane);
          rw.replace(id, v);
        }
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& stage_input() {
  static const StageInput instance;
  return instance;
}

}  // namespace kiln::passes::opts
