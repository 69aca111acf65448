// simt_staged(bm, bn, bk, wm, wn, tm, tn, stages): exact f32 matrix
// products (the kernels mma_staged matches, opt_mma_match.hpp, with f32 A
// and B) on plain FMAs, in the structure of the classic SIMT sgemm (CUTLASS's
// SIMT kernels, "maxas"): docs/passes.md, "simt_staged", has the why.
//
// A group of wm x wn warps computes a bm x bn block of C; each warp a
// (bm / wm) x (bn / wn) block, its 32 lanes arranged lm x ln (lm * ln = 32,
// ln along n), each lane a tm x tn tile made of (tm / 4) x (tn / 4) pieces of
// 4 x 4 spread over the warp's block: lane (lr, lc) owns rows
// q * 4 lm + 4 lr + 0..3 and columns q * 4 ln + 4 lc + 0..3. So per k a lane
// reads its A values as tm / 4 16-byte vectors and its B values as tn / 4
// (LDS.128), the lanes of a warp reading distinct 16-byte pieces of one k row
// or the same one (broadcast): no bank conflicts.
//
// LOCAL tiles, both [k][row] (A transposed on its way in), rows padded by 4
// elements so that the transposing stores of 4 k values of a row spread
// over the banks. stages = 2: the tiles of step s + 1 are loaded into
// registers before the FMAs of step s and stored into the other buffer after
// them, one barrier per step; stages = 1: load, store, barrier, FMAs,
// barrier; async = 1: 2 to 4 buffers filled by COPY_ASYNC (cp.async), A
// then [row][k] (Plan::a_rows). Global loads are 16-byte vectors where the
// operand's fastest dimension is 4-aligned.
//
// Edges: rows, columns and k past the matrix load 0 (read at the clamped
// coordinate, the value SELECTed), C stores outside it under an IF. Numerics: each C element
// is acc = mad(a, b, acc) over k ascending from +0, the untuned kernel's
// order and operations; the padded k add +0 to an accumulator that is never
// -0: bit for bit the untuned kernel.
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/verify.hpp"
#include "kernel_writer.hpp"
#include "opt_mma_match.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace kiln::passes::opts {

