// mma_staged(bm, bn, bk, wm, wn, stages, tf32): the matrix products mma_tile
// takes (opt_mma_match.hpp), with the operand tiles of a work-group staged
// through LOCAL (shared) memory. docs/passes.md, "mma_staged", has the why.
//
// A group of wm x wn warps computes a bm x bn block of C; each warp a
// (bm / wm) x (bn / wn) block in (bm / wm / 16) x (bn / wn / 8) MMA tiles.
// Per step of bk along k the group's threads copy A's bm x bk tile and B's
// bk x bn tile into LOCAL storage, in 16-byte vector loads where the
// operand's fastest dimension allows (f16: 8 elements, f32: 4), and the
// warps read their fragments from there in 32-bit pieces:
//
//   A: [row][k], rows padded by 16 bytes: lane (g, t) reads word
//      g * (bk + pad) / 2 + t, so the 32 lanes hit 32 banks;
//   B: [k / P][n][k % P] with P = 32 bits / element (f16: k pairs
//      interleaved, so the pair (k, k + 1) a fragment holds is one word),
//      pair rows padded by 8 words: lane (g, t) reads word t * (bn + 8) + g,
//      8 t + g mod 32, again 32 banks.
//
// stages = 2: two LOCAL buffers; the loads of step s + 1 are issued into
// registers before the MMAs of step s and stored into the other buffer after
// them (one barrier per step), so global latency hides behind the MMAs.
// stages = 1: one buffer, load, store, barrier, MMAs, barrier.
//
// Edges as mma_tile: rows, columns and k past the matrix load 0 (index and
// value SELECTed, never an IF: the copies are not collective, but the MMAs
// read what every thread stored), C stores outside the matrix under an IF.
// The vector copies need the fastest dimension's length to be a multiple of
// the vector (a 16-byte chunk is then all inside or all outside); otherwise
// the copy is element by element. Numerics: the MMAs run k ascending in
// steps of the shape's k, as mma_tile's: bit for bit the untuned kernel on
// the interpreter.
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/verify.hpp"
#include "kernel_writer.hpp"
#include "opt_mma_match.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <kiln/sdk/wire.hpp>

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

constexpr std::string_view kName = "mma_staged";

struct Config {
  std::int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, stages = 0;
  bool tf32 = false;
  // The tiles are filled by asynchronous copies (COPY_ASYNC: no registers in
  // between, multi-buffered in `stages` buffers, one barrier per step)
  // rather than by loads and stores. -1: where the device has them.
  int async = -1;
  // Fragments of f16/bf16 are read with LOAD_MATRIX (ldmatrix: A always, B
  // when it is [k][n], i.e. with async copies). -1: where the device has it.
  int ldmatrix = -1;
  std::int64_t warps() const { return wm * wn; }
  std::int64_t threads() const { return 32 * warps(); }
  std::int64_t tm() const { return bm / wm / 16; }  // MMA tiles per warp along m
  std::int64_t tn() const { return bn / wn / 8; }   // ... and along n
};

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

// Whether the device copies the inputs' dtype asynchronously.
bool device_copies(const Product& p, const DeviceInfo& device) {
  return device.supports_op_kind(KILN_OP_COPY_ASYNC, static_cast<unsigned>(p.input));
}

// The LOCAL layout and copy plan of one product and config.
struct Plan {
  bool ldmatrix = false;   // LOAD_MATRIX reads A's fragments (and B's when [k][n])
  bool async = false;      // COPY_ASYNC fills the tiles; B is then [k][n] (copies move bytes as they are)
  std::int64_t elem = 0;   // bytes per element of A and B
  std::int64_t pack = 0;   // P: elements per 32-bit word (f16: 2, f32: 1)
  std::int64_t vec = 0;    // elements per 16-byte chunk
  std::int64_t a_vec = 1;  // elements per copy of A (vec, or 1 when A is not k-contiguous)
  std::int64_t b_vec = 1;  // ... of B (vec, or 1 when B is not n-contiguous)
  std::int64_t a_pitch = 0, b_pitch = 0;  // A: elements per row; B: words per k / P row
  std::int64_t a_size = 0, b_size = 0;    // elements of one stage
  std::int64_t a_units = 0, b_units = 0;  // copies per thread per step
  // C's columns (2t, 2t + 1) of a fragment row are stored as one 2-lane
  // vector: C is column-contiguous, every pair starts at an even element
  // (so the store is aligned) and an edge never splits a pair (n even).
  bool c_pairs = false;
};

