// Counting a kernel's work for the cost model: trip counts and grid lengths
// from constants or the given VARIABLE values (else kUnknownLength, or the
// bound a value range gives), ops by class, and memory traffic by space
// with global accesses priced by their stride along the fastest-varying
// thread coordinate (GPUs) or the innermost loop / grid axis 0 (CPUs).
#include "cost_counts.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "value_range.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

constexpr double kSectorBytes = 32;     // GPU memory transaction
constexpr double kCacheLineBytes = 64;  // CPU
// The widest load or store one GPU thread issues (LDG.128 and its kin);
// a wider vector is several of them, each strided across the warp.
constexpr double kMaxGpuAccessBytes = 16;

// A thread's code between barriers for the phase count (WorkCounts::
// phased_bytes): its priced instructions and global bytes, once through.
struct Stretch {
  double issue = 0;
  double bytes = 0;
  Stretch& operator+=(const Stretch& o) {
    issue += o.issue;
    bytes += o.bytes;
    return *this;
  }
};

// A region of code (the kernel, a loop body) by its barrier phases: without
// a barrier one open stretch (`head`); with barriers the stretch before the
// first (`head`, which joins the phase open before the region), the phases
// closed inside it (`closed`: each the longer of its compute and memory, in
// bytes) and the stretch after the last (`tail`, open after it). A loop
// repeats its body's: each iteration's tail and the next one's head are one
// phase.
class Phases {
 public:
  explicit Phases(double bytes_per_issue) : bytes_per_issue_(bytes_per_issue) {}

  void add(const Stretch& s) { (barrier_ ? tail_ : head_) += s; }

  void barrier() {
    if (barrier_) closed_ += longer(tail_);
    barrier_ = true;
    tail_ = {};
  }

  void append(const Phases& next) {
    if (!next.barrier_) return add(next.head_);
    if (!barrier_) {
      head_ += next.head_;
    } else {
      Stretch joined = tail_;
      joined += next.head_;
      closed_ += longer(joined);
    }
    closed_ += next.closed_;
    tail_ = next.tail_;
    barrier_ = true;
  }

  void repeat(double times) {
    if (times <= 0) {
      *this = Phases(bytes_per_issue_);
      return;
    }
    if (!barrier_) {
      head_.issue *= times;
      head_.bytes *= times;
      return;
    }
    Stretch joined = tail_;
    joined += head_;
    closed_ = times * closed_ + (times - 1) * longer(joined);
  }

  double total() const { return longer(head_) + (barrier_ ? closed_ + longer(tail_) : 0); }

 private:
  double longer(const Stretch& s) const { return std::max(s.issue * bytes_per_issue_, s.bytes); }

  double bytes_per_issue_;
  bool barrier_ = false;
  Stretch head_, tail_;
  double closed_ = 0;
};

class Counter {
 public:
  Counter(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const std::int64_t> variables)
      : k_(kernel), device_(device), wire_(kernel.to_wire()), ranges_(integer_ranges(kernel)) {
    for (const ir::Op& op : kernel.ops) {
      if (op.kind != OpKind::Param) continue;
      if (args_.size() <= op.attr) args_.resize(op.attr + 1, kiln_arg{});
      if (op.param_kind() == ir::ParamKind::Variable && op.attr < variables.size())
        args_[op.attr] = sdk::scalar_arg(static_cast<kiln_dtype>(op.dtype), ir::encode_int(op.dtype, variables[op.attr]));
    }
    warp_ = std::max<std::uint32_t>(device.warp_size, 1);
    const auto widths = device.vector_widths();
    vector_width_ = warp_ > 1 ? 1 : std::max<std::uint32_t>(widths.back(), 1);
  }