namespace {

using ir::DType;
using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;
using mma::Product;

constexpr std::string_view kName = "simt_staged";
constexpr std::int64_t kVec = 4;  // elements of a 16-byte f32 vector
constexpr std::int64_t kPad = 4;  // LOCAL row padding, elements

struct Config {
  std::int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, tm = 0, tn = 0, stages = 2;
  // The tiles are filled by asynchronous copies (COPY_ASYNC: 16-byte chunks
  // as they are in memory, `stages` buffers, no registers in between), A
  // then [row][k] (see Plan).
  bool async = false;
  std::int64_t warps() const { return wm * wn; }
  std::int64_t threads() const { return 32 * warps(); }
  std::int64_t lm() const { return bm / wm / tm; }  // lanes along m in a warp
  std::int64_t ln() const { return bn / wn / tn; }  // ... along n
};

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

// How one operand's tile is copied: units of `vec` consecutive elements
// along its fastest memory dimension (k, or the row / column).
struct Copy {
  bool k_fast = false;    // the unit runs along k (A[i, k], B^T): transposed into [k][row]
  std::int64_t vec = 1;   // elements per unit
  std::int64_t units = 0; // units per tile
};

// index = c0 * row + c1 * k + constant (A), c0 * k + c1 * col + constant (B).
Copy copy_of(const mma::Affine2& index, bool a_side, std::int64_t block, std::int64_t bk, std::int64_t length,
             std::int64_t k) {
  Copy copy;
  const std::int64_t k_coefficient = a_side ? index.c1 : index.c0;
  const std::int64_t row_coefficient = a_side ? index.c0 : index.c1;
  copy.k_fast = k_coefficient == 1;
  const std::int64_t other = copy.k_fast ? row_coefficient : k_coefficient;
  const std::int64_t fast_length = copy.k_fast ? k : length;
  const bool fast_is_unit = copy.k_fast || row_coefficient == 1;
  if (fast_is_unit && other % kVec == 0 && index.constant % kVec == 0 && fast_length % kVec == 0) copy.vec = kVec;
  if (!fast_is_unit) copy.k_fast = false;
  copy.units = block * bk / copy.vec;
  return copy;
}

struct Plan {
  Copy a, b;
  // A's tile is [row][k] (async copies cannot transpose): a lane then reads
  // 4 k of one row per 16-byte load, its rows lm apart (lr + lm i), so that
  // the rows a warp reads at once are consecutive: with rows of bk + 4
  // elements their 16-byte pieces fall on distinct banks.
  bool a_rows = false;
  std::int64_t a_pitch = 0, b_pitch = 0;  // elements per k row of the LOCAL tiles
  std::int64_t a_size = 0, b_size = 0;    // elements of one stage
  bool c_vectors = false;                 // C's 4 columns of a piece as one store
};

Plan plan_of(const Product& p, const Config& s) {
  Plan plan;
  const std::int64_t m = p.mp.lengths[0], n = p.mp.lengths[1], k = p.mp.trip_count;
  plan.a = copy_of(p.a, true, s.bm, s.bk, m, k);
  plan.b = copy_of(p.b, false, s.bn, s.bk, n, k);
  plan.a_rows = s.async;
  plan.a_pitch = plan.a_rows ? s.bk + kPad : s.bm + kPad, plan.b_pitch = s.bn + kPad;
  plan.a_size = plan.a_rows ? s.bm * plan.a_pitch : s.bk * plan.a_pitch, plan.b_size = s.bk * plan.b_pitch;
  plan.c_vectors = p.c.c1 == 1 && p.c.c0 % kVec == 0 && p.c.constant % kVec == 0 && n % kVec == 0;
  return plan;
}

bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Why the config does not fit the product or the device, or "".
std::string misfit(const Product& p, const Config& s, const DeviceInfo& device) {
  if (p.input != DType::F32) return "A and B are " + std::string(ir::dtype_name(p.input)) + " (simt_staged takes f32)";
  if ((device.vector_width_mask & (1u << kVec)) == 0) return "the device has no 4-lane vectors";
  for (std::int64_t v : {s.bm, s.bn})
    if (v < 16 || v > 256 || !power_of_two(v)) return "bm and bn must be powers of two in 16..256";
  if (s.bk != 4 && s.bk != 8 && s.bk != 16 && s.bk != 32) return "bk must be 4, 8, 16 or 32";
  if (s.tm != 4 && s.tm != 8 && s.tm != 16) return "tm must be 4, 8 or 16";
  if (s.tn != 4 && s.tn != 8 && s.tn != 16) return "tn must be 4, 8 or 16";
  for (std::int64_t w : {s.wm, s.wn})
    if (!power_of_two(w) || w > 8) return "wm and wn must be 1, 2, 4 or 8";
  if (s.warps() > 8) return "at most 8 warps per group";
  if (!s.async && s.stages != 1 && s.stages != 2) return "stages must be 1 or 2 (3 and 4 with async=1)";
  if (s.async && (s.stages < 2 || s.stages > 4)) return "async copies need 2 to 4 stages";
  if (s.async && !device.supports_op_kind(KILN_OP_COPY_ASYNC, KILN_DTYPE_F32))
    return "async=1 needs a device with asynchronous copies (copy_async)";
  if (s.bm % (s.wm * s.tm) != 0 || s.bn % (s.wn * s.tn) != 0 || s.lm() * s.ln() != 32)
    return "a warp's block (" + std::to_string(s.bm / s.wm) + " x " + std::to_string(s.bn / s.wn) +
           ") must be 32 lanes' tiles of tm x tn (" + std::to_string(s.tm) + " x " + std::to_string(s.tn) + ")";
  if (s.threads() > device.max_local_threads || s.threads() > device.max_local_dims[0])
    return std::to_string(s.threads()) + " threads per group exceed the device's " + std::to_string(device.max_local_threads);
  const Plan plan = plan_of(p, s);
  if (s.async && (!plan.a.k_fast || plan.a.vec != kVec || plan.b.k_fast || plan.b.vec != kVec))
    return "async copies move 16-byte chunks: A must be contiguous along k and B along n, in whole chunks";
  if (plan.a.units % s.threads() != 0 || plan.b.units % s.threads() != 0)
    return "the " + std::to_string(s.threads()) + " threads do not divide the tile copies (A " +
           std::to_string(plan.a.units) + ", B " + std::to_string(plan.b.units) + " units)";
  const std::uint64_t local = static_cast<std::uint64_t>(s.stages * (plan.a_size + plan.b_size) * 4);
  if (local > device.local_memory_bytes)
    return "the tiles need " + std::to_string(local) + " LOCAL bytes; the device has " + std::to_string(device.local_memory_bytes);
  // The accumulators within half of what the group's registers allow per
  // thread (the other half for the fragments, the staged copies and
  // addresses), as mma_staged counts them.
  const std::uint64_t acc = static_cast<std::uint64_t>(4 * s.tm * s.tn);
  const std::uint64_t budget = device.register_bytes *
                               static_cast<std::uint64_t>(std::max<std::int64_t>(device.max_local_threads, 1)) /
                               static_cast<std::uint64_t>(s.threads()) / 2;
  if (device.register_bytes > 0 && acc > budget)
    return "the accumulators need " + std::to_string(acc) + " REGISTER bytes per thread (at most " +
           std::to_string(budget) + ")";
  return "";
}

// Emits the staged SIMT kernel.
class Emitter : private KernelWriter {
  friend class KernelWriter;  // staged_k_loop copies and computes through the private members