Plan plan_of(const Product& p, const Config& s, const DeviceInfo& device) {
  Plan plan;
  plan.elem = p.input == DType::F32 ? 4 : 2;
  plan.pack = 4 / plan.elem;
  plan.vec = 16 / plan.elem;
  const std::int64_t k = p.mp.trip_count, n = p.mp.lengths[1];
  // A chunk [row][k0 .. k0 + vec) is consecutive and aligned when A is
  // k-fastest with multiples of vec elsewhere and K splits into whole chunks.
  if (p.a.c1 == 1 && p.a.c0 % plan.vec == 0 && p.a.constant % plan.vec == 0 && k % plan.vec == 0) plan.a_vec = plan.vec;
  if (p.b.c1 == 1 && p.b.c0 % plan.vec == 0 && p.b.constant % plan.vec == 0 && n % plan.vec == 0) plan.b_vec = plan.vec;
  plan.async = s.async == 1 || (s.async == -1 && s.stages >= 2 && device_copies(p, device) &&
                                 plan.a_vec == plan.vec && plan.b_vec == plan.vec);
  plan.ldmatrix = s.ldmatrix == 1 || (s.ldmatrix == -1 && p.input != DType::F32 &&
                                       device.supports_op_kind(KILN_OP_LOAD_MATRIX, static_cast<unsigned>(p.input)));
  plan.c_pairs = p.c.c1 == 1 && p.c.c0 % 2 == 0 && p.c.constant % 2 == 0 && n % 2 == 0 &&
                 (device.vector_width_mask & (1u << 2)) != 0;
  plan.a_pitch = s.bk + plan.vec;  // 16 bytes of padding per row
  plan.a_size = s.bm * plan.a_pitch;
  plan.a_units = s.bm * s.bk / plan.a_vec;  // one unit = one chunk of a_vec elements along k
  if (plan.async || plan.pack == 1) {
    // B [k][n], rows padded by 8 elements (lane (g, t) reads rows 2t and
    // 2t + 1, or t for tf32: 8t + g / 2 or 8t + g words mod 32, no two lanes
    // on one bank but pairs reading one word); one unit = b_vec columns of a
    // k row.
    plan.b_pitch = s.bn + 8;
    plan.b_size = s.bk * plan.b_pitch;
    plan.b_units = s.bk * (s.bn / plan.b_vec);
  } else {
    // B [k / P][n][k % P], pair rows padded by 8 words; one unit = b_vec
    // columns of pack consecutive k (P rows, interleaved into words).
    plan.b_pitch = s.bn + 8;
    plan.b_size = (s.bk / plan.pack) * plan.b_pitch * plan.pack;
    plan.b_units = (s.bk / plan.pack) * (s.bn / plan.b_vec);
  }
  return plan;
}

