// tiled_reduce(loop, local, branch): splits LOOP `loop` across `local`
// LOCAL threads of a work-group (opt_tiled_reduce_match.hpp says which
// loops). Thread t runs iterations t, t + local, t + 2 local, ... (on a GPU
// neighbouring threads read neighbouring elements), guarded when local does
// not divide the trip count (also a dynamic one).
//   - A reduction accumulates into a per-thread partial that starts at the
//     op's identity; the partials go to LOCAL storage, barrier, and a tree
//     combines them, `branch` at a time per step (a barrier after each);
//     every thread then combines the total into the old accumulator, so the
//     rest of the kernel runs unchanged in every thread. Floating-point sums
//     are reassociated (the tree's order, not the loop's).
//   - A parallel loop (each iteration stores its own element) just splits.
//   - With subgroup=w (a device that claims SUBGROUP_REDUCE, kernel_ir.h,
//     in subgroups of w <= its warp_size), the tree stops at w partials and
//     one subgroup_reduce combines the last w lanes: no LOCAL round trip and
//     no barrier for them. Its butterfly is the tree's own order (branch 2),
//     so with branch 2 both forms give the bitwise same total. With local
//     == w there is no LOCAL storage and no barrier at all. The threads must
//     be LOCAL axis 0 (subgroups follow the linear local id), local a
//     power-of-two multiple of w and branch a power of two, so every tree
//     step keeps a multiple of w partials.
//   - With subgroup_first=1 as well, each subgroup first combines its
//     threads' partials with one subgroup_reduce, lane 0 of each puts its
//     subgroup's total in LOCAL storage, and after one barrier every thread
//     reads the local / w totals (lane i the i-th, each run of local / w
//     lanes the same) and combines them with a second subgroup_reduce of
//     that width: every thread holds the total after one barrier, not a
//     barrier a tree level (four at 512 threads and branch 4). local / w must
//     be a subgroup width the device runs. The order differs from the tree's.
// The threads are a new LOCAL axis, or an existing one of length `local`
// when the loop is the same in all its threads (softmax: after its max loop
// is tiled, its sum and write loops reuse that axis). Stores at top level to
// buffers the kernel never reads, the same in every thread, are done by
// thread 0 only.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "kiln/ir/text.hpp"
#include "opt_support.hpp"
#include "opt_tiled_reduce_match.hpp"
#include "optimizations.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <optional>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "tiled_reduce";

struct LocalAxis {
  std::uint32_t axis = 0;
  ValueId index = ir::kNoValue;  // the existing INDEX op (kNoValue: a new axis)
  // The kernel's other LOCAL axes: each of their threads reduces on its own,
  // so the partials in LOCAL storage are per (other thread, t).
  std::vector<std::pair<ValueId, std::int64_t>> others;  // (INDEX op, length)
  std::int64_t other_threads() const {
    std::int64_t n = 1;
    for (const auto& [index, length] : others) n *= length;
    return n;
  }
};

// Where the threads come from, or why they cannot.
std::variant<LocalAxis, std::string> choose_axis(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop,
                                                 std::int64_t local, const DeviceInfo& device) {
  std::uint64_t threads = 1;
  std::optional<std::uint32_t> free_axis;
  std::vector<std::pair<std::uint32_t, std::pair<ValueId, std::int64_t>>> existing;
  for (std::uint32_t axis = 0; axis < KILN_MAX_AXES; ++axis) {
    const auto index = find_index(kernel, ir::Scope::Local, axis);
    if (!index) {
      if (!free_axis) free_axis = axis;
      continue;
    }
    if (*index > loop) return "`" + ir::print_op(kernel, *index) + "` comes after the loop";
    const std::int64_t length = ir::constant_int(kernel, kernel[*index].src[0]).value_or(1);
    threads *= static_cast<std::uint64_t>(length);
    existing.push_back({axis, {*index, length}});
  }
  const auto others_than = [&](std::optional<std::uint32_t> used) {
    std::vector<std::pair<ValueId, std::int64_t>> others;
    for (const auto& [axis, index_length] : existing)
      if (axis != used) others.push_back(index_length);
    return others;
  };
  for (const auto& [axis, index_length] : existing) {
    if (index_length.second != local) continue;
    const std::vector<bool> varying = reduce::varying_along(kernel, blocks, {index_length.first});
    bool uniform = true;
    for (ValueId id = loop; id < blocks.end[loop] && uniform; ++id) uniform = !varying[id];
    if (uniform) return LocalAxis{axis, index_length.first, others_than(axis)};
  }
  if (!free_axis) return std::string("the kernel uses all three LOCAL axes");
  // A new axis runs everything outside the loop in every new thread: fine
  // for registers and same-valued stores, a race on LOCAL storage.
  for (ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == OpKind::Storage && kernel[id].scope() == ir::Scope::Local)
      return "the kernel already shares LOCAL storage (`" + ir::print_op(kernel, id) +
             "`), which a new LOCAL axis would race on; only an existing axis of length " + std::to_string(local) +
             " along which the loop is the same could be reused";
  if (threads * static_cast<std::uint64_t>(local) > device.max_local_threads)
    return std::to_string(threads * static_cast<std::uint64_t>(local)) + " threads per group exceed the device's " +
           std::to_string(device.max_local_threads);
  if (static_cast<std::uint64_t>(local) > device.max_local_dims[*free_axis])
    return "LOCAL axis " + std::to_string(*free_axis) + " allows " + std::to_string(device.max_local_dims[*free_axis]) +
           " threads";
  return LocalAxis{*free_axis, ir::kNoValue, others_than(std::nullopt)};
}