 public:
  Emitter(const Kernel& old, const Product& p, const Config& s) : old_(old), p_(p), s_(s), plan_(plan_of(p, s)) {}

  Kernel run() {
    const tile::MatrixProduct& mp = p_.mp;
    m_ = mp.lengths[0], n_ = mp.lengths[1], k_ = mp.trip_count;
    guard_m_ = m_ % s_.bm != 0, guard_n_ = n_ % s_.bn != 0, guard_k_ = k_ % s_.bk != 0;
    for (ValueId id = 0; id < old_.size(); ++id)
      if (old_[id].kind == OpKind::Param) params_[id] = b_.append(old_[id]);
    a_mem_ = params_.at(p_.a_param), b_mem_ = params_.at(p_.b_param);

    const Value gn = b_.group_index(mp.axes[1], c(ceil_div(n_, s_.bn)));
    const Value gm = b_.group_index(mp.axes[0], c(ceil_div(m_, s_.bm)));
    tid_ = b_.local_index(0, static_cast<std::uint32_t>(s_.threads()));
    m0_ = b_.mul(gm, c(s_.bm)), n0_ = b_.mul(gn, c(s_.bn));
    const Value lane = s_.warps() == 1 ? tid_ : b_.mod(tid_, c(32));
    const Value warp = s_.warps() == 1 ? c(0) : b_.div(tid_, c(32));
    const Value wrow = s_.wn == 1 ? b_.mul(warp, c(s_.bm / s_.wm)) : b_.mul(b_.div(warp, c(s_.wn)), c(s_.bm / s_.wm));
    const Value wcol = s_.wn == 1 ? c(0) : b_.mul(b_.mod(warp, c(s_.wn)), c(s_.bn / s_.wn));
    // The lane's first row and column within the block: lanes along n
    // first, so a warp's lanes read consecutive 16-byte pieces of B's row.
    row_ = b_.add(wrow, scaled(b_.div(lane, c(s_.ln())), plan_.a_rows ? 1 : kVec));
    col_ = b_.add(wcol, scaled(b_.mod(lane, c(s_.ln())), kVec));
    zero_ = b_.constant(DType::F32, 0.0);

    a_local_ = b_.storage(ir::Scope::Local, DType::F32, static_cast<std::uint64_t>(s_.stages * plan_.a_size));
    b_local_ = b_.storage(ir::Scope::Local, DType::F32, static_cast<std::uint64_t>(s_.stages * plan_.b_size));
    acc_ = b_.storage(ir::Scope::Register, DType::F32, static_cast<std::uint64_t>(s_.tm * s_.tn));
    const Value zero4 = b_.broadcast(zero_, kVec);
    for (std::int64_t q = 0; q < s_.tm * s_.tn / kVec; ++q) b_.store(acc_, c(kVec * q), zero4);

    const std::int64_t steps = ceil_div(k_, s_.bk);
    staged_k_loop(*this, steps, s_.async, s_.stages);
    store_c();
    return b_.finish();
  }

 private:
  // The lane's i-th row, from its first (row_).
  std::int64_t row_offset(std::int64_t i) const {
    return plan_.a_rows ? i * s_.lm() : (i / kVec) * kVec * s_.lm() + i % kVec;
  }