// Why the config does not fit the product or the device, or "".
std::string misfit(const Product& p, const Config& s, const DeviceInfo& device) {
  if (p.input == DType::F32 && !s.tf32) return "f32 inputs need tf32=1 (the MMA rounds them to tf32)";
  if (p.input != DType::F32 && s.tf32) return "tf32=1 is for f32 inputs; A and B are " + std::string(ir::dtype_name(p.input));
  if (const std::string why = mma::device_misfit(p, device); !why.empty()) return why;
  for (std::int64_t w : {s.wm, s.wn})
    if (w != 1 && w != 2 && w != 4 && w != 8) return "wm and wn must be 1, 2, 4 or 8";
  if (s.warps() > 8) return "at most 8 warps per group";
  if (s.stages < 1 || s.stages > 4) return "stages must be 1 to 4";
  const std::int64_t ks = p.input == DType::F32 ? 8 : 16;
  if (s.bk != 16 && s.bk != 32 && s.bk != 64) return "bk must be 16, 32 or 64";
  if (s.bk % ks != 0) return "bk must be a multiple of the MMA's k (" + std::to_string(ks) + ")";
  if (s.bm < 16 || s.bm > 256 || s.bm % (16 * s.wm) != 0)
    return "bm must be in 16..256 and a multiple of 16 * wm (" + std::to_string(16 * s.wm) + ")";
  if (s.bn < 8 || s.bn > 256 || s.bn % (8 * s.wn) != 0)
    return "bn must be in 8..256 and a multiple of 8 * wn (" + std::to_string(8 * s.wn) + ")";
  if (s.tm() > 8 || s.tn() > 16) return "a warp's block is at most 128 x 128";
  const Plan plan = plan_of(p, s, device);
  if (s.async == 1 && !device_copies(p, device)) return "async=1 needs a device with asynchronous copies (copy_async)";
  if (s.async == 1 && (plan.a_vec != plan.vec || plan.b_vec != plan.vec))
    return "async copies move 16-byte chunks: A must be contiguous along k and B along n, in whole chunks";
  if (plan.async && s.stages < 2) return "async copies need 2 or more stages";
  if (s.ldmatrix == 1 && (p.input == DType::F32 || !device.supports_op_kind(KILN_OP_LOAD_MATRIX, static_cast<unsigned>(p.input))))
    return "ldmatrix=1 needs f16 or bf16 inputs and a device with load_matrix";
  if (!plan.async && s.stages > 2) return "3 or 4 stages need async copies (a device with copy_async)";
  if (plan.a_units % s.threads() != 0 || plan.b_units % s.threads() != 0)
    return "the " + std::to_string(s.threads()) + " threads do not divide the tile copies (A " +
           std::to_string(plan.a_units) + ", B " + std::to_string(plan.b_units) + ")";
  if (s.threads() > device.max_local_threads || s.threads() > device.max_local_dims[0])
    return std::to_string(s.threads()) + " threads per group exceed the device's " + std::to_string(device.max_local_threads);
  const std::uint64_t local = static_cast<std::uint64_t>(s.stages * (plan.a_size + plan.b_size) * plan.elem);
  if (local > device.local_memory_bytes)
    return "the tiles need " + std::to_string(local) + " LOCAL bytes; the device has " + std::to_string(device.local_memory_bytes);
  // Accumulators (16 bytes per tile) plus the staged copies in flight, at
  // most half of what the group's registers allow per thread, and at most
  // 128 accumulators (a GPU thread has 255 registers).
  const std::uint64_t acc = static_cast<std::uint64_t>(16 * s.tm() * s.tn());
  const std::uint64_t staged =
      plan.async ? 0 : static_cast<std::uint64_t>((plan.a_units + plan.b_units) / s.threads() * 16);
  const std::uint64_t budget =
      device.register_bytes * static_cast<std::uint64_t>(std::max<std::int64_t>(device.max_local_threads, 1)) /
      static_cast<std::uint64_t>(s.threads()) / 2;
  if (acc > 512 || (device.register_bytes > 0 && acc + staged > budget))
    return "the accumulators and copies need " + std::to_string(acc + staged) + " REGISTER bytes per thread (at most " +
           std::to_string(std::min<std::uint64_t>(budget, 512)) + ")";
  return "";
}

// Emits the staged MMA kernel.
class Emitter : private KernelWriter {
  friend class KernelWriter;  // staged_k_loop copies and computes through the private members

 public:
  Emitter(const Kernel& old, const Product& p, const Config& s, const DeviceInfo& device)
      : old_(old), p_(p), s_(s), plan_(plan_of(p, s, device)) {}

