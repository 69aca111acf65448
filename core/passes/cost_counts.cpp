// Counting a kernel's work for the cost model: trip counts and grid lengths
// from constants or the given VARIABLE values (else kUnknownLength, or the
// bound a value range gives), ops by class, and memory traffic by space
// with global accesses priced by their stride along the fastest-varying
// thread coordinate (GPUs) or the innermost loop / grid axis 0 (CPUs); on a
// GPU a load the same in every thread of a group moves its sectors once per
// group (the L1 serves the group's other warps).
#include "cost_counts.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "value_range.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
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
      : k_(kernel), device_(device), wire_(kernel.to_wire()), ranges_(sdk::integer_ranges(wire_)) {
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
    find_siblings(blocks);
    std::vector<double> multiplicity(k_.size() + 1, 1.0);  // per thread, of ops in each block
    std::vector<double> traffic(k_.size() + 1, 1.0);       // the same for the global bytes they move
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
      const double moved_times = blocks.parent[id] == ir::kNoValue ? 1.0 : traffic[blocks.parent[id]];
      const Stretch before = stretch(w);
      if (op.kind == OpKind::Loop || op.kind == OpKind::If) {
        // An IF's instructions count as taken (its body joins the enclosing
        // phases once); the global bytes its body moves count in the share
        // of threads and iterations that take it (taken_share).
        const bool loop = op.kind == OpKind::Loop;
        const double trips = loop ? length(op.src[0]) : 1;
        multiplicity[id] = times * trips;
        traffic[id] = moved_times * (loop ? trips : taken_share(blocks, id));
        // A loop: an increment and a branch per iteration.
        add_op(w, OpCost::Control, (loop ? 2 : 1) * times * trips, 1);
        open.push_back({id, trips, Phases(bytes_per)});
      } else {
        count_op(w, blocks, id, times, moved_times);
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

  // The share of a launch's passes through IF `id` that take it (1 where
  // unknown), for the global bytes its body moves: a thread that skips the
  // body moves none of them. Counted where the condition compares two
  // affine i64 values (x < y, x > y, x == y, x != y) that differ between a
  // group's threads: lid + 6144 < 6281, the 13th block of 8 that 137 of
  // 512 threads read in each pass of the tuned softmax rows at n = 50257
  // (split_aligned, peel_loop, tiled_reduce; 128 of that kernel's 1335 MB
  // counted for all 512), k * 512 + lid < n in a rolled row loop,
  // g * 256 + lid < n (bounds_guard). The share is exact over the atoms of
  // x - y that cover their values evenly (grid indices and the counters of
  // enclosing loops, of lengths the host evaluates); a constant or VARIABLE
  // atom is its value; any other atom (a row's aligned start) takes the end
  // of its value range where the IF is taken most (an upper bound); an
  // atom with no range leaves the IF taken.
  //
  // The instructions stay counted as taken: a warp issues the body when any
  // of its threads take it, and the tree steps that whole warps skip
  // (lid < 128 of 512) are bound by latency, which the model does not
  // count (their issue stands for it). Priced by the share too, the trees
  // moved ten row picks on the H200-shaped description. A condition the
  // same in all of a group's threads stays taken: in the standard kernels
  // these are the staged matrix products' prefetch guards (kt + 2 < tiles),
  // whose over-fetch priced by its share moved matmul 4096^3 f16 from
  // bk=32 to bk=64 there by 0.4%, unmeasured.
  double taken_share(const ir::Blocks& blocks, ValueId id) {
    const ValueId cond = k_[id].src[0];
    if (cond >= id) return 1;
    const ir::Op& c = k_[cond];
    if (c.kind != OpKind::Binary || c.lanes != 1) return 1;
    const ir::BinaryOp cmp = c.binary();
    if (cmp != ir::BinaryOp::CmpLt && cmp != ir::BinaryOp::CmpGt && cmp != ir::BinaryOp::Eq &&
        cmp != ir::BinaryOp::NotEq)
      return 1;
    if (cond >= thread_varying_.size() || !thread_varying_[cond]) return 1;
    const auto x = affine_.of(c.src[0]);
    const auto y = affine_.of(c.src[1]);
    if (!x || !y) return 1;
    // d = x - y: the condition is d < 0, d > 0, d == 0 or d != 0.
    std::int64_t constant = 0;
    if (__builtin_sub_overflow(x->constant, y->constant, &constant)) return 1;
    std::vector<std::pair<ValueId, std::int64_t>> d = x->terms;
    for (const auto& [y_atom, coefficient] : y->terms) {
      const ValueId atom = y_atom;  // (clang 14 does not capture structured bindings)
      const auto at = std::find_if(d.begin(), d.end(), [&](const auto& t) { return t.first == atom; });
      const std::size_t i = static_cast<std::size_t>(at - d.begin());
      if (i == d.size()) d.push_back({atom, 0});
      if (__builtin_sub_overflow(d[i].second, coefficient, &d[i].second)) return 1;
    }
    struct Term {
      ValueId atom;
      std::int64_t coefficient;
      std::int64_t count;  // the atom takes 0 .. count - 1, each as often
    };
    std::vector<Term> terms;
    std::vector<ValueId> atoms;  // every atom the condition depends on
    const auto fold = [&](std::int64_t value) { return !__builtin_add_overflow(constant, value, &constant); };
    for (const auto& [atom, coefficient] : d) {
      if (coefficient == 0) continue;
      atoms.push_back(atom);
      const ir::Op& a = k_[atom];
      const bool counted = a.kind == OpKind::Loop || (a.kind == OpKind::Index && a.attr <= 2);
      if (const auto count = counted ? host_value(a.src[0]) : std::nullopt) {
        if (*count > 0) terms.push_back({atom, coefficient, *count});
        continue;  // (a loop that never runs never reaches the IF)
      }
      std::int64_t product = 0;
      if (const auto value = host_value(atom)) {  // a VARIABLE, or constants through non-affine ops
        if (__builtin_mul_overflow(*value, coefficient, &product) || !fold(product)) return 1;
        continue;
      }
      // Any other value (a row's aligned start, a loop count that depends
      // on the row) within its value range: its end that takes the IF most
      // often (d < 0 is likeliest where c * atom is least). An upper bound
      // of the share, whatever the atom's values are.
      const std::optional<Range> range = atom < ranges_.size() ? ranges_[atom] : std::nullopt;
      if (!range || (cmp != ir::BinaryOp::CmpLt && cmp != ir::BinaryOp::CmpGt)) return 1;
      std::int64_t lo = 0, hi = 0;
      if (__builtin_mul_overflow(range->lo, coefficient, &lo) || __builtin_mul_overflow(range->hi, coefficient, &hi))
        return 1;
      if (!fold(cmp == ir::BinaryOp::CmpLt ? std::min(lo, hi) : std::max(lo, hi))) return 1;
    }
    // Inside an IF counted by a share, a condition over one of its atoms is
    // not independent of it (lid < 32 within lid < 128): taken, given the
    // outer one.
    for (ValueId p = blocks.parent[id]; p != ir::kNoValue; p = blocks.parent[p]) {
      const auto outer = share_atoms_.find(p);
      if (outer == share_atoms_.end()) continue;
      for (const ValueId atom : atoms)
        if (std::find(outer->second.begin(), outer->second.end(), atom) != outer->second.end()) return 1;
    }
    // Enumerate all atoms but the one of the most values, which is counted
    // in closed form (a few thousand steps at most, else taken).
    std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.count < b.count; });
    const Term last = terms.empty() ? Term{ir::kNoValue, 0, 1} : terms.back();
    if (!terms.empty()) terms.pop_back();
    constexpr std::int64_t kMaxSteps = 1 << 14;
    std::int64_t steps = 1;
    for (const Term& t : terms)
      if (__builtin_mul_overflow(steps, t.count, &steps) || steps > kMaxSteps) return 1;
    std::vector<std::int64_t> value(terms.size(), 0);
    double taken = 0;
    for (std::int64_t step = 0; step < steps; ++step) {
      std::int64_t base = constant;
      for (std::size_t i = 0; i < terms.size(); ++i) {
        std::int64_t product = 0;
        if (__builtin_mul_overflow(terms[i].coefficient, value[i], &product) ||
            __builtin_add_overflow(base, product, &product))
          return 1;
        base = product;
      }
      const auto count = satisfying(cmp, base, last.coefficient, last.count);
      if (!count) return 1;
      taken += static_cast<double>(*count);
      for (std::size_t i = 0; i < terms.size() && ++value[i] == terms[i].count; ++i) value[i] = 0;  // next combination
    }
    const double share = taken / (static_cast<double>(steps) * static_cast<double>(last.count));
    if (share < 1) share_atoms_[id] = std::move(atoms);
    return share;
  }

  // How many v in [0, count) give a + b v < 0 (CmpLt), > 0, == 0 or != 0;
  // nullopt if the arithmetic would overflow.
  static std::optional<std::int64_t> satisfying(ir::BinaryOp cmp, std::int64_t a, std::int64_t b, std::int64_t count) {
    constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
    if (a == kMin || b == kMin) return std::nullopt;  // so that -a, -b and -a - 1 hold
    const auto floor_div = [](std::int64_t p, std::int64_t q) { return p / q - (p % q != 0 && (p < 0) != (q < 0)); };
    // v with a + b v < 0: all or none for b = 0; v <= floor((-a - 1) / b)
    // for b > 0; v >= floor(a / -b) + 1 for b < 0.
    const auto below = [&](std::int64_t a, std::int64_t b) -> std::int64_t {
      if (b == 0) return a < 0 ? count : 0;
      if (b > 0) return std::clamp<std::int64_t>(floor_div(-a - 1, b) + 1, 0, count);
      return count - std::clamp<std::int64_t>(floor_div(a, -b) + 1, 0, count);
    };
    const std::int64_t less = below(a, b), greater = below(-a, -b);
    switch (cmp) {
      case ir::BinaryOp::CmpLt: return less;
      case ir::BinaryOp::CmpGt: return greater;
      case ir::BinaryOp::Eq: return count - less - greater;
      default: return less + greater;
    }
  }

  // The value of a host-evaluable integer expression (constants, VARIABLE
  // values), exactly; nullopt otherwise.
  std::optional<std::int64_t> host_value(ValueId id) {
    try {
      return sdk::eval_host_expr(wire_, id, args_);
    } catch (const sdk::PluginError&) {
    }
    return std::nullopt;
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

  void count_op(WorkCounts& w, const ir::Blocks& blocks, ValueId id, double times, double moved_times) {
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
        count_access(w, blocks, id, times, moved_times);
        return;
      default:
        return;
    }
  }

  void count_access(WorkCounts& w, const ir::Blocks& blocks, ValueId id, double times, double moved_times) {
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
    w.global_bytes_used += moved_times * bytes;
    if (warp_ <= 1) {
      w.global_bytes_moved += moved_times * moved_per_access_cpu(blocks, id, bytes);
      return;
    }
    // A load whose address is the same in every thread of the group moves
    // its sectors once per group: the first warp's access misses, the L1
    // serves the group's other warps. The group moves them when any of its
    // threads takes the load, so an IF's share of threads does not scale
    // them: counted as taken (an upper bound).
    if (op.kind == OpKind::Load && same_in_every_thread(op.src[1])) {
      w.global_bytes_moved += times * moved_once_per_group_gpu(bytes);
      return;
    }
    w.global_bytes_moved += moved_times * moved_per_thread_gpu(id, op.src[1], ir::dtype_bytes(op.dtype), bytes);
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

  // Whether an index is the same in every thread of the group (it may
  // differ between groups): no LOCAL index in its affine form, and no other
  // atom that may differ between the group's threads.
  bool same_in_every_thread(ValueId index) const {
    const auto form = affine_.of(index);
    if (!form || other_varying_atoms(*form)) return false;
    for (const auto& [atom, c] : form->terms)
      if (c != 0 && k_[atom].kind == OpKind::Index && k_[atom].scope() == ir::Scope::Local) return false;
    return true;
  }

  // Bytes per thread of a GPU load the same in every thread of the group:
  // the sectors a warp's broadcast moves (each 16-byte piece's, as
  // moved_per_thread_gpu counts them), once per group instead of once per
  // warp. split_aligned's scalar heads and tails are such loads (a row's
  // first and last elements, read in every thread): at a sector a warp
  // they were 87 MB of the 1185 MB the tuned softmax f16 rows at n = 50257
  // were priced (blocks of 8 at 512 threads, 0.76x of add on the H200),
  // bytes the L1 serves. Once per group, softmax f32's untuned pick there
  // becomes the aligned blocks cached in registers (0.80x by hand, against
  // 0.68x for the register-cached scalar row it took before).
  double moved_once_per_group_gpu(double access_bytes) const {
    const Pieces pieces = gpu_pieces(access_bytes);
    return pieces.count * std::ceil(pieces.bytes / kSectorBytes) * kSectorBytes / std::max(1.0, threads_);
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
  // A GPU access wider than a thread's widest load: pieces of 16 bytes.
  struct Pieces {
    double count;
    double bytes;  // each
  };
  static Pieces gpu_pieces(double access_bytes) {
    if (access_bytes > kMaxGpuAccessBytes) return {std::ceil(access_bytes / kMaxGpuAccessBytes), kMaxGpuAccessBytes};
    return {1, access_bytes};
  }

  double moved_per_thread_gpu(ValueId access, ValueId index, double element_bytes, double access_bytes) const {
    const Pieces pieces = gpu_pieces(access_bytes);
    return pieces.count * moved_per_piece_gpu(access, index, element_bytes, pieces.bytes);
  }

  // Scalar GPU loads of one buffer in one block whose indices differ by a
  // constant only: the lanes of an unrolled block that vectorize left
  // scalar (rmsnorm's weight after split_aligned: its blocks start where the
  // row's do, not at multiples of the block). A warp's instructions of one
  // such group touch the same sectors, which the L1 serves after the first:
  // each is priced at its share of the sectors the group spans together.
  // Without it the weight of rmsnorm at n = 50257 in blocks of 4 halves was
  // priced 8 bytes an element instead of 2, and the untuned pick was a
  // scalar row (0.63x of add on the H100) where the aligned blocks ran
  // 0.93x tuned.
  struct SiblingAccesses {
    std::int64_t low = 0, high = 0;  // the constants of their indices
    int count = 0;
  };
  // On a GPU, scalar loads; on a CPU, the loads and (apart) the stores of
  // any width (moved_per_access_cpu).
  void find_siblings(const ir::Blocks& blocks) {
    using Key = std::tuple<ValueId, OpKind, ValueId, std::vector<std::pair<ValueId, std::int64_t>>>;
    std::map<Key, std::size_t> group_of;
    sibling_of_.assign(k_.size(), SIZE_MAX);
    for (ValueId id = 0; id < k_.size(); ++id) {
      const ir::Op& op = k_[id];
      const bool counted = warp_ > 1 ? op.kind == OpKind::Load && op.lanes == 1
                                     : op.kind == OpKind::Load || op.kind == OpKind::Store;
      if (!counted || k_[op.src[0]].kind != OpKind::Param) continue;
      const auto form = affine_.of(op.src[1]);
      if (!form) continue;
      const auto [at, fresh] =
          group_of.emplace(Key{blocks.parent[id], op.kind, op.src[0], form->terms}, siblings_.size());
      if (fresh) siblings_.push_back({form->constant, form->constant, 0});
      SiblingAccesses& g = siblings_[at->second];
      g.low = std::min(g.low, form->constant);
      g.high = std::max(g.high, form->constant);
      ++g.count;
      sibling_of_[id] = at->second;
    }
  }

  double moved_per_piece_gpu(ValueId access, ValueId index, double element_bytes, double access_bytes) const {
    const double warp_threads = std::max(1.0, std::min<double>(warp_, threads_));
    const double row = std::max(1.0, std::min(warp_threads, local_[0]));  // threads along axis 0 in a warp
    const double rows = std::ceil(warp_threads / row);
    const double own_sectors = std::ceil(access_bytes / kSectorBytes);
    const auto form = affine_.of(index);
    if (!form || other_varying_atoms(*form)) return own_sectors * kSectorBytes;  // no coalescing assumed
    auto stride_along = [&](int axis) {
      const ValueId atom = local_index_[static_cast<std::size_t>(axis)];
      return atom == ir::kNoValue ? 0.0 : static_cast<double>(std::llabs(coefficient(*form, atom)));
    };
    double sectors = own_sectors;  // every thread of the row reads the same address: one broadcast
    if (const double stride_bytes = stride_along(0) * element_bytes; stride_bytes != 0) {
      sectors = stride_bytes <= kSectorBytes ? std::ceil((stride_bytes * (row - 1) + access_bytes) / kSectorBytes)
                                             : row * own_sectors;
      // A scalar load with siblings (find_siblings) spread less than a
      // thread's stride apart: its share of the sectors they span together.
      if (access < sibling_of_.size() && sibling_of_[access] != SIZE_MAX && stride_bytes <= kSectorBytes) {
        const SiblingAccesses& g = siblings_[sibling_of_[access]];
        const double spread = static_cast<double>(g.high - g.low) * element_bytes;
        if (g.count > 1 && spread < stride_bytes)
          sectors = std::min(
              sectors, std::ceil((stride_bytes * (row - 1) + spread + access_bytes) / kSectorBytes) / g.count);
      }
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
    const ir::Op& op = k_[id];
    const auto form = affine_.of(op.src[1]);
    if (!form) return std::max(bytes, kCacheLineBytes);
    const double element = bytes / op.lanes;
    const double stride = fastest == ir::kNoValue ? 0 : static_cast<double>(std::llabs(coefficient(*form, fastest)));
    // Only a STORE of a whole 64-byte vector (16 halves: 32 bytes) at an
    // aligned index can stream (the C plugin's non-temporal stores); any
    // other reads each line it writes first. A vector at any element index
    // (KILN_ACCESS_UNALIGNED), rows of 50257 on c:0, 2026-12-05: softmax f32
    // 26-29 GB/s so against 31-42 on split_aligned's aligned blocks, the
    // norms 23-30 against 33-41 (docs/passes.md, "CPU figures"). Scalar
    // stores (a writing loop left unvectorized), rmsnorm f32 1024 x 50257,
    // 2026-12-06: 26 GB/s against 31.
    const bool half = op.dtype == ir::DType::F16 || op.dtype == ir::DType::BF16;
    const bool whole_line = half ? op.lanes == 16 : op.lanes * element == kCacheLineBytes;
    const bool read_for_ownership = op.kind == OpKind::Store && (op.attr == KILN_ACCESS_UNALIGNED || !whole_line);
    // Siblings (find_siblings: the same buffer and index but for a
    // constant, in the same block) that together cover the stride densely,
    // e.g. lane_reduce's 32 lanes as two 16-wide loads an iteration, stream
    // as one access of the stride's bytes (counted before 2026-12-06 as a
    // line each: lane partials 16 times their bytes).
    bool dense = stride * element <= bytes;  // unit stride, or invariant
    if (!dense && id < sibling_of_.size() && sibling_of_[id] != SIZE_MAX) {
      const SiblingAccesses& g = siblings_[sibling_of_[id]];
      const double span = static_cast<double>(g.high - g.low) * element + bytes;
      dense = g.count > 1 && span >= stride * element && g.count * bytes >= stride * element;
    }
    if (dense) return read_for_ownership ? 2 * bytes : bytes;
    return std::max(bytes, std::min(kCacheLineBytes, stride * element));
  }

  const ir::Kernel& k_;
  const DeviceInfo& device_;
  std::vector<kiln_op> wire_;
  std::vector<std::optional<Range>> ranges_;
  // Every index's affine form, memoized (a cache: the const counting methods fill it too).
  mutable ir::AffineForms affine_{k_};
  std::unordered_map<ValueId, std::vector<ValueId>> share_atoms_;  // per IF counted by a share < 1: its atoms
  std::vector<kiln_arg> args_;
  std::vector<bool> thread_varying_;  // per op: may differ between a group's threads
  std::vector<SiblingAccesses> siblings_;
  std::vector<std::size_t> sibling_of_;  // per op: its group in siblings_ (SIZE_MAX: none)
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