  // What a thread's copy unit needs that does not change with the k step,
  // computed once before the loop (inside it the copies sit under an IF,
  // which keeps LICM from hoisting them).
  struct CopyUnit {
    Value source;  // element index of the chunk without its k term (row or column clamped)
    Value local;   // element index in stage 0
    Value k;       // the chunk's k within the tile (A: column, B: row)
    Value inside;  // row (A) or column (B) inside the matrix; invalid when unguarded
  };

  // `v` where it is inside a guarded side of `length`, else the last start
  // of a `lanes`-element access: past the matrix a load still reads inside
  // the buffer (its value is SELECTed away), which the bounds analysis then
  // proves from the index alone.
  Value clamped(Value v, bool guarded, std::int64_t length, std::int64_t lanes) {
    return guarded ? b_.min(v, c(std::max<std::int64_t>(length - lanes, 0))) : v;
  }

  void plan_copy_units() {
    for (std::int64_t q = 0; q < plan_.a.units / s_.threads(); ++q) {
      const auto [r, kc] = unit_coordinates(plan_.a, s_.bm, q);
      const Value row = b_.add(m0_, r);
      const Value source = b_.add(scaled(clamped(row, guard_m_, m_, 1), p_.a.c0), c(p_.a.constant));
      a_units_.push_back({source, b_.add(scaled(r, plan_.a_pitch), kc), kc, guard_m_ ? b_.cmplt(row, c(m_)) : Value{}});
    }
    for (std::int64_t q = 0; q < plan_.b.units / s_.threads(); ++q) {
      const auto [r, nc] = unit_coordinates(plan_.b, s_.bn, q);
      const Value col = b_.add(n0_, nc);
      const Value source = b_.add(clamped(col, guard_n_, n_, kVec), c(p_.b.constant));
      b_units_.push_back({source, b_.add(scaled(r, plan_.b_pitch), nc), r, guard_n_ ? b_.cmplt(col, c(n_)) : Value{}});
    }
  }

  // The asynchronous copies of step kt's tiles into stage `stage` (zeros
  // past the matrix: the copies' zero fill).
  void copy_tile(Value kt, Value stage) {
    const Value k0 = b_.mul(kt, c(s_.bk));
    const Value a_base = scaled(stage, plan_.a_size), b_base = scaled(stage, plan_.b_size);
    for (const CopyUnit& u : a_units_) {
      const Value k = b_.add(k0, u.k);
      const Value v = guarded_load(a_mem_, b_.add(u.source, clamped(k, guard_k_, k_, kVec)), kVec, u.inside,
                                   guard_k_ ? b_.cmplt(k, c(k_)) : Value{});
      b_.copy_async(a_local_, b_.add(a_base, u.local), v);
    }
    for (const CopyUnit& u : b_units_) {
      const Value k = b_.add(k0, u.k);
      const Value v = guarded_load(b_mem_, b_.add(u.source, scaled(clamped(k, guard_k_, k_, 1), p_.b.c0)), kVec,
                                   guard_k_ ? b_.cmplt(k, c(k_)) : Value{}, u.inside);
      b_.copy_async(b_local_, b_.add(b_base, u.local), v);
    }
  }

  // Unit e = q * threads + tid of an operand's tile: (slow, fast) with the
  // fast coordinate a multiple of the unit's length.
  std::pair<Value, Value> unit_coordinates(const Copy& copy, std::int64_t block, std::int64_t q) {
    const std::int64_t fast_extent = copy.k_fast ? s_.bk : block;
    const std::int64_t per_row = fast_extent / copy.vec;
    const Value e = affine(tid_, 1, q * s_.threads());
    return {b_.div(e, c(per_row)), scaled(b_.mod(e, c(per_row)), copy.vec)};
  }