  Kernel run() {
    const tile::MatrixProduct& mp = p_.mp;
    m_ = mp.lengths[0], n_ = mp.lengths[1], k_ = mp.trip_count;
    shape_ = mma::shape_code(p_);
    info_ = sdk::mma_shape_info(shape_);
    guard_m_ = m_ % s_.bm != 0, guard_n_ = n_ % s_.bn != 0, guard_k_ = k_ % s_.bk != 0;
    for (ValueId id = 0; id < old_.size(); ++id)
      if (old_[id].kind == OpKind::Param) params_[id] = b_.append(old_[id]);
    a_mem_ = params_.at(p_.a_param), b_mem_ = params_.at(p_.b_param);

    const Value gn = b_.group_index(mp.axes[1], c(ceil_div(n_, s_.bn)));
    const Value gm = b_.group_index(mp.axes[0], c(ceil_div(m_, s_.bm)));
    tid_ = b_.local_index(0, static_cast<std::uint32_t>(s_.threads()));
    m0_ = b_.mul(gm, c(s_.bm)), n0_ = b_.mul(gn, c(s_.bn));
    const Value lane = s_.warps() == 1 ? tid_ : b_.mod(tid_, c(32));
    lane_ = lane;
    g_ = b_.div(lane, c(4)), t_ = b_.mod(lane, c(4));
    const Value warp = s_.warps() == 1 ? c(0) : b_.div(tid_, c(32));
    wrow_ = s_.wn == 1 ? b_.mul(warp, c(s_.bm / s_.wm)) : b_.mul(b_.div(warp, c(s_.wn)), c(s_.bm / s_.wm));
    wcol_ = s_.wn == 1 ? c(0) : b_.mul(b_.mod(warp, c(s_.wn)), c(s_.bn / s_.wn));
    zero_ = b_.constant(p_.input, 0.0);

    a_local_ = b_.storage(ir::Scope::Local, p_.input, static_cast<std::uint64_t>(s_.stages * plan_.a_size));
    b_local_ = b_.storage(ir::Scope::Local, p_.input, static_cast<std::uint64_t>(s_.stages * plan_.b_size));
    const std::uint32_t tiles = static_cast<std::uint32_t>(s_.tm() * s_.tn());
    acc_ = b_.storage(ir::Scope::Register, DType::F32, 4ull * tiles);
    const Value zero4 = b_.broadcast(b_.constant(DType::F32, 0.0), 4);
    for (std::uint32_t q = 0; q < tiles; ++q) b_.store(acc_, c(4 * q), zero4);
    // The lane's parts of its fragment indices in LOCAL storage.
    const Value kb = plan_.pack == 2 ? b_.mul(t_, c(2)) : t_;
    a_lane_ = b_.add(b_.mul(b_.add(wrow_, g_), c(plan_.a_pitch)), kb);
    b_lane_ = interleaved_b() ? scaled(b_.add(b_.mul(t_, c(plan_.b_pitch)), b_.add(wcol_, g_)), plan_.pack)
                              : b_.add(b_.mul(kb, c(plan_.b_pitch)), b_.add(wcol_, g_));
    if (plan_.ldmatrix) {
      // The row this lane addresses: matrix q = lane / 8, row lane % 8 of it;
      // A's 16 x 16: q % 2 picks rows 8.., q / 2 columns 8..; B's 16 k x 16 n
      // (two MMA tiles, transposed): q % 2 picks k 8.., q / 2 the second tile.
      const Value r8 = b_.add(b_.mod(lane, c(8)), b_.mul(b_.mod(b_.div(lane, c(8)), c(2)), c(8)));
      const Value half = b_.mul(b_.div(lane, c(16)), c(8));
      a_matrix_lane_ = b_.add(b_.mul(b_.add(wrow_, r8), c(plan_.a_pitch)), half);
      b_matrix_lane_ = b_.add(b_.mul(r8, c(plan_.b_pitch)), b_.add(wcol_, half));
    }

    const std::int64_t steps = ceil_div(k_, s_.bk);
    staged_k_loop(*this, steps, plan_.async, s_.stages);
    store_c();
    return b_.finish();
  }

 private:
  // What one thread copies per step: the loaded values of A's units, then B's.
  std::vector<Value> load_tile(Value kt) {
    std::vector<Value> out;
    const Value k0 = b_.mul(kt, c(s_.bk));
    const std::int64_t t = s_.threads();
    for (std::int64_t q = 0; q < plan_.a_units / t; ++q) {
      // Unit e = q * threads + tid: row e / (bk / a_vec), chunk e % (bk / a_vec).
      const std::int64_t per_row = s_.bk / plan_.a_vec;
      const Value e = b_.add(tid_, c(q * t));
      const Value row = b_.add(m0_, b_.div(e, c(per_row)));
      const Value k = b_.add(k0, scaled(b_.mod(e, c(per_row)), plan_.a_vec));
      const Value index = b_.add(b_.add(scaled(row, p_.a.c0), scaled(k, p_.a.c1)), c(p_.a.constant));
      out.push_back(guarded_load(a_mem_, index, plan_.a_vec, guard_m_ ? b_.cmplt(row, c(m_)) : Value{},
                                 guard_k_ ? b_.cmplt(k, c(k_)) : Value{}));
    }
    for (std::int64_t q = 0; q < plan_.b_units / t; ++q) {
      // Unit e: k rows P * (e / (bn / b_vec)) + r (r < P), columns from b_vec * (e % (bn / b_vec)).
      const std::int64_t per_row = s_.bn / plan_.b_vec;
      const Value e = b_.add(tid_, c(q * t));
      const Value col = b_.add(n0_, scaled(b_.mod(e, c(per_row)), plan_.b_vec));
      const Value col_in = guard_n_ ? b_.cmplt(col, c(n_)) : Value{};
      const Value kp = b_.add(k0, scaled(b_.div(e, c(per_row)), plan_.pack));
      for (std::int64_t r = 0; r < plan_.pack; ++r) {
        const Value k = affine(kp, 1, r);
        const Value index = b_.add(b_.add(scaled(k, p_.b.c0), scaled(col, p_.b.c1)), c(p_.b.constant));
        out.push_back(guarded_load(b_mem_, index, plan_.b_vec, guard_k_ ? b_.cmplt(k, c(k_)) : Value{}, col_in));
      }
    }
    return out;
  }

  bool interleaved_b() const { return !plan_.async && plan_.pack == 2; }