class Splitter {
 public:
  Splitter(const Kernel& old, const ir::Blocks& blocks, const reduce::SplittableLoop& loop, LocalAxis axis,
           std::int64_t local, std::int64_t branch, std::int64_t subgroup, bool subgroup_first)
      : old_(old), blocks_(blocks), loop_(loop), axis_(axis), local_(local), branch_(branch), subgroup_(subgroup),
        subgroup_first_(subgroup_first), rw_(old) {
    // Stores only thread 0 needs to do: top level, to buffers the kernel
    // never reads back, the same in every thread along the axis.
    std::vector<bool> loaded(old.size(), false);
    for (const ir::Op& op : old.ops)
      if (op.kind == OpKind::Load) loaded[op.src[0]] = true;
    const std::vector<bool> varying =
        axis.index == ir::kNoValue ? std::vector<bool>(old.size(), false) : reduce::varying_along(old, blocks, {axis.index});
    for (ValueId id = 0; id < old.size(); ++id) {
      const ir::Op& op = old[id];
      guarded_.push_back(op.kind == OpKind::Store && old[op.src[0]].kind == OpKind::Param && !loaded[op.src[0]] &&
                         blocks.parent[id] == ir::kNoValue && !varying[op.src[1]] && !varying[op.src[2]]);
    }
  }

  Kernel run() {
    ValueId first_op = 0;
    while (first_op < old_.size() && old_[first_op].kind == OpKind::Param) ++first_op;
    for (ValueId id = 0; id < old_.size(); ++id) {
      if (rw_.handled(id)) continue;
      if (id == first_op) begin();
      if (id == loop_.loop) {
        split();
        continue;
      }
      if (guarded_[id] && first_thread_.valid()) {
        const ValueId branch = out().if_(first_thread_);
        rw_.copy(id);
        out().end_if(branch);
        continue;
      }
      rw_.copy(id);
      if (id == axis_.index) first_thread_ = out().eq(rw_.map(id), out().constant_i64(0));
    }
    return rw_.finish();
  }

 private:
  ir::Builder& out() { return rw_.out(); }

  // The thread index, and the storage the split needs (top level).
  void begin() {
    if (axis_.index == ir::kNoValue) {
      ir::Op index;
      index.kind = OpKind::Index;
      index.dtype = ir::kIndexType;
      index.code = static_cast<std::uint8_t>(ir::Scope::Local);
      index.attr = axis_.axis;
      index.src[0] = out().constant_i64(local_).id;
      thread_ = out().append(index);
      first_thread_ = out().eq(thread_, out().constant_i64(0));
    }
    for (const reduce::Accumulator& a : loop_.accumulators) {
      partials_.push_back(out().storage(ir::Scope::Register, a.dtype, 1));
      if (subgroup_ == local_) continue;  // one subgroup: no LOCAL storage
      shared_.push_back(
          out().storage(ir::Scope::Local, a.dtype, static_cast<std::uint64_t>(local_ * axis_.other_threads())));
    }
  }