  // What one thread copies per step: A's units, then B's.
  std::vector<Value> load_tile(Value kt) {
    std::vector<Value> out;
    const Value k0 = b_.mul(kt, c(s_.bk));
    for (std::int64_t q = 0; q < plan_.a.units / s_.threads(); ++q) {
      const auto [slow, fast] = unit_coordinates(plan_.a, s_.bm, q);
      const Value row = b_.add(m0_, plan_.a.k_fast ? slow : fast);
      const Value k = b_.add(k0, plan_.a.k_fast ? fast : slow);
      const Value index =
          b_.add(b_.add(scaled(clamped(row, guard_m_, m_, plan_.a.k_fast ? 1 : plan_.a.vec), p_.a.c0),
                        scaled(clamped(k, guard_k_, k_, plan_.a.k_fast ? plan_.a.vec : 1), p_.a.c1)),
                 c(p_.a.constant));
      out.push_back(guarded_load(a_mem_, index, plan_.a.vec, guard_m_ ? b_.cmplt(row, c(m_)) : Value{},
                                 guard_k_ ? b_.cmplt(k, c(k_)) : Value{}));
    }
    for (std::int64_t q = 0; q < plan_.b.units / s_.threads(); ++q) {
      const auto [slow, fast] = unit_coordinates(plan_.b, s_.bn, q);
      const Value col = b_.add(n0_, plan_.b.k_fast ? slow : fast);
      const Value k = b_.add(k0, plan_.b.k_fast ? fast : slow);
      const Value index =
          b_.add(b_.add(scaled(clamped(k, guard_k_, k_, plan_.b.k_fast ? plan_.b.vec : 1), p_.b.c0),
                        scaled(clamped(col, guard_n_, n_, plan_.b.k_fast ? 1 : plan_.b.vec), p_.b.c1)),
                 c(p_.b.constant));
      out.push_back(guarded_load(b_mem_, index, plan_.b.vec, guard_k_ ? b_.cmplt(k, c(k_)) : Value{},
                                 guard_n_ ? b_.cmplt(col, c(n_)) : Value{}));
    }
    return out;
  }

  // memory[index .. index + lanes) where inside, else zeros.
  Value guarded_load(Value memory, Value index, std::int64_t lanes, Value in0, Value in1) {
    const auto n = static_cast<std::uint8_t>(lanes);
    const Value inside = in0.valid() && in1.valid() ? b_.and_(in0, in1) : (in0.valid() ? in0 : in1);
    const Value v = b_.load(memory, index, n);
    if (!inside.valid()) return v;
    return b_.select(inside, v, lanes == 1 ? zero_ : b_.broadcast(zero_, n));
  }

  // Stores what load_tile loaded into stage `stage` of the [k][row] tiles:
  // a unit along the row as it is, a unit along k one element per k row.
  void store_tile(const std::vector<Value>& copies, Value stage) {
    std::size_t next = 0;
    const auto store = [&](Value local, Value base, const Copy& copy, std::int64_t block, std::int64_t pitch) {
      for (std::int64_t q = 0; q < copy.units / s_.threads(); ++q) {
        const auto [slow, fast] = unit_coordinates(copy, block, q);
        const Value kk = copy.k_fast ? fast : slow, rr = copy.k_fast ? slow : fast;
        const Value at = b_.add(base, b_.add(scaled(kk, pitch), rr));
        const Value value = copies[next++];
        if (!copy.k_fast || copy.vec == 1) {
          b_.store(local, at, value);
          continue;
        }
        for (std::int64_t e = 0; e < copy.vec; ++e)
          b_.store(local, affine(at, 1, e * pitch), b_.extract(value, static_cast<std::uint32_t>(e)));
      }
    };
    const bool one = s_.stages == 1;
    store(a_local_, one ? c(0) : scaled(stage, plan_.a_size), plan_.a, s_.bm, plan_.a_pitch);
    store(b_local_, one ? c(0) : scaled(stage, plan_.b_size), plan_.b, s_.bn, plan_.b_pitch);
  }

  // The FMAs of one step from LOCAL stage `stage`, k ascending.
  void compute(Value stage) {
    if (plan_.a_rows) return compute_from_rows(stage);
    const bool one = s_.stages == 1;
    const Value a_base = one ? row_ : b_.add(row_, scaled(stage, plan_.a_size));
    const Value b_base = one ? col_ : b_.add(col_, scaled(stage, plan_.b_size));
    const std::int64_t pieces_m = s_.tm / kVec, pieces_n = s_.tn / kVec;
    for (std::int64_t kk = 0; kk < s_.bk; ++kk) {
      std::vector<Value> a, b;
      for (std::int64_t q = 0; q < pieces_m; ++q)
        a.push_back(b_.load(a_local_, affine(a_base, 1, kk * plan_.a_pitch + q * kVec * s_.lm()), kVec));
      for (std::int64_t q = 0; q < pieces_n; ++q)
        b.push_back(b_.load(b_local_, affine(b_base, 1, kk * plan_.b_pitch + q * kVec * s_.ln()), kVec));
      for (std::int64_t i = 0; i < s_.tm; ++i) {
        const Value x = b_.broadcast(b_.extract(a[static_cast<std::size_t>(i / kVec)], static_cast<std::uint32_t>(i % kVec)), kVec);
        for (std::int64_t q = 0; q < pieces_n; ++q) {
          const Value at = c(kVec * (i * pieces_n + q));
          b_.store(acc_, at, b_.mad(x, b[static_cast<std::size_t>(q)], b_.load(acc_, at, kVec)));
        }
      }
    }
  }