  // The asynchronous copies of step kt's tiles into stage `stage`: A's
  // chunks to [row][k], B's to [k][n] (16 bytes each; zeros past the matrix).
  // What a thread's copy unit needs that does not change with the k step,
  // computed once before the loop (inside it the copies sit under an IF,
  // which keeps LICM from hoisting them).
  struct CopyUnit {
    Value source;  // element index of the chunk at k step 0
    Value local;   // element index in stage 0
    Value k;       // the chunk's k within the tile (A: column, B: row)
    Value inside;  // row (A) or column (B) inside the matrix; invalid when unguarded
  };

  void plan_copy_units() {
    const std::int64_t t = s_.threads();
    const std::int64_t a_per_row = s_.bk / plan_.vec;
    for (std::int64_t q = 0; q < plan_.a_units / t; ++q) {
      const Value e = b_.add(tid_, c(q * t));
      const Value r = b_.div(e, c(a_per_row)), kc = scaled(b_.mod(e, c(a_per_row)), plan_.vec);
      const Value row = b_.add(m0_, r);
      const Value source = b_.add(b_.add(scaled(row, p_.a.c0), scaled(kc, p_.a.c1)), c(p_.a.constant));
      a_units_.push_back({source, b_.add(b_.mul(r, c(plan_.a_pitch)), kc), kc, guard_m_ ? b_.cmplt(row, c(m_)) : Value{}});
    }
    const std::int64_t b_per_row = s_.bn / plan_.vec;
    for (std::int64_t q = 0; q < plan_.b_units / t; ++q) {
      const Value e = b_.add(tid_, c(q * t));
      const Value r = b_.div(e, c(b_per_row)), nc = scaled(b_.mod(e, c(b_per_row)), plan_.vec);
      const Value col = b_.add(n0_, nc);
      const Value source = b_.add(b_.add(scaled(r, p_.b.c0), scaled(col, p_.b.c1)), c(p_.b.constant));
      b_units_.push_back({source, b_.add(b_.mul(r, c(plan_.b_pitch)), nc), r, guard_n_ ? b_.cmplt(col, c(n_)) : Value{}});
    }
  }

  void copy_tile(Value kt, Value stage) {
    const Value k0 = b_.mul(kt, c(s_.bk));
    const Value a_base = b_.mul(stage, c(plan_.a_size)), b_base = b_.mul(stage, c(plan_.b_size));
    const Value a_step = scaled(k0, p_.a.c1), b_step = scaled(k0, p_.b.c0);
    for (const CopyUnit& u : a_units_) {
      const Value v = guarded_load(a_mem_, b_.add(u.source, a_step), plan_.vec, u.inside,
                                   guard_k_ ? b_.cmplt(b_.add(k0, u.k), c(k_)) : Value{});
      b_.copy_async(a_local_, b_.add(a_base, u.local), v);
    }
    for (const CopyUnit& u : b_units_) {
      const Value v = guarded_load(b_mem_, b_.add(u.source, b_step), plan_.vec,
                                   guard_k_ ? b_.cmplt(b_.add(k0, u.k), c(k_)) : Value{}, u.inside);
      b_.copy_async(b_local_, b_.add(b_base, u.local), v);
    }
  }

  // memory[index .. index + lanes) where inside, else zeros.
  Value guarded_load(Value memory, Value index, std::int64_t lanes, Value in0, Value in1) {
    const auto n = static_cast<std::uint8_t>(lanes);
    const Value inside = in0.valid() && in1.valid() ? b_.and_(in0, in1) : (in0.valid() ? in0 : in1);
    if (!inside.valid()) return b_.load(memory, index, n);
    const Value v = b_.load(memory, b_.select(inside, index, c(0)), n);
    return b_.select(inside, v, lanes == 1 ? zero_ : b_.broadcast(zero_, n));
  }

