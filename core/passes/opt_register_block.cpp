// register_block(loop, tm, tn, unroll): an output tile per thread. Each
// thread computes tm x tn of the old threads (GROUP axis 1 coarsened by tm,
// axis 0 by tn: n is the fastest axis, the direction vectorize turns into
// vectors; the standard matmul has its rows on axis 1, columns on axis 0)
// in one instruction stream, with the REGISTER accumulators of
// LOOP `loop` widened to a tm x tn tile, so an element loaded along one axis
// is reused by every copy along the other (matmul: per k, tm loads of A, tn
// of B, tm x tn multiply-adds); the loop is also unrolled `unroll` times.
// Exact: each old thread's ops keep their order (see opt_register_block_jam.hpp).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/ir/dtype.hpp"
#include "opt_register_block_jam.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <algorithm>
#include <tuple>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "register_block";
constexpr std::uint64_t kMaxOps = 1u << 20;  // the interpreter's limit (InterpreterLimits::max_kernel_ops)

// The REGISTER storages LOOP `loop` both reads and writes: its accumulators.
std::vector<ValueId> loop_accumulators(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
  std::vector<bool> loaded(kernel.size(), false), stored(kernel.size(), false);
  for (ValueId id = loop + 1; id < blocks.end[loop] && id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Load && op.kind != OpKind::Store) continue;
    const ValueId memory = op.src[0];
    if (memory >= kernel.size() || kernel[memory].kind != OpKind::Storage || kernel[memory].scope() != ir::Scope::Register)
      continue;
    (op.kind == OpKind::Load ? loaded : stored)[memory] = true;
  }
  std::vector<ValueId> found;
  for (ValueId id = 0; id < kernel.size(); ++id)
    if (loaded[id] && stored[id]) found.push_back(id);
  return found;
}

// The GROUP axis of each side of the tile: m (tm copies) on axis 1, n (tn
// copies) on axis 0.
constexpr std::array<std::uint32_t, 2> kGroupAxis = {1, 0};

// What a step acts on, checked.
struct Target {
  std::array<ValueId, 2> axes{};          // INDEX ops of m and n
  std::array<std::int64_t, 2> lengths{};  // their lengths
  ValueId loop = ir::kNoValue;
  std::optional<std::int64_t> trip_count;
};

Result<Target> find_target(const Kernel& kernel, const OptStep& step, std::int64_t loop_number) {
  Target t;
  for (std::uint32_t axis = 0; axis < 2; ++axis) {
    const auto index = find_index(kernel, ir::Scope::Group, axis);
    if (!index) return step_error(step, "the kernel has no GROUP index on axis " + std::to_string(axis));
    const auto length = ir::constant_int(kernel, kernel[*index].src[0]);
    if (!length) return step_error(step, "GROUP axis " + std::to_string(axis) + " has a dynamic length");
    const std::size_t side = axis == kGroupAxis[0] ? 0 : 1;
    t.axes[side] = *index;
    t.lengths[side] = *length;
  }
  const std::vector<ValueId> loops = loops_in_order(kernel);
  if (loop_number < 0 || loop_number >= static_cast<std::int64_t>(loops.size()))
    return step_error(step, "loop=" + std::to_string(loop_number) + " does not exist (the kernel has " +
                                std::to_string(loops.size()) + " LOOPs)");
  t.loop = loops[static_cast<std::size_t>(loop_number)];
  t.trip_count = ir::constant_int(kernel, kernel[t.loop].src[0]);
  return t;
}