  WorkCounts run() {
    WorkCounts w;
    grid(w);
    const ir::Blocks blocks = ir::analyze_blocks(k_);
    thread_varying_ = ir::thread_varying(k_, blocks);
    std::vector<double> multiplicity(k_.size() + 1, 1.0);  // per thread, of ops in each block
    // The barrier phases of the blocks open around the current op, outermost
    // first: (block op, its trips, its phases).
    struct Open {
      ValueId block;
      double trips;
      Phases phases;
    };
    const double bytes_per = bytes_per_issue(w.threads_per_group, device_);
    std::vector<Open> open = {{ir::kNoValue, 1, Phases(bytes_per)}};
    const auto close_block = [&] {
      Open done = std::move(open.back());
      open.pop_back();
      done.phases.repeat(done.trips);
      open.back().phases.append(done.phases);
    };
    for (ValueId id = 0; id < k_.size(); ++id) {
      const ir::Op& op = k_[id];
      while (open.back().block != blocks.parent[id]) close_block();
      const double times = blocks.parent[id] == ir::kNoValue ? 1.0 : multiplicity[blocks.parent[id]];
      const Stretch before = stretch(w);
      if (op.kind == OpKind::Loop || op.kind == OpKind::If) {
        // An IF counts as taken: its body joins the enclosing phases once.
        const double trips = op.kind == OpKind::Loop ? length(op.src[0]) : 1;
        multiplicity[id] = times * trips;
        // A loop: an increment and a branch per iteration.
        add_op(w, OpCost::Control, (op.kind == OpKind::Loop ? 2 : 1) * times * trips, 1);
        open.push_back({id, trips, Phases(bytes_per)});
      } else {
        count_op(w, blocks, id, times);
      }
      if (op.kind == OpKind::Barrier) open.back().phases.barrier();
      if (times > 0 && multiplicity[id] > 0) {
        const double per = op.kind == OpKind::Loop || op.kind == OpKind::If ? multiplicity[id] : times;
        Stretch once = stretch(w);
        once.issue = (once.issue - before.issue) / per;
        once.bytes = (once.bytes - before.bytes) / per;
        open.back().phases.add(once);
      }
    }
    while (open.size() > 1) close_block();
    w.phased_bytes = open.back().phases.total();
    return w;
  }

 private:
  // What the counts hold so far for the phases: priced instructions and
  // global bytes (spills are not known yet: they count in every phase alike).
  Stretch stretch(const WorkCounts& w) const { return {priced_issue(w, device_), w.global_bytes_moved}; }

  // The value of a host-evaluable length (constants, VARIABLE values).
  double length(ValueId id) {
    try {
      return static_cast<double>(std::max<std::int64_t>(sdk::eval_host_expr(wire_, id, args_), 0));
    } catch (const sdk::PluginError&) {
    }
    if (id < ranges_.size() && ranges_[id] && ranges_[id]->hi < static_cast<std::int64_t>(kUnknownLength))
      return static_cast<double>(std::max<std::int64_t>(ranges_[id]->hi, 0));
    return kUnknownLength;
  }

  void grid(WorkCounts& w) {
    for (ValueId id = 0; id < k_.size(); ++id) {
      const ir::Op& op = k_[id];
      if (op.kind != OpKind::Index || op.attr > 2) continue;
      const double n = std::max(length(op.src[0]), 1.0);
      if (op.scope() == ir::Scope::Group) w.groups *= n;
      if (op.scope() == ir::Scope::Local) {
        w.local[op.attr] = n;
        local_index_[op.attr] = id;
      }
      if (op.scope() == ir::Scope::Group && op.attr == 0) group0_ = id;
    }
    w.threads_per_group = w.local[0] * w.local[1] * w.local[2];
    local_ = w.local;
    threads_ = w.threads_per_group;
    for (const ir::Op& op : k_.ops) {
      if (op.kind != OpKind::Storage) continue;
      const double bytes = static_cast<double>(op.imm) * ir::dtype_bytes(op.dtype);
      (op.scope() == ir::Scope::Local ? w.local_bytes_per_group : w.register_bytes_per_thread) += bytes;
    }
  }

  void add_op(WorkCounts& w, OpCost c, double times, unsigned lanes) {
    const auto i = static_cast<std::size_t>(c);
    w.lane_ops[i] += times * lanes;
    // GPU threads are scalar: a vector op is one instruction per lane. CPU
    // SIMD runs up to vector_width_ lanes in one instruction.
    w.issues[i] += times * std::ceil(static_cast<double>(lanes) / vector_width_);
  }