  // Stores what load_tile loaded into stage `stage` of the LOCAL tiles.
  void store_tile(const std::vector<Value>& copies, Value stage) {
    const std::int64_t t = s_.threads();
    std::size_t next = 0;
    const Value a_base = s_.stages == 1 ? c(0) : b_.mul(stage, c(plan_.a_size));
    const Value b_base = s_.stages == 1 ? c(0) : b_.mul(stage, c(plan_.b_size));
    for (std::int64_t q = 0; q < plan_.a_units / t; ++q) {
      const std::int64_t per_row = s_.bk / plan_.a_vec;
      const Value e = b_.add(tid_, c(q * t));
      const Value at = b_.add(b_.mul(b_.div(e, c(per_row)), c(plan_.a_pitch)), scaled(b_.mod(e, c(per_row)), plan_.a_vec));
      b_.store(a_local_, b_.add(a_base, at), copies[next++]);
    }
    for (std::int64_t q = 0; q < plan_.b_units / t; ++q) {
      const std::int64_t per_row = s_.bn / plan_.b_vec;
      const Value e = b_.add(tid_, c(q * t));
      // Word (e / per_row) * b_pitch + column; element r of a word is k row r.
      const Value word = b_.add(b_.mul(b_.div(e, c(per_row)), c(plan_.b_pitch)), scaled(b_.mod(e, c(per_row)), plan_.b_vec));
      const Value at = b_.add(b_base, scaled(word, plan_.pack));
      std::vector<Value> rows(copies.begin() + static_cast<std::ptrdiff_t>(next),
                              copies.begin() + static_cast<std::ptrdiff_t>(next + static_cast<std::size_t>(plan_.pack)));
      next += static_cast<std::size_t>(plan_.pack);
      if (plan_.pack == 1) {
        b_.store(b_local_, at, rows[0]);
        continue;
      }
      // Interleave the P rows: element (column j, row r) at j * P + r, in
      // pieces of at most 16 bytes.
      std::vector<Value> elements;
      for (std::int64_t j = 0; j < plan_.b_vec; ++j)
        for (std::int64_t r = 0; r < plan_.pack; ++r)
          elements.push_back(plan_.b_vec == 1 ? rows[static_cast<std::size_t>(r)]
                                              : b_.extract(rows[static_cast<std::size_t>(r)], static_cast<std::uint32_t>(j)));
      const std::size_t piece = static_cast<std::size_t>(std::min(plan_.vec, plan_.b_vec * plan_.pack));
      for (std::size_t first = 0; first < elements.size(); first += piece)
        b_.store(b_local_, affine(at, 1, static_cast<std::int64_t>(first)),
                 vector_of({elements.begin() + static_cast<std::ptrdiff_t>(first),
                            elements.begin() + static_cast<std::ptrdiff_t>(first + piece)}));
    }
  }

  Value vector_of(const std::vector<Value>& elements) {
    Value v = b_.broadcast(elements[0], static_cast<std::uint8_t>(elements.size()));
    for (std::uint32_t i = 1; i < elements.size(); ++i) v = b_.insert(v, elements[i], i);
    return v;
  }

  // One fragment from LOCAL storage: element i at base + offsets[i]; words
  // (P consecutive elements) as one load each.
  Value fragment(Value memory, Value base, const std::vector<std::int64_t>& offsets, bool words = true) {
    std::vector<Value> elements;
    const std::int64_t pack = words ? plan_.pack : 1;
    for (std::size_t i = 0; i < offsets.size(); i += static_cast<std::size_t>(pack)) {
      const Value at = affine(base, 1, offsets[i]);
      if (pack == 1) {
        elements.push_back(b_.load(memory, at));
        continue;
      }
      const Value word = b_.load(memory, at, static_cast<std::uint8_t>(plan_.pack));
      for (std::int64_t r = 0; r < plan_.pack; ++r) elements.push_back(b_.extract(word, static_cast<std::uint32_t>(r)));
    }
    return vector_of(elements);
  }