  Value thread() { return axis_.index == ir::kNoValue ? thread_ : rw_.map(axis_.index); }

  void split() {
    const ir::Op& loop = old_[loop_.loop];
    const Value zero = out().constant_i64(0);
    for (std::size_t a = 0; a < loop_.accumulators.size(); ++a) {
      const reduce::Accumulator& acc = loop_.accumulators[a];
      out().store(partials_[a], zero, out().constant_bits(acc.dtype, *reduce::identity_bits(acc.op, acc.dtype)));
    }
    const Value count = rw_.map(loop.src[0]);
    const auto constant_count = ir::constant_int(old_, loop.src[0]);
    const Value local = out().constant_i64(local_);
    Value trips;
    if (constant_count) trips = out().constant_i64((std::max<std::int64_t>(*constant_count, 0) + local_ - 1) / local_);
    else trips = out().div(out().add(count, out().constant_i64(local_ - 1)), local);
    const bool guarded = !constant_count || *constant_count % local_ != 0;
    const Value step = out().loop(trips);
    const Value counter = out().add(out().mul(step, local), thread());
    rw_.replace(loop_.loop, counter);
    ValueId guard = ir::kNoValue;
    if (guarded) guard = out().if_(out().cmplt(counter, count));
    copy_body(zero);
    if (guarded) out().end_if(guard);
    out().end_loop(step);
    rw_.drop(blocks_.end[loop_.loop]);
    if (!loop_.accumulators.empty()) combine(zero);
  }

  void copy_body(Value zero) {
    for (ValueId id = loop_.loop + 1; id < blocks_.end[loop_.loop]; ++id) {
      if (rw_.handled(id)) continue;
      bool done = false;
      for (std::size_t a = 0; a < loop_.accumulators.size() && !done; ++a) {
        const reduce::Accumulator& acc = loop_.accumulators[a];
        if (std::find(acc.loads.begin(), acc.loads.end(), id) != acc.loads.end()) {
          rw_.replace(id, out().load(partials_[a], zero));
          done = true;
        } else if (std::find(acc.stores.begin(), acc.stores.end(), id) != acc.stores.end()) {
          out().store(partials_[a], zero, rw_.map(old_[id].src[2]));
          rw_.drop(id);
          done = true;
        }
      }
      if (!done) rw_.copy(id);
    }
  }

  // Where thread t (of this thread of the other axes) keeps its partial:
  // other * local + t.
  Value slot(Value t) {
    if (axis_.others.empty()) return t;
    Value other = out().constant_i64(0);
    for (const auto& [index, length] : axis_.others)
      other = out().add(out().mul(other, out().constant_i64(length)), rw_.map(index));
    return out().add(out().mul(other, out().constant_i64(local_)), t);
  }

  // The reduction of each partial over subgroups of `width` (every thread's).
  std::vector<Value> subgroup_totals(const std::vector<Value>& partials, std::int64_t width) {
    std::vector<Value> totals;
    for (std::size_t a = 0; a < partials.size(); ++a)
      totals.push_back(
          out().subgroup_reduce(loop_.accumulators[a].op, partials[a], static_cast<std::uint32_t>(width)));
    return totals;
  }

  // One LOAD of each array (an accumulator's partials or LOCAL slots) at `at`.
  std::vector<Value> load_each(const std::vector<Value>& arrays, Value at) {
    std::vector<Value> values;
    for (const Value& array : arrays) values.push_back(out().load(array, at));
    return values;
  }

  // subgroup_first: each subgroup's total to LOCAL storage (its lane 0),
  // one barrier, then every thread combines the local / w totals itself.
  void combine_subgroups_first(Value t, Value zero) {
    const std::vector<Value> mine = subgroup_totals(load_each(partials_, zero), subgroup_);
    const Value w = out().constant_i64(subgroup_);
    const ValueId lane0 = out().if_(out().eq(out().mod(t, w), zero));
    const Value subgroup_slot = slot(out().div(t, w));
    for (std::size_t a = 0; a < mine.size(); ++a) out().store(shared_[a], subgroup_slot, mine[a]);
    out().end_if(lane0);
    out().barrier();
    const std::int64_t count = local_ / subgroup_;
    const Value theirs = slot(out().mod(t, out().constant_i64(count)));
    add_totals(subgroup_totals(load_each(shared_, theirs), count));
  }