  OpCost classify(const ir::Op& op) const {
    const ir::DType dtype = op.kind == OpKind::Binary && op.src[0] < k_.size() ? k_[op.src[0]].dtype : op.dtype;
    const bool is_float = ir::is_float(dtype);
    const OpCost alu = dtype == ir::DType::F64 ? OpCost::DoubleAlu : is_float ? OpCost::FloatAlu : OpCost::IntAlu;
    switch (op.kind) {
      case OpKind::Cast: return OpCost::Convert;
      case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract: return OpCost::Move;
      case OpKind::Mad: return alu;
      case OpKind::Unary:
        if (!is_float) return alu;
        switch (op.unary()) {
          case ir::UnaryOp::Exp: case ir::UnaryOp::Ln: return OpCost::ExpLn;
          case ir::UnaryOp::Exp2: case ir::UnaryOp::Log2: return OpCost::Exp2Log2;
          // The 1.1 math ops are an exp or log and a few ALU ops where a
          // device runs them natively; the lowered forms count their ops.
          case ir::UnaryOp::Tanh: case ir::UnaryOp::Erf: case ir::UnaryOp::Sigmoid: case ir::UnaryOp::Log1p:
          case ir::UnaryOp::Expm1:
            return OpCost::ExpLn;
          case ir::UnaryOp::Recip: case ir::UnaryOp::Sqrt: case ir::UnaryOp::Sin: case ir::UnaryOp::Cos:
          case ir::UnaryOp::Rsqrt:
            return OpCost::FloatSpecial;
          default: return alu;
        }
      case OpKind::Binary:
        switch (op.binary()) {
          case ir::BinaryOp::Div: case ir::BinaryOp::Mod:
            if (is_float) return OpCost::FloatSpecial;
            // Division by a constant compiles to multiplies and shifts.
            return ir::constant_int(k_, op.src[1]) ? OpCost::IntAlu : OpCost::IntDiv;
          case ir::BinaryOp::Pow: return OpCost::FloatSpecial;
          default: return alu;
        }
      default: return alu;
    }
  }

  void count_op(WorkCounts& w, const ir::Blocks& blocks, ValueId id, double times) {
    const ir::Op& op = k_[id];
    switch (op.kind) {
      case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad: case OpKind::Select:
      case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract: {
        const OpCost c = classify(op);
        add_op(w, c, times, op.lanes);
        const bool float_math = c == OpCost::FloatAlu || c == OpCost::DoubleAlu || c == OpCost::FloatSpecial ||
                                c == OpCost::ExpLn || c == OpCost::Exp2Log2;
        if (float_math) w.flops += times * op.lanes * (op.kind == OpKind::Mad ? 2 : 1);
        return;
      }
      case OpKind::SubgroupReduce: {
        // log2(width) steps, each a shuffle and a combining op.
        const double steps = std::log2(static_cast<double>(std::max<std::uint32_t>(op.attr, 2)));
        add_op(w, OpCost::Move, times * steps, 1);
        add_op(w, classify(op), times * steps, 1);
        return;
      }
      case OpKind::DotBf16:
        // One instruction of two multiply-adds per lane (VDPBF16PS).
        add_op(w, OpCost::FloatAlu, times, op.lanes);
        w.flops += times * op.lanes * 4;
        return;
      case OpKind::Bf16Pair:
        add_op(w, OpCost::IntAlu, times, op.lanes);
        return;
      case OpKind::Barrier:
        w.barriers += times;
        return;
      case OpKind::Load: case OpKind::Store: case OpKind::CopyAsync: case OpKind::LoadMatrix:
        count_access(w, blocks, id, times);
        return;
      default:
        return;
    }
  }

  void count_access(WorkCounts& w, const ir::Blocks& blocks, ValueId id, double times) {
    const ir::Op& op = k_[id];
    const ValueId memory = op.src[0];
    if (memory >= k_.size()) return;
    const double bytes = static_cast<double>(op.lanes) * ir::dtype_bytes(op.dtype);
    const ir::Op& m = k_[memory];
    if (m.kind == OpKind::Storage) {
      const bool local = m.scope() == ir::Scope::Local;
      (local ? w.local_bytes : w.register_bytes) += times * bytes;
      (local ? w.local_accesses : w.register_accesses) += times;
      return;
    }
    w.global_accesses += times;
    w.global_bytes_used += times * bytes;
    w.global_bytes_moved += times * (warp_ > 1 ? moved_per_thread_gpu(op.src[1], ir::dtype_bytes(op.dtype), bytes)
                                                : moved_per_access_cpu(blocks, id, bytes));
  }

  static std::int64_t coefficient(const ir::AffineForm& form, ValueId atom) {
    for (const auto& [a, c] : form.terms)
      if (a == atom) return c;
    return 0;
  }

  // Whether the affine form has atoms, other than the LOCAL indices, that
  // may differ between the threads of a warp (loaded data, ...).
  bool other_varying_atoms(const ir::AffineForm& form) const {
    for (const auto& [atom, c] : form.terms) {
      const ir::Op& op = k_[atom];
      if (op.kind == OpKind::Index || op.kind == OpKind::Loop || op.kind == OpKind::Const) continue;
      if (op.kind == OpKind::Param) continue;  // a VARIABLE value: the same for all threads
      // Any expression the same in every thread of the group (a row's first
      // aligned element, (base + 7) / 8 * 8: split_aligned) shifts the warp's
      // addresses without spreading them.
      if (atom < thread_varying_.size() && !thread_varying_[atom]) continue;
      return true;  // a load or a non-affine expression: may differ per thread
    }
    return false;
  }