  // The MMAs of one step from LOCAL stage `stage`.
  void compute(Value stage) {
    const Value a_base = s_.stages == 1 ? a_lane_ : b_.add(a_lane_, b_.mul(stage, c(plan_.a_size)));
    const Value b_base = s_.stages == 1 ? b_lane_ : b_.add(b_lane_, b_.mul(stage, c(plan_.b_size)));
    const std::int64_t ks = info_.k;
    const bool b_matrices = plan_.ldmatrix && !interleaved_b();
    const Value a_matrix = !plan_.ldmatrix ? Value{} : s_.stages == 1 ? a_matrix_lane_ : b_.add(a_matrix_lane_, b_.mul(stage, c(plan_.a_size)));
    const Value b_matrix = !b_matrices ? Value{} : s_.stages == 1 ? b_matrix_lane_ : b_.add(b_matrix_lane_, b_.mul(stage, c(plan_.b_size)));
    for (std::int64_t sub = 0; sub < s_.bk / ks; ++sub) {
      std::vector<Value> a_frag, b_frag;
      if (plan_.ldmatrix)  // A's 16 x 16 fragment is ldmatrix.x4's result as it is
        for (std::int64_t r = 0; r < s_.tm(); ++r)
          a_frag.push_back(b_.load_matrix(a_local_, affine(a_matrix, 1, 16 * r * plan_.a_pitch + sub * ks), 4, false));
      if (b_matrices)  // two tiles' B fragments per ldmatrix.x4.trans (x2 for an odd last one)
        for (std::int64_t col = 0; col < s_.tn(); col += 2) {
          const Value at = affine(b_matrix, 1, sub * ks * plan_.b_pitch + 8 * col);
          if (col + 1 == s_.tn()) {
            b_frag.push_back(b_.load_matrix(b_local_, at, 2, true));
            break;
          }
          const Value both = b_.load_matrix(b_local_, at, 4, true);
          for (std::uint32_t half = 0; half < 2; ++half) {
            std::vector<Value> elements;
            for (std::uint32_t e = 0; e < 4; ++e) elements.push_back(b_.extract(both, 4 * half + e));
            b_frag.push_back(vector_of(elements));
          }
        }
      for (std::int64_t r = 0; r < s_.tm() && !plan_.ldmatrix; ++r) {
        std::vector<std::int64_t> offsets;
        for (unsigned i = 0; i < info_.a_lanes; ++i) {
          const auto at = sdk::mma_a_coord(shape_, 0, i);  // lane 0's: the offsets from (g, kb)
          offsets.push_back((16 * r + at.row) * plan_.a_pitch + sub * ks + at.col);
        }
        a_frag.push_back(fragment(a_local_, a_base, offsets));
      }
      for (std::int64_t col = 0; col < s_.tn() && !b_matrices; ++col) {
        std::vector<std::int64_t> offsets;
        for (unsigned i = 0; i < info_.b_lanes; ++i) {
          const auto at = sdk::mma_b_coord(shape_, 0, i);  // (k offset, 0)
          if (!interleaved_b()) {  // [k][n]: the fragment's k pairs are a row apart
            offsets.push_back((sub * ks + at.row) * plan_.b_pitch + 8 * col + at.col);
            continue;
          }
          const std::int64_t word = (sub * ks / plan_.pack + at.row / plan_.pack) * plan_.b_pitch + 8 * col + at.col;
          offsets.push_back(word * plan_.pack + at.row % plan_.pack);
        }
        b_frag.push_back(fragment(b_local_, b_base, offsets, interleaved_b() || plan_.pack == 1));
      }
      for (std::int64_t r = 0; r < s_.tm(); ++r)
        for (std::int64_t col = 0; col < s_.tn(); ++col) {
          const Value at = c(4 * (r * s_.tn() + col));
          b_.store(acc_, at, b_.mma(static_cast<ir::MmaShape>(shape_), a_frag[r], b_frag[col], b_.load(acc_, at, 4)));
        }
    }
  }

  // C: element i of tile (r, col) at row g + 8 (i / 2), column 2t + i % 2;
  // the two columns of a row as one store where Plan::c_pairs says so.
  void store_c() {
    const Value c_mem = params_.at(p_.c_param);
    const DType c_dtype = old_[p_.c_param].dtype;
    const Value row0 = b_.add(b_.add(m0_, wrow_), g_), col0 = b_.add(b_.add(n0_, wcol_), b_.mul(t_, c(2)));
    for (std::int64_t r = 0; r < s_.tm(); ++r)
      for (int h = 0; h < 2; ++h) {
        const Value row = affine(row0, 1, 16 * r + 8 * h);
        const Value row_in = guard_m_ ? b_.cmplt(row, c(m_)) : Value{};
        const Value row_at = b_.add(scaled(row, p_.c.c0), c(p_.c.constant));
        for (std::int64_t col = 0; col < s_.tn(); ++col) {
          const Value d = b_.load(acc_, c(4 * (r * s_.tn() + col)), 4);
          if (plan_.c_pairs) {  // columns 2t and 2t + 1 as one 2-lane store
            const Value j = affine(col0, 1, 8 * col);
            const Value pair = vector_of({mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h))),
                                          mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h + 1)))});
            mma::store_c_element(b_, c_mem, b_.add(row_at, j), pair, row_in, guard_n_ ? b_.cmplt(j, c(n_)) : Value{});
            continue;
          }
          for (int e = 0; e < 2; ++e) {
            const Value j = affine(col0, 1, 8 * col + e);
            const Value v = mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h + e)));
            const Value index = b_.add(row_at, scaled(j, p_.c.c1));
            const Value col_in = guard_n_ ? b_.cmplt(j, c(n_)) : Value{};
            mma::store_c_element(b_, c_mem, index, v, row_in, col_in);
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
  unsigned shape_ = 0;
  sdk::MmaShapeInfo info_{};
  bool guard_m_ = false, guard_n_ = false, guard_k_ = false;
  Value a_mem_, b_mem_, tid_, m0_, n0_, g_, t_, wrow_, wcol_, zero_, a_local_, b_local_, acc_, a_lane_, b_lane_;
  Value lane_, a_matrix_lane_, b_matrix_lane_;
  std::vector<CopyUnit> a_units_, b_units_;
};