  // The same from A's [row][k] tile: per 4 k, each of the lane's rows as
  // one 16-byte load, then per k its B pieces and FMAs.
  void compute_from_rows(Value stage) {
    const Value a_base = b_.add(scaled(row_, plan_.a_pitch), scaled(stage, plan_.a_size));
    const Value b_base = b_.add(col_, scaled(stage, plan_.b_size));
    const std::int64_t pieces_n = s_.tn / kVec;
    for (std::int64_t k4 = 0; k4 < s_.bk; k4 += kVec) {
      std::vector<Value> a;
      for (std::int64_t i = 0; i < s_.tm; ++i)
        a.push_back(b_.load(a_local_, affine(a_base, 1, row_offset(i) * plan_.a_pitch + k4), kVec));
      for (std::int64_t kk = k4; kk < k4 + kVec; ++kk) {
        std::vector<Value> b;
        for (std::int64_t q = 0; q < pieces_n; ++q)
          b.push_back(b_.load(b_local_, affine(b_base, 1, kk * plan_.b_pitch + q * kVec * s_.ln()), kVec));
        for (std::int64_t i = 0; i < s_.tm; ++i) {
          const Value x = b_.broadcast(b_.extract(a[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(kk - k4)), kVec);
          for (std::int64_t q = 0; q < pieces_n; ++q) {
            const Value at = c(kVec * (i * pieces_n + q));
            b_.store(acc_, at, b_.mad(x, b[static_cast<std::size_t>(q)], b_.load(acc_, at, kVec)));
          }
        }
      }
    }
  }

  // C: the lane's row i and its column pieces of 4.
  void store_c() {
    const Value c_mem = params_.at(p_.c_param);
    const DType c_dtype = old_[p_.c_param].dtype;
    const std::int64_t pieces_n = s_.tn / kVec;
    const Value row0 = b_.add(m0_, row_), col0 = b_.add(n0_, col_);
    for (std::int64_t i = 0; i < s_.tm; ++i) {
      const Value row = affine(row0, 1, row_offset(i));
      const Value row_in = guard_m_ ? b_.cmplt(row, c(m_)) : Value{};
      const Value row_at = b_.add(scaled(row, p_.c.c0), c(p_.c.constant));
      for (std::int64_t q = 0; q < pieces_n; ++q) {
        const Value d = b_.load(acc_, c(kVec * (i * pieces_n + q)), kVec);
        const Value j = affine(col0, 1, q * kVec * s_.ln());
        if (plan_.c_vectors) {  // 4 columns, all inside or all outside (n % 4 == 0): j < n - 3, which
                                // the bounds analysis reads as the whole vector inside
          mma::store_c_element(b_, c_mem, b_.add(row_at, j), mma::c_element(b_, c_dtype, d), row_in,
                               guard_n_ ? b_.cmplt(j, c(n_ - kVec + 1)) : Value{});
          continue;
        }
        for (std::int64_t e = 0; e < kVec; ++e) {
          const Value col = affine(j, 1, e);
          const Value v = mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(e)));
          mma::store_c_element(b_, c_mem, b_.add(row_at, scaled(col, p_.c.c1)), v, row_in,
                               guard_n_ ? b_.cmplt(col, c(n_)) : Value{});
        }
      }
    }
  }

  const Kernel& old_;
  const Product& p_;
  Config s_;
  Plan plan_;
  std::map<ValueId, Value> params_;
  std::int64_t m_ = 0, n_ = 0, k_ = 0;
  bool guard_m_ = false, guard_n_ = false, guard_k_ = false;
  Value a_mem_, b_mem_, tid_, m0_, n0_, row_, col_, zero_, a_local_, b_local_, acc_;
  std::vector<CopyUnit> a_units_, b_units_;
};