  void add_totals(const std::vector<Value>& totals) {
    for (std::size_t a = 0; a < totals.size(); ++a) {
      const reduce::Accumulator& acc = loop_.accumulators[a];
      const Value index = rw_.map(acc.index);
      const Value before = out().load(rw_.map(acc.storage), index);
      out().store(rw_.map(acc.storage), index, out().binary(acc.op, before, totals[a]));
    }
  }

  // Partials to LOCAL storage, the tree, the total into each accumulator.
  void combine(Value zero) {
    const Value t = thread();
    if (subgroup_ == local_)  // the threads are one subgroup: every one gets the total
      return add_totals(subgroup_totals(load_each(partials_, zero), subgroup_));
    if (subgroup_first_) combine_subgroups_first(t, zero);
    else combine_tree(t, zero);
    // In an enclosing loop the next round's partials must not overwrite
    // the total while a thread still reads it.
    bool nested_in_loop = false;
    for (ValueId p = blocks_.parent[loop_.loop]; p != ir::kNoValue; p = blocks_.parent[p])
      nested_in_loop = nested_in_loop || old_[p].kind == OpKind::Loop;
    if (nested_in_loop) out().barrier();
  }

  // The tree: `branch` partials a step, a barrier after each.
  void combine_tree(Value t, Value zero) {
    const Value mine = slot(t);
    for (std::size_t a = 0; a < partials_.size(); ++a) out().store(shared_[a], mine, out().load(partials_[a], zero));
    out().barrier();
    const std::int64_t last = subgroup_ != 0 ? subgroup_ : 1;  // partials the tree leaves
    for (std::int64_t width = local_; width > last;) {
      const std::int64_t fan = std::min(branch_, width / last), stride = (width + fan - 1) / fan;
      const ValueId active = out().if_(out().cmplt(t, out().constant_i64(stride)));
      for (std::size_t a = 0; a < partials_.size(); ++a) {
        const ir::BinaryOp op = loop_.accumulators[a].op;
        out().store(partials_[a], zero, out().load(shared_[a], mine));
        for (std::int64_t q = 1; q < fan; ++q) {
          // Past the end only when fan does not divide width.
          const bool may_overrun = q * stride + stride - 1 >= width;
          ValueId inside = ir::kNoValue;
          if (may_overrun) {
            const Value other = out().add(t, out().constant_i64(q * stride));
            inside = out().if_(out().cmplt(other, out().constant_i64(width)));
          }
          const Value theirs_slot = out().add(mine, out().constant_i64(q * stride));
          const Value partial = out().load(partials_[a], zero);
          const Value theirs = out().load(shared_[a], theirs_slot);
          out().store(partials_[a], zero, out().binary(op, partial, theirs));
          if (may_overrun) out().end_if(inside);
        }
        out().store(shared_[a], mine, out().load(partials_[a], zero));
      }
      out().end_if(active);
      out().barrier();
      width = stride;
    }
    if (subgroup_ != 0) {
      // The last `subgroup_` partials in one subgroup (the others reduce
      // theirs too, unused: the op is the whole group's); its thread 0 puts
      // the total where everyone reads it.
      const std::vector<Value> totals = subgroup_totals(load_each(shared_, mine), subgroup_);
      const ValueId first = out().if_(out().eq(t, zero));
      for (std::size_t a = 0; a < totals.size(); ++a) out().store(shared_[a], mine, totals[a]);
      out().end_if(first);
      out().barrier();
    }
    add_totals(load_each(shared_, slot(zero)));
  }

  const Kernel& old_;
  const ir::Blocks& blocks_;
  const reduce::SplittableLoop& loop_;
  LocalAxis axis_;
  std::int64_t local_, branch_, subgroup_;  // subgroup_: 0 (the tree to the end) or its width
  bool subgroup_first_;
  ir::Rewriter rw_;
  std::vector<bool> guarded_;
  Value thread_, first_thread_;
  std::vector<Value> partials_, shared_;
};