Result<Config> config_of(const OptStep& step) {
  KILN_TRY(known_params(step, {"bm", "bn", "bk", "wm", "wn", "stages", "tf32", "async", "ldmatrix"}));
  Config s;
  KILN_TRY_ASSIGN(s.bm, require_param(step, "bm"));
  KILN_TRY_ASSIGN(s.bn, require_param(step, "bn"));
  KILN_TRY_ASSIGN(s.bk, require_param(step, "bk"));
  KILN_TRY_ASSIGN(s.wm, require_param(step, "wm"));
  KILN_TRY_ASSIGN(s.wn, require_param(step, "wn"));
  s.stages = step.param("stages", 2);
  KILN_TRY_ASSIGN(s.tf32, flag_param(step, "tf32"));
  if (const std::int64_t async = step.param("async", -1); async != -1) {
    if (async != 0 && async != 1) return step_error(step, "async must be 0 or 1");
    s.async = static_cast<int>(async);
  }
  if (const std::int64_t ldmatrix = step.param("ldmatrix", -1); ldmatrix != -1) {
    if (ldmatrix != 0 && ldmatrix != 1) return step_error(step, "ldmatrix must be 0 or 1");
    s.ldmatrix = static_cast<int>(ldmatrix);
  }
  return s;
}

class MmaStaged final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "matrix products of f16/bf16 (or f32 as tf32, when asked) on the warp MMA op, a bm x bn block per group of "
           "wm x wn warps, A and B tiles of bk staged through LOCAL memory (padded, vector copies, 1 or 2 stages; "
           "2 to 4 with asynchronous copies where the device has them)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!ir::verify(kernel).ok()) return steps;
    auto matched = mma::match(kernel);
    if (!std::holds_alternative<Product>(matched)) return steps;
    const Product& p = std::get<Product>(matched);
    if (p.input == DType::F32) return steps;  // tf32 changes the numerics: only on request
    // A short list, so that a tournament search over it (and over what follows it)
    // stays cheap: the blocks below, biggest first, each with 4 and 8 warps
    // (2 x 2, 2 x 4; 1 x 4, 1 x 2, 1 x 1 where the block is too small for
    // those), k steps 32 and 64, two stages where LOCAL memory holds them,
    // else one.
    const std::int64_t m16 = ceil_div(p.mp.lengths[0], 16) * 16, n8 = ceil_div(p.mp.lengths[1], 8) * 8;
    constexpr std::pair<std::int64_t, std::int64_t> kBlocks[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64},
                                                                 {32, 64},   {16, 64},  {32, 32},  {16, 32}};
    constexpr std::pair<std::int64_t, std::int64_t> kWarps[] = {{2, 2}, {2, 4}, {1, 4}, {1, 2}, {1, 1}};
    // The deep pipelines of asynchronous copies (3 and 4 stages) are the
    // recipes' (core/tune/default_space.cpp): as configs too, the tuner
    // would meet each recipe's kernel first as a config, drop the recipe as a
    // duplicate and leave the kernel to the cost model's ranking (the H200
    // tuning of 2026-12-03 measured none of them).
    for (const auto& [bm, bn] : kBlocks) {
      // Blocks beyond the padded matrix only add idle warps (the smallest stays).
      if (bm > std::max<std::int64_t>(m16, 16) || bn > std::max<std::int64_t>(n8, 32)) continue;
      for (std::int64_t bk : {32, 64}) {
        int layouts = 0;
        for (const auto& [wm, wn] : kWarps) {
          if (layouts == 2) break;
          for (std::int64_t stages : {2, 1}) {
            const Config s{bm, bn, bk, wm, wn, stages, false};
            if (!misfit(p, s, device).empty()) continue;
            steps.push_back(make_step(kName, {{"bm", bm}, {"bn", bn}, {"bk", bk}, {"wm", wm}, {"wn", wn}, {"stages", stages}}));
            ++layouts;
            break;
          }
        }
      }
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY_ASSIGN(const Config s, config_of(step));
    return mma::rewrite_product(
        kernel, step, "the staged MMA kernel", [&](const Product& p) { return misfit(p, s, device); },
        [&](const Product& p) { return Emitter(kernel, p, s, device).run(); });
  }
};

}  // namespace

const Optimization& mma_staged() {
  static const MmaStaged instance;
  return instance;
}

}  // namespace kiln::passes::opts