class RegisterBlock final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "output tile per thread: GROUP axes 1 and 0 coarsened by tm and tn with the reduction LOOP's REGISTER "
           "accumulators widened to a tm x tn tile (loads shared along each axis), the loop unrolled";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!ir::verify(kernel).ok()) return {};  // only valid kernels have variants
    std::vector<OptStep> steps;
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number) {
      const OptStep probe = make_step(kName, {{"loop", static_cast<std::int64_t>(number)}});
      const Result<Target> target = find_target(kernel, probe, static_cast<std::int64_t>(number));
      if (!target.ok() || loop_accumulators(kernel, blocks, target->loop).empty()) continue;
      const std::uint64_t tile_bytes = accumulator_bytes(kernel, blocks, target->axes, target->loop);
      if (tile_bytes == 0) continue;  // nothing accumulates per thread: not a tile
      std::vector<OptStep> found;
      for (std::int64_t tm : {8, 4, 2, 1})
        for (std::int64_t tn : {32, 16, 8, 4, 2, 1}) {
          if (target->lengths[0] % tm != 0 || target->lengths[1] % tn != 0) continue;
          // The tile's accumulators may take half the registers; loaded values need the rest.
          const std::uint64_t budget = device.register_bytes == 0 ? 1024 : device.register_bytes;
          if (tile_bytes * static_cast<std::uint64_t>(tm * tn) > budget / 2) continue;
          const jam::Jammer jammer(kernel, target->axes, {static_cast<std::uint32_t>(tm), static_cast<std::uint32_t>(tn)});
          if (!fits(jammer, device)) continue;
          for (std::int64_t unroll : {1, 2, 4, 8}) {
            if (unroll > 1 && (!target->trip_count || *target->trip_count % unroll != 0)) continue;
            if (tm * tn * unroll == 1) continue;
            found.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"tm", tm}, {"tn", tn},
                                              {"unroll", unroll}}));
          }
        }
      // Most promising first: bigger tiles (more reuse); then, on a CPU, wide
      // along n (the direction vectorize turns into vector registers), on a
      // GPU square (fewest loads per tile); then less unrolling.
      const bool one_thread_groups = device.max_local_threads <= 1;
      std::stable_sort(found.begin(), found.end(), [&](const OptStep& a, const OptStep& b) {
        const auto key = [&](const OptStep& s) {
          const std::int64_t tm = s.param("tm"), tn = s.param("tn");
          return std::make_tuple(-tm * tn, one_thread_groups ? -tn : tm + tn, s.param("unroll"));
        };
        return key(a) < key(b);
      });
      steps.insert(steps.end(), found.begin(), found.end());
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    if (Result<void> valid = ir::verify(kernel); !valid.ok())
      return step_error(step, "the kernel does not verify: " + valid.error().message);
    KILN_TRY_ASSIGN(const std::int64_t loop_number, require_param(step, "loop"));
    KILN_TRY_ASSIGN(const std::int64_t tm, require_param(step, "tm"));
    KILN_TRY_ASSIGN(const std::int64_t tn, require_param(step, "tn"));
    const std::int64_t unroll = step.param("unroll", 1);
    for (const auto& [key, value] : {std::pair<const char*, std::int64_t>{"tm", tm}, {"tn", tn}, {"unroll", unroll}})
      if (value < 1 || value > 64) return step_error(step, std::string(key) + " must be in 1..64");
    if (tm * tn * unroll == 1) return step_error(step, "tm = tn = unroll = 1 changes nothing");
    // Every op at most tm x tn x unroll times: bounded, so a step cannot
    // make a kernel no device (nor the interpreter) takes.
    if (static_cast<std::uint64_t>(kernel.size()) * static_cast<std::uint64_t>(tm * tn * unroll) > kMaxOps)
      return step_error(step, "the kernel would grow past " + std::to_string(kMaxOps) + " ops");
    KILN_TRY_ASSIGN(const Target target, find_target(kernel, step, loop_number));
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    if (loop_accumulators(kernel, blocks, target.loop).empty())
      return step_error(step, "LOOP " + std::to_string(loop_number) + " accumulates into no REGISTER storage");
    for (std::uint32_t side = 0; side < 2; ++side) {
      const std::int64_t factor = side == 0 ? tm : tn;
      if (target.lengths[side] % factor != 0)
        return step_error(step, std::string(side == 0 ? "tm=" : "tn=") + std::to_string(factor) +
                                    " does not divide GROUP axis " + std::to_string(kGroupAxis[side]) + "'s length " +
                                    std::to_string(target.lengths[side]));
    }
    if (unroll > 1 && !target.trip_count)
      return step_error(step, "unroll needs a constant trip count; LOOP " + std::to_string(loop_number) + "'s is dynamic");
    if (unroll > 1 && *target.trip_count % unroll != 0)
      return step_error(step, "unroll=" + std::to_string(unroll) + " does not divide the trip count " +
                                  std::to_string(*target.trip_count));

    jam::Jammer jammer(kernel, target.axes, {static_cast<std::uint32_t>(tm), static_cast<std::uint32_t>(tn)});
    if (auto why = misfit(jammer, device)) return step_error(step, *why);

    jam::ScopedEmitter& emit = jammer.emitter();
    jammer.coordinates = [&](unsigned side) {
      const std::int64_t factor = side == 0 ? tm : tn;
      const Value group = jammer.out().group_index(kGroupAxis[side], emit.constant(target.lengths[side] / factor));
      const Value first = emit.affine(group, factor, 0);
      std::vector<Value> coordinates;
      for (std::int64_t copy = 0; copy < factor; ++copy) coordinates.push_back(emit.affine(first, 1, copy));
      return coordinates;
    };
    if (unroll > 1) {
      jammer.special_loop = target.loop;
      jammer.emit_special_loop = [&] {
        const Value loop = jammer.out().loop(emit.constant(*target.trip_count / unroll));
        const Value first = emit.affine(loop, unroll, 0);
        for (std::int64_t copy = 0; copy < unroll; ++copy) {
          jammer.set_value(target.loop, emit.affine(first, 1, copy));
          jammer.emit_body(target.loop);
        }
        jammer.out().end_loop(loop);
      };
    }
    return jammer.run();
  }

 private:
  // Why the jammed kernel cannot run on the device, or nullopt.
  static std::optional<std::string> misfit(const jam::Jammer& jammer, const DeviceInfo& device) {
    if (auto why = jammer.obstacle()) return why;
    const std::uint64_t registers = jammer.storage_bytes(ir::Scope::Register);
    if (device.register_bytes > 0 && registers > device.register_bytes)
      return "the tile needs " + std::to_string(registers) + " REGISTER bytes per thread; the device has " +
             std::to_string(device.register_bytes);
    const std::uint64_t local = jammer.storage_bytes(ir::Scope::Local);
    if (local > device.local_memory_bytes)
      return "the tile needs " + std::to_string(local) + " LOCAL bytes per group; the device has " +
             std::to_string(device.local_memory_bytes);
    return std::nullopt;
  }
  static bool fits(const jam::Jammer& jammer, const DeviceInfo& device) { return !misfit(jammer, device); }

  // REGISTER bytes per old thread of the accumulators that become a tile.
  static std::uint64_t accumulator_bytes(const Kernel& kernel, const ir::Blocks& blocks, std::array<ValueId, 2> axes,
                                         ValueId loop) {
    const std::vector<std::uint8_t> deps = jam::dependences(kernel, axes);
    std::uint64_t bytes = 0;
    for (ValueId storage : loop_accumulators(kernel, blocks, loop))
      if (deps[storage] != 0) bytes += kernel[storage].imm * ir::dtype_bytes(kernel[storage].dtype);
    return bytes;
  }
};

}  // namespace

const Optimization& register_block() {
  static const RegisterBlock instance;
  return instance;
}

}  // namespace kiln::passes::opts