class TiledReduce final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "splits a reduction (or parallel) LOOP across `local` LOCAL threads: strided partials, then a tree "
           "through LOCAL storage with barriers, `branch` partials per step; subgroup=w ends the tree at w partials "
           "and combines them with one subgroup_reduce where the device claims it (subgroup_first=1: subgroups "
           "first, one barrier)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!ir::verify(kernel).ok()) return {};  // only valid kernels have variants
    std::vector<OptStep> steps;
    if (device.max_local_threads <= 1) return steps;
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number) {
      const ValueId loop = loops[number];
      auto matched = reduce::match_loop(kernel, blocks, loop);
      if (!std::holds_alternative<reduce::SplittableLoop>(matched) || enclosing_varies(kernel, blocks, loop)) continue;
      const reduce::SplittableLoop& splittable = std::get<reduce::SplittableLoop>(matched);
      if (!partials_possible(splittable)) continue;
      const bool reduction = !splittable.accumulators.empty();
      const auto count = ir::constant_int(kernel, kernel[loop].src[0]);
      for (std::int64_t local : {1024, 512, 256, 128, 64, 32}) {
        if (count && local > 32 && local / 2 >= *count) continue;  // threads with nothing to do
        auto axis = choose_axis(kernel, blocks, loop, local, device);
        if (!std::holds_alternative<LocalAxis>(axis)) continue;
            if (!fits_local_memory(kernel, splittable, local * std::get<LocalAxis>(axis).other_threads(), device)) continue;
        const std::int64_t width = device.warp_size;
        const bool subgroups =
            reduction && !subgroup_refusal(splittable, std::get<LocalAxis>(axis), local, 2, width, device);
        for (std::int64_t branch : {2, 4, 8}) {
          if (!reduction && branch > 2) break;
          steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"local", local}, {"branch", branch}}));
          // One subgroup of threads has no tree to branch.
          if (subgroups && (local > width || branch == 2))
            steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"local", local},
                                              {"branch", branch}, {"subgroup", width}}));
        }
        if (subgroups && !subgroup_first_refusal(local, width, device))
          steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"local", local},
                                            {"subgroup", width}, {"subgroup_first", 1}}));
      }
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    if (Result<void> valid = ir::verify(kernel); !valid.ok())
      return step_error(step, "the kernel does not verify: " + valid.error().message);
    KILN_TRY(known_params(step, {"loop", "local", "branch", "subgroup", "subgroup_first"}));
    KILN_TRY_ASSIGN(const bool subgroup_first, flag_param(step, "subgroup_first"));
    KILN_TRY_ASSIGN(const std::int64_t loop_number, require_param(step, "loop"));
    KILN_TRY_ASSIGN(const std::int64_t local, require_param(step, "local"));
    const std::int64_t branch = step.param("branch", 2);
    const std::int64_t subgroup = step.param("subgroup", 0);
    if (local < 2 || local > 65536) return step_error(step, "local must be in 2..65536");
    if (branch < 2 || branch > 64) return step_error(step, "branch must be in 2..64");
    if (device.max_local_threads <= 1) return step_error(step, "the device runs one thread per group");
    const std::vector<ValueId> loops = loops_in_order(kernel);
    if (loop_number < 0 || loop_number >= static_cast<std::int64_t>(loops.size()))
      return step_error(step, "loop=" + std::to_string(loop_number) + " does not exist (the kernel has " +
                                  std::to_string(loops.size()) + " LOOPs)");
    const ValueId loop = loops[static_cast<std::size_t>(loop_number)];
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    auto matched = reduce::match_loop(kernel, blocks, loop);
    if (std::holds_alternative<std::string>(matched)) return step_error(step, std::get<std::string>(matched));
    const reduce::SplittableLoop& splittable = std::get<reduce::SplittableLoop>(matched);
    if (!partials_possible(splittable)) return step_error(step, "bool accumulators have no partials to start from");
    if (enclosing_varies(kernel, blocks, loop))
      return step_error(step, "the loop lies in a block whose condition or trip count differs between threads "
                              "(the tree's barriers would diverge)");
    auto axis = choose_axis(kernel, blocks, loop, local, device);
    if (std::holds_alternative<std::string>(axis)) return step_error(step, std::get<std::string>(axis));
    if (!fits_local_memory(kernel, splittable, local * std::get<LocalAxis>(axis).other_threads(), device))
      return step_error(step, "the partials need more LOCAL memory than the device's " +
                                  std::to_string(device.local_memory_bytes) + " bytes");
    if (subgroup != 0) {
      if (splittable.accumulators.empty())
        return step_error(step, "subgroup=" + std::to_string(subgroup) + ": the loop reduces nothing");
      if (auto why = subgroup_refusal(splittable, std::get<LocalAxis>(axis), local, branch, subgroup, device))
        return step_error(step, "subgroup=" + std::to_string(subgroup) + ": " + *why);
    }
    if (subgroup_first)
      if (auto why = subgroup_first_refusal(local, subgroup, device)) return step_error(step, "subgroup_first=1: " + *why);
    return Splitter(kernel, blocks, splittable, std::get<LocalAxis>(axis), local, branch, subgroup, subgroup_first).run();
  }

 private:
  static bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

  // Why the subgroup form does not fit (nothing when it does).
  static std::optional<std::string> subgroup_refusal(const reduce::SplittableLoop& loop, const LocalAxis& axis,
                                                     std::int64_t local, std::int64_t branch, std::int64_t width,
                                                     const DeviceInfo& device) {
    if (width < 0 || width > sdk::kMaxSubgroupWidth || !sdk::subgroup_width_allowed(static_cast<std::uint32_t>(width)))
      return "the width must be a power of two from 2 to " + std::to_string(sdk::kMaxSubgroupWidth);
    if (width > static_cast<std::int64_t>(device.warp_size))
      return "the device runs subgroups of up to " + std::to_string(device.warp_size) + " threads (warp_size)";
    for (const reduce::Accumulator& a : loop.accumulators) {
      if (!sdk::subgroup_reduction_allowed(static_cast<unsigned>(a.op)))
        return "subgroup_reduce has no " + std::string(sdk::binary_name(static_cast<unsigned>(a.op))) + " reduction";
      if (!device.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, static_cast<unsigned>(a.dtype)))
        return "the device does not claim subgroup_reduce on " + std::string(ir::dtype_name(a.dtype));
    }
    if (axis.axis != 0)
      return "the threads would be LOCAL axis " + std::to_string(axis.axis) +
             ", not 0 (subgroups follow the linear local id)";
    if (local % width != 0 || !power_of_two(local / width))
      return "local=" + std::to_string(local) + " is not a power-of-two multiple of the width";
    if (!power_of_two(branch)) return "branch=" + std::to_string(branch) + " is not a power of two";
    return std::nullopt;
  }

  // Why the subgroups-first form does not fit (nothing when it does): the
  // subgroups' totals are reduced by a subgroup of local / width lanes.
  static std::optional<std::string> subgroup_first_refusal(std::int64_t local, std::int64_t width,
                                                           const DeviceInfo& device) {
    if (width == 0) return std::string("needs subgroup=w");
    if (local <= width) return "local=" + std::to_string(local) + " is one subgroup (no second level)";
    const std::int64_t count = local / width;
    if (count > static_cast<std::int64_t>(device.warp_size) || !sdk::subgroup_width_allowed(static_cast<std::uint32_t>(count)))
      return "the " + std::to_string(count) + " subgroups' totals are not one subgroup the device runs";
    return std::nullopt;
  }

  static bool partials_possible(const reduce::SplittableLoop& loop) {
    return std::all_of(loop.accumulators.begin(), loop.accumulators.end(),
                       [](const reduce::Accumulator& a) { return reduce::identity_bits(a.op, a.dtype).has_value(); });
  }

  // What the verifier checks for barriers: the blocks around the loop must
  // be the same for every thread.
  static bool enclosing_varies(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
    const std::vector<bool> varying = ir::thread_varying(kernel, blocks);
    for (ValueId p = blocks.parent[loop]; p != ir::kNoValue; p = blocks.parent[p])
      if (varying[kernel[p].src[0]]) return true;
    return false;
  }

  static bool fits_local_memory(const Kernel& kernel, const reduce::SplittableLoop& loop, std::int64_t local,
                                const DeviceInfo& device) {
    std::uint64_t bytes = storage_bytes(kernel, ir::Scope::Local);
    for (const reduce::Accumulator& a : loop.accumulators)
      bytes += static_cast<std::uint64_t>(local) * ir::dtype_bytes(a.dtype);
    return bytes <= device.local_memory_bytes;
  }
};

}  // namespace

const Optimization& tiled_reduce() {
  static const TiledReduce instance;
  return instance;
}

}  // namespace kiln::passes::opts