  // Bytes memory moves per thread for one access on a GPU: the warp's
  // threads are linear thread ids, LOCAL axis 0 fastest; a warp touches
  // 32-byte sectors, shared by neighbours whose addresses are close. With
  // fewer threads per group than a warp, the warp has only those threads.
  //
  // A vector wider than one access (8 f32 lanes: 32 bytes) is issued as
  // 16-byte pieces whose warp-wide addresses are strided by the whole
  // vector, so each piece touches every sector the vector spans and uses
  // half of each: counted per piece. On the H200 the split_loop(8) +
  // vectorize(8) row recipes ran 1.2-1.4x slower in f32 than their
  // 4-lane twins (softmax 16384^2: 669 against 536 us), where the model
  // had priced both the same and the heuristic took the 8-lane one.
  double moved_per_thread_gpu(ValueId index, double element_bytes, double access_bytes) const {
    if (access_bytes > kMaxGpuAccessBytes)
      return std::ceil(access_bytes / kMaxGpuAccessBytes) *
             moved_per_piece_gpu(index, element_bytes, kMaxGpuAccessBytes);
    return moved_per_piece_gpu(index, element_bytes, access_bytes);
  }

  double moved_per_piece_gpu(ValueId index, double element_bytes, double access_bytes) const {
    const double warp_threads = std::max(1.0, std::min<double>(warp_, threads_));
    const double row = std::max(1.0, std::min(warp_threads, local_[0]));  // threads along axis 0 in a warp
    const double rows = std::ceil(warp_threads / row);
    const double own_sectors = std::ceil(access_bytes / kSectorBytes);
    const auto form = ir::affine_form(k_, index);
    if (!form || other_varying_atoms(*form)) return own_sectors * kSectorBytes;  // no coalescing assumed
    auto stride_along = [&](int axis) {
      const ValueId atom = local_index_[static_cast<std::size_t>(axis)];
      return atom == ir::kNoValue ? 0.0 : static_cast<double>(std::llabs(coefficient(*form, atom)));
    };
    double sectors = own_sectors;  // every thread of the row reads the same address: one broadcast
    if (const double stride_bytes = stride_along(0) * element_bytes; stride_bytes != 0) {
      sectors = stride_bytes <= kSectorBytes ? std::ceil((stride_bytes * (row - 1) + access_bytes) / kSectorBytes)
                                             : row * own_sectors;
    }
    const double distinct_rows = stride_along(1) == 0 ? 1 : rows;
    return distinct_rows * sectors * kSectorBytes / warp_threads;
  }

  // Bytes per access on a CPU: contiguous along the innermost loop (or grid
  // axis 0 outside loops) streams; a stride costs a cache line per access.
  double moved_per_access_cpu(const ir::Blocks& blocks, ValueId id, double bytes) const {
    ValueId fastest = group0_;
    for (ValueId p = blocks.parent[id]; p != ir::kNoValue; p = blocks.parent[p])
      if (k_[p].kind == OpKind::Loop) {
        fastest = p;
        break;
      }
    const auto form = ir::affine_form(k_, k_[id].src[1]);
    if (!form) return std::max(bytes, kCacheLineBytes);
    const double element = bytes / k_[id].lanes;
    const double stride = fastest == ir::kNoValue ? 0 : static_cast<double>(std::llabs(coefficient(*form, fastest)));
    if (stride * element <= bytes) return bytes;  // unit stride (or the vector's own width), or invariant
    return std::max(bytes, std::min(kCacheLineBytes, stride * element));
  }

  const ir::Kernel& k_;
  const DeviceInfo& device_;
  std::vector<kiln_op> wire_;
  std::vector<std::optional<Range>> ranges_;
  std::vector<kiln_arg> args_;
  std::vector<bool> thread_varying_;  // per op: may differ between a group's threads
  std::uint32_t warp_ = 1;
  std::uint32_t vector_width_ = 1;
  std::array<ValueId, 3> local_index_ = {ir::kNoValue, ir::kNoValue, ir::kNoValue};
  ValueId group0_ = ir::kNoValue;
  std::array<double, 3> local_ = {1, 1, 1};
  double threads_ = 1;
};

}  // namespace

WorkCounts count_work(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const std::int64_t> variables) {
  return Counter(kernel, device, variables).run();
}

}  // namespace kiln::passes::detail