Result<Config> config_of(const OptStep& step) {
  KILN_TRY(known_params(step, {"bm", "bn", "bk", "wm", "wn", "tm", "tn", "stages", "async"}));
  Config s;
  KILN_TRY_ASSIGN(s.bm, require_param(step, "bm"));
  KILN_TRY_ASSIGN(s.bn, require_param(step, "bn"));
  KILN_TRY_ASSIGN(s.bk, require_param(step, "bk"));
  KILN_TRY_ASSIGN(s.wm, require_param(step, "wm"));
  KILN_TRY_ASSIGN(s.wn, require_param(step, "wn"));
  KILN_TRY_ASSIGN(s.tm, require_param(step, "tm"));
  KILN_TRY_ASSIGN(s.tn, require_param(step, "tn"));
  s.stages = step.param("stages", 2);
  KILN_TRY_ASSIGN(s.async, flag_param(step, "async"));
  return s;
}

OptStep step_of(const Config& s) {
  return make_step(kName, {{"bm", s.bm}, {"bn", s.bn}, {"bk", s.bk}, {"wm", s.wm}, {"wn", s.wn}, {"tm", s.tm},
                           {"tn", s.tn}, {"stages", s.stages}});
}

class SimtStaged final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "exact f32 matrix products on FMAs: a bm x bn block per group of wm x wn warps, each lane a tm x tn tile "
           "in 4 x 4 pieces spread over its warp's block (16-byte LOCAL reads without bank conflicts), A and B tiles "
           "of bk staged through LOCAL memory in 2 buffers (loads of the next step before this step's FMAs), or 2 to 4 "
           "filled by asynchronous copies (async=1)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!ir::verify(kernel).ok() || device.max_local_threads <= 1) return steps;
    auto matched = mma::match(kernel);
    if (!std::holds_alternative<Product>(matched)) return steps;
    const Product& p = std::get<Product>(matched);
    // A short list, biggest first: blocks not beyond the matrix (padded to
    // 16 rows, 32 columns; 16-row blocks for skinny products), 8 x 8 tiles per lane (4 x 8 and 4 x 4 for the small blocks), k
    // steps 8 and 16, per block the first two warp layouts that fit. The warp
    // layouts put 8 or 4 lanes along n (32 x 64 or 64 x 32 warp blocks at
    // 8 x 8). Single-buffered only: the double-buffered and asynchronous
    // forms are the recipes' (core/tune/default_space.cpp); as configs too,
    // the tuner would meet a recipe's kernel first as a config, drop the
    // recipe as a duplicate and leave the kernel to the cost model's ranking
    // (mma_staged's lesson).
    const std::int64_t m16 = ceil_div(p.mp.lengths[0], 16) * 16, n32 = ceil_div(p.mp.lengths[1], 32) * 32;
    constexpr std::pair<std::int64_t, std::int64_t> kBlocks[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64},
                                                                 {32, 64},   {32, 32},  {16, 64},  {16, 32}};
    constexpr std::pair<std::int64_t, std::int64_t> kTiles[] = {{8, 8}, {4, 8}, {4, 4}};
    constexpr std::pair<std::int64_t, std::int64_t> kWarps[] = {{4, 2}, {2, 4}, {2, 2}, {4, 1}, {1, 4}, {2, 1}, {1, 2}, {1, 1}};
    for (const auto& [bm, bn] : kBlocks) {
      if (bm > std::max<std::int64_t>(m16, 16) || bn > std::max<std::int64_t>(n32, 32)) continue;
      if (bm == 16 && m16 > 32) continue;  // 16-row blocks only for products of at most 32 rows
      for (const auto& [tm, tn] : kTiles)
        for (std::int64_t bk : {8, 16}) {
          int layouts = 0;
          for (const auto& [wm, wn] : kWarps) {
            if (layouts == 2) break;
            const Config s{bm, bn, bk, wm, wn, tm, tn, 1};
            if (!misfit(p, s, device).empty()) continue;
            steps.push_back(step_of(s));
            ++layouts;
          }
        }
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY_ASSIGN(const Config s, config_of(step));
    return mma::rewrite_product(
        kernel, step, "the staged SIMT kernel", [&](const Product& p) { return misfit(p, s, device); },
        [&](const Product& p) { return Emitter(kernel, p, s).run(); });
  }
};

}  // namespace

const Optimization& simt_staged() {
  static const SimtStaged instance;
  return instance;
}

}  // namespace kiln::passes::opts
