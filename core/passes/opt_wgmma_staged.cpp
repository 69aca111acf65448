// wgmma_staged(bm, bn, stages, inflight, split, mma_first, tf32, b_async, b_vec, swap): the
// f16/bf16 matrix products mma_staged takes (opt_mma_match.hpp) on the
// warp-group MMA (WGMMA, kernel_ir.h; wgmma.mma_async on sm_90a), and f32
// ones on its tf32 form with tf32=1 (below). docs/passes.md,
// "wgmma_staged", has the why.
//
// A group of bm / 64 warp groups (128 threads each) computes a bm x bn block
// of C, warp group w the rows 64 w .. 64 w + 63 with `split` m64n(bn/split)k16
// WGMMAs per 16 of k (default 1), its bn / 2 accumulators per thread in
// `split` REGISTER storages. A and B
// tiles of 64 along k are copied asynchronously (COPY_ASYNC, 16 bytes each)
// into one LOCAL storage in the 128-byte swizzled layout WGMMA reads:
//
//   A stage: [bm rows][64 k], element (r, k) at swz(64 r + k);
//   B stage: [k / 16][bn / 64 atoms][16 k][64 n], (k, n) at
//            swz(1024 (bn / 64) (k / 16) + 1024 (n / 64) + 64 (k % 16) + n % 64),
//
// swz flipping the 16-byte chunk index by the row within its 8-row atom;
// `stages` stages of each, A's first. Per k step: wait for the step's tiles
// (COPY_WAIT), one barrier, refill the stage the WGMMAs of an earlier step
// have finished reading, fence, 4 WGMMAs (k 0, 16, 32, 48), commit, then
// wait until at most `inflight` (0, 1 or 2) WGMMA groups are pending: with
// 1, a step's WGMMAs run while the next step's copies are issued and waited
// for, and the refill goes `stages` - 2 steps ahead instead of `stages` - 1
// (the stage it refills was read by the step `inflight` + 1 back, whose
// group every thread waited for before this step's barrier).
//
// Edges: rows, columns and k past the matrix copy zeros (the zero-filling
// copy), C stores outside the matrix under an IF. Numerics: k ascending in
// steps of 16, as mma_tile's: bit for bit the untuned kernel on the
// interpreter.
//
// tf32=1 (f32 inputs, only when asked: it changes the numerics): steps of
// 32 k (a 128-byte row of f32), WGMMAs of k 8, both tiles K-major (tf32
// has no transposed operand): A as above in [bm rows][32 k] (4 elements a
// copy); B's [k][n] tile goes through registers (loaded 4 n at a time,
// stored element by element transposed into [bn rows][32 k]): tile `next`
// stored with the refill, tile next + 1 loaded right after it, its zeros
// for the edges put in at the store (nothing waits for the loads before
// the next step). With b_vec = 2 or 4 a thread loads that many consecutive
// k rows of its 4 n and stores each n's b_vec k as one vector (fewer,
// wider shared stores; default 1, one element a store). The WGMMA
// truncates each input to tf32.
// With b_async=1 B's tile is copied too (16-byte copies in A's commit
// groups, `ahead` tiles early) into a plain piece tile, each thread's
// pieces contiguous across its warp; after the step's COPY_WAIT each thread
// transposes the pieces it copied itself (visible to it without a barrier)
// into B's swizzled stage (a ring of inflight + 2: the steps whose groups
// may still read theirs, and this one), fences them for the WGMMAs, then
// the step's barrier. The pieces ring holds `ahead` tiles: tile
// kt + ahead lands in the pieces tile kt just left, each thread's own.
// swap=1 computes C^T = B^T A^T instead: both tiles copied as they are, the
// WGMMA's A B^T's fragments from registers (kernel_ir.h, code 1), its B A's
// stage (run_swapped).
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

namespace kiln::passes::opts {

namespace {

using ir::DType;
using ir::Kernel;
using ir::Value;
using ir::ValueId;
using mma::Product;

constexpr std::string_view kName = "wgmma_staged";
constexpr std::int64_t kAtom = 1024;  // elements of B's 16 x 64 piece of one k16 slice (f16/bf16)

struct Config {
  std::int64_t bm = 0, bn = 0, stages = 0, inflight = 1, split = 1, mma_first = 0, tf32 = 0, b_async = 0, b_vec = 1, swap = 0;
  std::int64_t wn() const { return swap ? bm : bn / split; }  // n of one WGMMA (swap: C^T's, along m)
  std::int64_t groups() const { return swap ? bn / 64 : bm / 64; }  // warp groups (swap: along n)
  std::int64_t threads() const { return 128 * groups(); }
  // k per step: one 128-byte swizzle row (64 f16/bf16, 32 f32); elements per
  // 16-byte copy; k per WGMMA; bytes per element.
  std::int64_t bk() const { return tf32 ? 32 : 64; }
  std::int64_t vec() const { return tf32 ? 4 : 8; }
  std::int64_t mma_k() const { return tf32 ? 8 : 16; }
  std::int64_t bytes() const { return tf32 ? 4 : 2; }
  std::int64_t a_size() const { return bm * bk(); }  // elements of one stage
  std::int64_t b_size() const { return bk() * bn; }
  std::int64_t ahead() const { return stages - 1 - inflight; }  // tiles in flight before a step
  // tf32: B's units a thread moves per step, through registers (a unit is
  // b_vec k rows of 4 n: 4 b_vec elements).
  std::int64_t b_units() const { return bk() * bn / 4 / b_vec / threads(); }
  // B's stages WGMMAs read (tf32 b_async=1: the transposed tiles of the
  // steps whose groups may be in flight, this step's and the next's) and
  // b_async's plain [32 k][bn] tiles the copies land in, one per tile in
  // flight (each thread transposes the 16-byte pieces it copied itself).
  std::int64_t b_stages() const { return b_async ? inflight + 2 : stages; }
  std::int64_t raw_stages() const { return b_async ? ahead() : 0; }
  std::int64_t local_elements() const { return stages * a_size() + (b_stages() + raw_stages()) * b_size(); }
  // swap=1: the accumulator storage holds C^T's bm / 2 accumulators, then
  // the 4 fragments (4 elements each) of B^T for a step's 4 WGMMAs, in
  // inflight + 1 sets (a step writes one while the previous step's group
  // may still read the other).
  std::int64_t fragment_at(std::int64_t set, std::int64_t j) const { return wn() / 2 + 16 * set + 4 * j; }  // j: the step's WGMMA
  std::int64_t accumulator_elements() const { return wn() / 2 + (swap ? 16 * (inflight + 1) : 0); }
};

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

// Why the config does not fit the product or the device, or "".
std::string misfit(const Product& p, const Config& s, const DeviceInfo& device) {
  if (s.tf32 != 0 && s.tf32 != 1) return "tf32 must be 0 or 1";
  if (p.input == DType::F32 && !s.tf32) return "f32 inputs need tf32=1 (the WGMMA reads them as tf32)";
  if (p.input != DType::F32 && s.tf32) return "tf32=1 is for f32 inputs; A and B are " + std::string(ir::dtype_name(p.input));
  if (s.b_async != 0 && s.b_async != 1) return "b_async must be 0 or 1";
  if (s.b_async && !s.tf32) return "b_async=1 is tf32's B staging (tf32=1); f16/bf16 copy B as it is";
  if (s.b_vec != 1 && s.b_vec != 2 && s.b_vec != 4) return "b_vec must be 1, 2 or 4";
  if (s.b_vec != 1 && (!s.tf32 || s.b_async)) return "b_vec is the width of tf32's transposed B stores through registers (tf32=1, b_async=0)";
  if (s.swap != 0 && s.swap != 1) return "swap must be 0 or 1";
  if (s.swap && (!s.tf32 || s.b_async || s.b_vec != 1 || s.split != 1))
    return "swap=1 is tf32's other B staging (tf32=1, without b_async, b_vec or split)";
  if (s.swap && s.inflight > 1)
    return "swap=1 keeps at most one WGMMA group in flight (inflight 0 or 1): two sets of B fragments in registers";
  if (p.input != DType::F16 && p.input != DType::BF16 && p.input != DType::F32)
    return "wgmma multiplies f16, bf16 or f32 (as tf32), not " + std::string(ir::dtype_name(p.input));
  const auto input = static_cast<unsigned>(p.input);
  if (!device.supports_op_kind(KILN_OP_WGMMA, input)) return "the device does not run wgmma on " + std::string(ir::dtype_name(p.input));
  if (!device.supports_op_kind(KILN_OP_COPY_ASYNC, input)) return "the device has no asynchronous copies (copy_async)";
  if (s.swap && !device.has_feature(KILN_FEATURE_WGMMA_TF32_A_REGISTERS))
    return "the device does not run the tf32 wgmma with A from registers (swap=1)";
  if ((device.vector_width_mask & ((1u << 2) | (1u << 4) | (1u << 8))) != ((1u << 2) | (1u << 4) | (1u << 8)))
    return "the device has no 2-, 4- and 8-lane vectors (tile indices, accumulators, copies)";
  if (s.bm < 64 || s.bm > 256 || s.bm % 64 != 0) return "bm must be 64, 128, 192 or 256 (warp groups of 64 rows)";
  if (s.bn < 64 || s.bn > 256 || s.bn % 64 != 0) return "bn must be 64, 128, 192 or 256 (64-column swizzle atoms)";
  if (s.inflight < 0 || s.inflight > 2) return "inflight must be 0, 1 or 2";
  if (s.mma_first != 0 && s.mma_first != 1) return "mma_first must be 0 or 1";
  if (s.split < 1 || s.bn % s.split != 0 || s.wn() % 64 != 0)
    return "split must divide bn into WGMMAs of whole 64-column atoms (1, 2 or 4)";
  if (s.stages < 2 + s.inflight || s.stages > 6)
    return "stages must be " + std::to_string(2 + s.inflight) + " to 6 (with inflight=" + std::to_string(s.inflight) + ")";
  const std::int64_t k = p.mp.trip_count, n = p.mp.lengths[1], vec = s.vec(), bk = s.bk();
  if (p.a.c1 != 1 || p.a.c0 % vec != 0 || p.a.constant % vec != 0 || k % vec != 0)
    return "the copies move 16-byte chunks: A must be contiguous along k, in whole chunks";
  if (p.b.c1 != 1 || p.b.c0 % vec != 0 || p.b.constant % vec != 0 || n % vec != 0)
    return "the copies move 16-byte chunks: B must be contiguous along n, in whole chunks";
  // Every thread copies as many 16-byte chunks of A and of B (192 x 128: B's
  // 1024 chunks do not split over 384 threads).
  if ((s.bm * (bk / vec)) % s.threads() != 0 || (bk * (s.bn / vec)) % (s.threads() * s.b_vec) != 0)
    return "the " + std::to_string(s.threads()) + " threads do not divide the tile copies (A " +
           std::to_string(s.bm * (bk / vec)) + ", B " + std::to_string(bk * (s.bn / vec) / s.b_vec) + ")";
  if (s.threads() > device.max_local_threads || s.threads() > device.max_local_dims[0])
    return std::to_string(s.threads()) + " threads per group exceed the device's " + std::to_string(device.max_local_threads);
  // The stages plus the kilobyte the device may need to align them.
  const auto local = static_cast<std::uint64_t>(s.local_elements() * s.bytes() + 1024);
  if (local > device.local_memory_bytes)
    return "the tiles need " + std::to_string(local) + " LOCAL bytes; the device has " + std::to_string(device.local_memory_bytes);
  // bn / 2 accumulators per thread, at most half of what the group's
  // registers allow per thread (and at most 128: 255 registers a thread);
  // with tf32's B staging registers (b_async=0), at most 5/8 (128 x 256: 160 of 255).
  // swap=1: bm / 2 accumulators (C^T's) and 16 fragment elements a set.
  const auto acc = static_cast<std::uint64_t>(4 * s.wn() / 2),
             staging = static_cast<std::uint64_t>(s.swap ? 4 * (s.accumulator_elements() - s.wn() / 2)
                                                  : s.tf32 && !s.b_async ? 16 * s.b_vec * s.b_units() : 0);
  const std::uint64_t per_thread = device.register_bytes *
                                   static_cast<std::uint64_t>(std::max<std::int64_t>(device.max_local_threads, 1)) /
                                   static_cast<std::uint64_t>(s.threads());
  if (device.register_bytes > 0 && acc > per_thread / 2)
    return "the accumulators need " + std::to_string(acc) + " REGISTER bytes per thread (at most " + std::to_string(per_thread / 2) + ")";
  if (device.register_bytes > 0 && acc + staging > per_thread * 5 / 8)
    return "the accumulators and B's staging need " + std::to_string(acc + staging) + " REGISTER bytes per thread (at most " +
           std::to_string(per_thread * 5 / 8) + ")";
  return "";
}

// Emits the staged WGMMA kernel.
class Emitter : private KernelWriter {
 public:
  Emitter(const Kernel& old, const Product& p, const Config& s, const DeviceInfo& device)
      : old_(old), p_(p), s_(s), c_pairs_(p.c.c1 == 1 && p.c.c0 % 2 == 0 && p.c.constant % 2 == 0 &&
                                          p.mp.lengths[1] % 2 == 0 && (device.vector_width_mask & (1u << 2)) != 0) {}

  Kernel run() {
    const tile::MatrixProduct& mp = p_.mp;
    m_ = mp.lengths[0], n_ = mp.lengths[1], k_ = mp.trip_count;
    guard_m_ = m_ % s_.bm != 0, guard_n_ = n_ % s_.bn != 0, guard_k_ = k_ % s_.bk() != 0;
    for (ValueId id = 0; id < old_.size(); ++id)
      if (old_[id].kind == ir::OpKind::Param) params_[id] = b_.append(old_[id]);
    a_mem_ = params_.at(p_.a_param), b_mem_ = params_.at(p_.b_param);

    const Value gn = b_.group_index(mp.axes[1], c(ceil_div(n_, s_.bn)));
    const Value gm = b_.group_index(mp.axes[0], c(ceil_div(m_, s_.bm)));
    tid_ = b_.local_index(0, static_cast<std::uint32_t>(s_.threads()));
    m0_ = b_.mul(gm, c(s_.bm)), n0_ = b_.mul(gn, c(s_.bn));
    group_ = s_.groups() == 1 ? c(0) : b_.div(tid_, c(128));
    zero_ = b_.constant(p_.input, 0.0);

    tiles_ = b_.storage(ir::Scope::Local, p_.input, static_cast<std::uint64_t>(s_.local_elements()));
    for (std::int64_t q = 0; q < s_.split; ++q)
      acc_.push_back(b_.storage(ir::Scope::Register, DType::F32, static_cast<std::uint64_t>(s_.accumulator_elements())));
    const Value zero4 = b_.broadcast(b_.constant(DType::F32, 0.0), 4);
    // swap=1: the fragments too (the CUDA dialect holds the whole array
    // around the asynchronous ops, from the first).
    for (const Value acc : acc_)
      for (std::int64_t q = 0; q < s_.accumulator_elements(); q += 4) b_.store(acc, c(q), zero4);
    if (s_.swap) return run_swapped();
    a_group_ = b_.mul(group_, c(64 * s_.bk()));  // the warp group's rows in an A stage
    const bool b_regs = s_.tf32 && !s_.b_async;  // tf32's B through registers
    if (b_regs) b_staged_ = b_.storage(ir::Scope::Register, DType::F32, static_cast<std::uint64_t>(4 * s_.b_vec * s_.b_units()));

    const std::int64_t steps = ceil_div(k_, s_.bk());
    plan_copy_units();
    for (std::int64_t t = 0; t < s_.ahead(); ++t) {
      if (t < steps) {
        copy_tile(c(t), c(t), s_.b_async ? c(t) : Value{});
        if (b_regs) {
          load_b(c(t));
          store_b(c(t), c(t));
        }
      }
      b_.copy_commit();
    }
    // tf32: B's tile `ahead` waits in registers for the loop's first refill.
    if (b_regs) load_b(c(s_.ahead()), s_.ahead() < steps ? Value{} : b_.constant(DType::Bool, 0));
    const Value kt = loop(steps);
    // Tile kt has landed once at most ahead - 1 copy groups are pending; the
    // barrier shows it to every thread and comes after every thread's
    // wgmma_wait that finished the reads of the stage refilled below.
    b_.copy_wait(static_cast<std::uint32_t>(s_.ahead() - 1));
    // tf32 b_async=1: each thread transposes the pieces of tile kt it copied
    // (its own copies: the wait above shows them to it) into B's stage
    // kt % b_stages, which the group of step kt - inflight - 2 read last
    // (every thread waited for it before the previous step's barrier); the
    // fence orders these writes before the WGMMAs (the async proxy) that read
    // them after the barrier.
    if (s_.b_async) {
      transpose_b(b_.mod(kt, c(s_.raw_stages())), b_.mod(kt, c(s_.b_stages())));
      b_.wgmma_fence();
    }
    b_.barrier();
    // Past the last tile the refill copies zeros (nothing read): no IF, so
    // the WGMMAs in flight stay asynchronous (ptxas serializes them across a
    // branch: "wgmma.mma_async instructions are serialized", C7514). The
    // stage it writes is one no later step reads.
    // mma_first=1 issues the step's WGMMAs before the refill's copies (the
    // refilled stage is neither this step's nor an in-flight group's).
    const Value next = b_.add(kt, c(s_.ahead()));
    // tf32: B's tile `next` goes from the registers into its stage with the
    // refill, and tile next + 1 is loaded into them right after (its loads
    // in flight for a whole step, as A's copies).
    // b_async=1: B's plain tile `next` into the piece tile kt left above
    // (ahead pieces, next % ahead = kt % ahead; only this thread reads its
    // pieces, and it did before the barrier).
    const auto refill = [&] {
      const Value stage = b_.mod(next, c(s_.stages));
      copy_tile(next, stage, s_.b_async ? b_.mod(next, c(s_.raw_stages())) : Value{}, b_.cmplt(next, c(steps)));
      if (b_regs) store_b(next, stage);
      b_.copy_commit();
      if (b_regs) {
        const Value after = b_.add(next, c(1));
        load_b(after, b_.cmplt(after, c(steps)));
      }
    };
    if (s_.mma_first == 0) refill();
    b_.wgmma_fence();
    compute(b_.mod(kt, c(s_.stages)), s_.b_async ? b_.mod(kt, c(s_.b_stages())) : Value{});
    b_.wgmma_commit();
    if (s_.mma_first == 1) refill();
    b_.wgmma_wait(static_cast<std::uint32_t>(s_.inflight));
    end_loop(kt);
    if (s_.inflight != 0) b_.wgmma_wait(0);
    store_c();
    return b_.finish();
  }

  // swap=1: C^T = B^T A^T. Both tiles are copied as they are; a step's
  // WGMMAs take B^T's fragments from registers (code 1), read from B's
  // stage after the barrier, and A's stage as their B (K-major already).
  // With inflight=1 a step's group stays in flight while the next step loads
  // its fragments into the other set: the loop runs two steps an iteration
  // (constant register indices), an odd count's last on zero tiles (adding
  // +0 to accumulators that are never -0: the same bits).
  Kernel run_swapped() {
    const std::int64_t steps = ceil_div(k_, s_.bk()), per_iteration = s_.inflight + 1;
    plan_copy_units();
    for (std::int64_t t = 0; t < s_.ahead(); ++t) {
      if (t < steps) copy_tile(c(t), c(t), Value{});
      else if (t < ceil_div(steps, per_iteration) * per_iteration) copy_tile(c(t), c(t), Value{}, b_.constant(DType::Bool, 0));
      b_.copy_commit();
    }
    const Value iteration = loop(ceil_div(steps, per_iteration));
    for (std::int64_t set = 0; set < per_iteration; ++set) swapped_step(affine(iteration, per_iteration, set), set, steps);
    end_loop(iteration);
    if (s_.inflight != 0) b_.wgmma_wait(0);
    store_c_transposed();
    return b_.finish();
  }

  // swap=1: step kt with fragment set `set`. The refill's stage was read by
  // the step inflight + 1 back, whose WGMMAs every thread waited for (and
  // whose fragment loads it made) before this step's barrier.
  void swapped_step(Value kt, std::int64_t set, std::int64_t steps) {
    b_.copy_wait(static_cast<std::uint32_t>(s_.ahead() - 1));
    b_.barrier();
    const Value next = b_.add(kt, c(s_.ahead()));
    const auto refill = [&] {
      copy_tile(next, b_.mod(next, c(s_.stages)), Value{}, b_.cmplt(next, c(steps)));
      b_.copy_commit();
    };
    if (s_.mma_first == 0) refill();
    const Value stage = b_.mod(kt, c(s_.stages));
    load_fragments(stage, set);
    b_.wgmma_fence();
    const Value a_stage = b_.mul(stage, c(s_.a_size()));
    for (std::int64_t j = 0; j < s_.bk() / s_.mma_k(); ++j) {
      // A's rows are C^T's columns (m), k 8 j into each.
      const Value tiles = b_.insert(b_.broadcast(c(s_.fragment_at(set, j)), 2), affine(a_stage, 1, 8 * j), 1);
      b_.wgmma(tiles_, tiles, acc_[0], static_cast<std::uint32_t>(s_.wn()), true);
    }
    b_.wgmma_commit();
    if (s_.mma_first == 1) refill();
    b_.wgmma_wait(static_cast<std::uint32_t>(s_.inflight));
  }

  // This thread's place in its warp group's fragments (kernel_ir.h, WGMMA):
  // its warp w (0..3), g = lane / 4 and t = lane % 4.
  struct FragmentThread {
    Value warp, g, t;
  };
  FragmentThread fragment_thread() {
    const Value in_group = s_.groups() == 1 ? tid_ : b_.mod(tid_, c(128));
    const Value lane = b_.mod(in_group, c(32));
    return {b_.div(in_group, c(32)), b_.div(lane, c(4)), b_.mod(lane, c(4))};
  }

  // swap=1: B's [32 k][bn] stage, (k, n) at bn k + 4 ((n / 4) ^ 2 (k % 4)) +
  // n % 4: the 16-byte chunks of row k XORed by k % 4 (bits 1-2 of the
  // chunk, within its 8-chunk group), so that a warp's fragment load of one
  // element (g: 8 n, t: 4 k) hits 32 banks and its copies stay whole.
  Value b_swapped_at(Value k, Value n_chunk) {
    return b_.add(b_.mul(k, c(s_.bn)), b_.mul(b_.bit_xor(n_chunk, b_.mul(b_.mod(k, c(4)), c(2))), c(4)));
  }

  // swap=1: B^T's fragments of this step (kernel_ir.h, A from registers):
  // element e of thread (w, g, t)'s fragment j is B[8 j + t + 4 (e / 2)][n],
  // n = 64 group + 16 w + g + 8 (e % 2), into the accumulator storage past
  // the accumulators, 4 elements a fragment.
  void load_fragments(Value stage, std::int64_t set) {
    const auto [warp, g, t] = fragment_thread();
    const Value n = b_.add(b_.add(b_.mul(group_, c(64)), b_.mul(warp, c(16))), g);
    const Value base = b_.add(b_.mul(stage, c(s_.b_size())), c(s_.stages * s_.a_size()));
    Value at[4];
    for (std::int64_t e = 0; e < 4; ++e) {
      const Value ne = affine(n, 1, 8 * (e % 2));
      const Value k = affine(t, 1, 4 * (e / 2));
      at[e] = b_.add(b_.add(base, b_swapped_at(k, b_.div(ne, c(4)))), b_.mod(ne, c(4)));
    }
    for (std::int64_t j = 0; j < s_.bk() / s_.mma_k(); ++j) {
      Value fragment;
      for (std::uint32_t e = 0; e < 4; ++e) {
        const Value v = b_.load(tiles_, affine(at[e], 1, 8 * j * s_.bn), 1);
        fragment = e == 0 ? b_.broadcast(v, 4) : b_.insert(fragment, v, e);
      }
      b_.store(acc_[0], c(s_.fragment_at(set, j)), fragment);
    }
  }

  // swap=1: accumulator element i of thread (w, g, t) of warp group `group`
  // is C^T[64 group + 16 w + g + 8 ((i / 2) % 2)][8 (i / 4) + 2 t + i % 2],
  // i.e. C at row m0 + 8 (i / 4) + 2 t + i % 2, column n0 + 64 group + 16 w +
  // g + 8 ((i / 2) % 2): one element a store.
  void store_c_transposed() {
    const Value c_mem = params_.at(p_.c_param);
    const DType c_dtype = old_[p_.c_param].dtype;
    const auto [warp, g, t] = fragment_thread();
    const Value col0 = b_.add(b_.add(n0_, b_.mul(group_, c(64))), b_.add(b_.mul(warp, c(16)), g));
    const Value row0 = b_.add(m0_, b_.mul(t, c(2)));
    for (int h = 0; h < 2; ++h) {
      const Value col = affine(col0, 1, 8 * h);
      const Value col_in = guard_n_ ? b_.cmplt(col, c(n_)) : Value{};
      const Value col_at = b_.add(scaled(col, p_.c.c1), c(p_.c.constant));
      for (std::int64_t j = 0; j < s_.wn() / 8; ++j) {
        const Value d = b_.load(acc_[0], c(4 * j), 4);
        for (int e = 0; e < 2; ++e) {
          const Value row = affine(row0, 1, 8 * j + e);
          const Value v = mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h + e)));
          mma::store_c_element(b_, c_mem, b_.add(col_at, scaled(row, p_.c.c0)), v, guard_m_ ? b_.cmplt(row, c(m_)) : Value{}, col_in);
        }
      }
    }
  }

 private:
  // What a thread's copy unit needs that does not change with the k step,
  // computed once before the loop.
  struct CopyUnit {
    Value source;  // element index of the chunk at k step 0
    Value local;   // swizzled element index in stage 0
    Value k;       // the chunk's k within the tile (A: column, B: row)
    Value inside;  // row (A) or column (B) inside the matrix; invalid when unguarded
  };

  // The 16-byte chunk `chunk` (0..7) of row `row` of a swizzle atom, XORed
  // with the row within its atom.
  Value swizzled_chunk(Value row, Value chunk) { return b_.mul(b_.bit_xor(chunk, b_.mod(row, c(8))), c(s_.vec())); }

  void plan_copy_units() {
    const std::int64_t t = s_.threads(), bk = s_.bk(), vec = s_.vec();
    // A: bm rows of 8 chunks, 4 per thread.
    for (std::int64_t q = 0; q < s_.bm * (bk / vec) / t; ++q) {
      const Value e = b_.add(tid_, c(q * t));
      const Value r = b_.div(e, c(bk / vec)), chunk = b_.mod(e, c(bk / vec));
      const Value kc = b_.mul(chunk, c(vec));
      const Value row = b_.add(m0_, r);
      const Value source = b_.add(b_.add(scaled(row, p_.a.c0), kc), c(p_.a.constant));
      const Value local = b_.add(b_.mul(r, c(bk)), swizzled_chunk(r, chunk));
      a_units_.push_back({source, local, kc, guard_m_ ? b_.cmplt(row, c(m_)) : Value{}});
    }
    if (s_.tf32 && !s_.swap) return plan_b_units_tf32();
    // B as it lies: bk k rows of bn / vec chunks (f16/bf16: 64 rows of
    // bn / 8, 4 bn / bm per thread; swap=1: 32 rows of bn / 4, 4 per thread).
    const std::int64_t per_row = s_.bn / vec;
    for (std::int64_t q = 0; q < bk * per_row / t; ++q) {
      const Value e = b_.add(tid_, c(q * t));
      const Value r = b_.div(e, c(per_row)), nc = b_.mod(e, c(per_row));
      const Value col = b_.add(n0_, b_.mul(nc, c(vec)));
      const Value source = b_.add(b_.add(scaled(r, p_.b.c0), col), c(p_.b.constant));
      b_units_.push_back({source, s_.swap ? b_swapped_local(r, nc) : b_atom_local(r, nc), r,
                          guard_n_ ? b_.cmplt(col, c(n_)) : Value{}});
    }
  }

  // f16/bf16: where chunk nc of B's k row r goes in stage 0, (r / 16)
  // slices of bn / 64 atoms, atom nc / 8, row r % 16 of it (the WGMMA's
  // N-major B).
  Value b_atom_local(Value r, Value nc) {
    const Value slice = b_.mul(b_.div(r, c(16)), c(kAtom * (s_.bn / 64)));
    const Value atom = b_.mul(b_.div(nc, c(8)), c(kAtom));
    const Value in_atom = b_.add(b_.mul(b_.mod(r, c(16)), c(64)), swizzled_chunk(r, b_.mod(nc, c(8))));
    return b_.add(b_.add(slice, atom), b_.add(c(s_.stages * s_.a_size()), in_atom));
  }

  // swap=1: where chunk nc of B's k row r goes in stage 0: b_swapped_at's
  // rows (a warp's copies are 32 consecutive chunks).
  Value b_swapped_local(Value r, Value nc) { return b_.add(b_swapped_at(r, nc), c(s_.stages * s_.a_size())); }

  // tf32: B goes through registers into its transposed K-major stage
  // ([bn][32 k], (k, n) at swz4(32 n + k)). A unit is b_vec k rows of 4
  // elements along n (b_vec 16-byte loads).
  // b_vec = 1: a warp's 32 units are 16 k rows x 2 of them, so each row's
  // 32 bytes are one whole sector of the load, and the scalar stores of
  // element i land in 32 different banks (k % 4, and the chunk k / 4 XOR
  // n % 8 over k / 4's two low bits and n / 4's parity).
  // b_vec = 2 or 4: the 32 / b_vec lanes of a warp's slice cover all 32 k
  // of one 4-n chunk (the warp b_vec chunks side by side: each row's 16 b_vec
  // bytes whole sectors), so the b_vec-wide stores of element i by one
  // slice (the lanes one shared-memory wavefront serves: 128 bytes) cover
  // the n row's 8 chunks, each once.
  void plan_b_units_tf32() {
    const std::int64_t t = s_.threads(), per = 32 / s_.b_vec;  // lanes along k (b_vec > 1)
    for (std::int64_t q = 0; q < s_.b_units(); ++q) {
      const Value e = b_.add(tid_, c(q * t));
      const Value lane = b_.mod(e, c(32)), unit = b_.div(e, c(32));
      const Value r = s_.b_vec == 1 ? b_.add(b_.mul(b_.mod(unit, c(2)), c(16)), b_.mod(lane, c(16)))
                                    : b_.mul(b_.mod(lane, c(per)), c(s_.b_vec));
      const Value nc = s_.b_vec == 1 ? b_.add(b_.mul(b_.div(unit, c(2)), c(2)), b_.div(lane, c(16)))
                                     : b_.add(b_.mul(unit, c(s_.b_vec)), b_.div(lane, c(per)));
      const Value col = b_.add(n0_, b_.mul(nc, c(4)));
      const Value source = b_.add(b_.add(scaled(r, p_.b.c0), col), c(p_.b.constant));
      // Element i (n = 4 nc + i) at 32 n + 4 ((r / 4) ^ (n % 8)) + r % 4,
      // n % 8 = 4 (nc % 2) + i: the XOR with i is left to store_b.
      const Value row = b_.mul(nc, c(128));
      const Value x = b_.bit_xor(b_.div(r, c(4)), b_.mul(b_.mod(nc, c(2)), c(4)));
      const Value local = b_.add(b_.add(row, b_.mod(r, c(4))), c(s_.stages * s_.a_size()));
      b_units_.push_back({source, local, r, guard_n_ ? b_.cmplt(col, c(n_)) : Value{}});
      b_xor_.push_back(x);
      // b_async=1: the unit's 16-byte piece of a plain tile, thread-major
      // (a warp's 32 pieces are 512 consecutive bytes: no bank conflicts
      // for the copy nor for the load).
      if (s_.b_async) b_raw_.push_back(b_.add(b_.mul(e, c(4)), c(s_.stages * s_.a_size() + s_.b_stages() * s_.b_size())));
    }
  }

  // tf32: whether B unit q's 4 elements of tile kt are inside the matrix
  // (invalid when nothing is guarded), and'ed with `live` when given.
  Value b_inside(Value k0, std::size_t q, Value live = {}) {
    Value inside;
    for (Value cond : {guard_k_ ? b_.cmplt(b_.add(k0, b_units_[q].k), c(k_)) : Value{}, b_units_[q].inside, live})
      if (cond.valid()) inside = inside.valid() ? b_.and_(inside, cond) : cond;
    return inside;
  }

  // tf32: B's tile kt into the staging registers as loaded (from element 0
  // where outside the matrix or not `live`, when given): the zeros go in at
  // store_b, so nothing uses the loads until the next step's stores and the
  // thread does not wait for them while its WGMMAs run (a select right
  // after each load stalled every step on the load's latency).
  // A unit's b_vec rows are inside or outside together (k and K multiples
  // of b_vec).
  void load_b(Value kt, Value live = {}) {
    const Value k0 = b_.mul(kt, c(s_.bk()));
    const Value b_step = scaled(k0, p_.b.c0);
    for (std::size_t q = 0; q < b_units_.size(); ++q) {
      const Value index = b_.add(b_units_[q].source, b_step);
      const Value inside = b_inside(k0, q, live);
      for (std::int64_t j = 0; j < s_.b_vec; ++j) {
        const Value row = j == 0 ? index : b_.add(index, c(j * p_.b.c0));
        const Value v = b_.load(b_mem_, inside.valid() ? b_.select(inside, row, c(0)) : row, 4);
        b_.store(b_staged_, staged_at(q, j), v);
      }
    }
  }

  // tf32: where row j of B unit q waits in the staging registers.
  Value staged_at(std::size_t q, std::int64_t j) { return c(4 * (s_.b_vec * static_cast<std::int64_t>(q) + j)); }

  // tf32: B unit q's rows (each 4 consecutive n of one k, k ascending) into
  // B's stage at `base`: n rows of 32 k, n = 4 nc + i taking its k of the
  // rows (rows[j][i]) as one store (one element for one row), in its 16-byte
  // chunk XORed by the unit's swizzle (r % 4 = 0 for 4 rows, 0 or 2 for 2:
  // aligned).
  void store_transposed(Value base, std::size_t q, const std::vector<Value>& rows) {
    const Value at = b_.add(base, b_units_[q].local);
    for (std::uint32_t i = 0; i < 4; ++i) {
      Value w = b_.extract(rows[0], i);
      if (rows.size() > 1) {
        w = b_.broadcast(w, static_cast<std::uint8_t>(rows.size()));
        for (std::uint32_t j = 1; j < rows.size(); ++j) w = b_.insert(w, b_.extract(rows[j], i), j);
      }
      const Value chunk = b_.mul(b_.bit_xor(b_xor_[q], c(i)), c(4));
      b_.store(tiles_, b_.add(b_.add(at, c(32 * i)), chunk), w);
    }
  }

  // tf32: the staging registers (tile kt) into B's stage `stage`, b_vec k
  // a store, zeros outside the matrix. A tile past the last (loaded from
  // element 0) goes into a stage no later step reads.
  void store_b(Value kt, Value stage) {
    const Value base = b_.mul(stage, c(s_.b_size()));
    const Value k0 = b_.mul(kt, c(s_.bk()));
    for (std::size_t q = 0; q < b_units_.size(); ++q) {
      const Value inside = b_inside(k0, q);
      std::vector<Value> rows;
      for (std::int64_t j = 0; j < s_.b_vec; ++j) {
        Value v = b_.load(b_staged_, staged_at(q, j), 4);
        if (inside.valid()) v = b_.select(inside, v, b_.broadcast(zero_, 4));
        rows.push_back(v);
      }
      store_transposed(base, q, rows);
    }
  }

  // tf32 b_async=1: this thread's pieces of the plain tile in piece stage
  // `raw` (copied, zeros outside the matrix included) into B's stage
  // `stage`, one element at a time (as store_b with b_vec=1).
  void transpose_b(Value raw, Value stage) {
    const Value raw_base = b_.mul(raw, c(s_.b_size())), base = b_.mul(stage, c(s_.b_size()));
    for (std::size_t q = 0; q < b_units_.size(); ++q) {
      const Value v = b_.load(tiles_, b_.add(raw_base, b_raw_[q]), 4);
      store_transposed(base, q, {v});
    }
  }

  // The copies of tile kt into stage `stage`; zeros where `live` (when
  // given) is false. tf32: A, and with b_async=1 B's plain tile into piece
  // stage `raw` (else B is load_b's and store_b's).
  void copy_tile(Value kt, Value stage, Value raw, Value live = {}) {
    const Value k0 = b_.mul(kt, c(s_.bk()));
    const Value a_base = b_.mul(stage, c(s_.a_size())), b_base = b_.mul(stage, c(s_.b_size()));
    const Value b_step = scaled(k0, p_.b.c0);
    for (const CopyUnit& u : a_units_) {
      const Value v = guarded_load(a_mem_, b_.add(u.source, k0), {u.inside, guard_k_ ? b_.cmplt(b_.add(k0, u.k), c(k_)) : Value{}, live});
      b_.copy_async(tiles_, b_.add(a_base, u.local), v);
    }
    if (s_.b_async) {
      const Value raw_base = b_.mul(raw, c(s_.b_size()));
      for (std::size_t q = 0; q < b_units_.size(); ++q) {
        const Value v = guarded_load(b_mem_, b_.add(b_units_[q].source, b_step), {b_inside(k0, q), live});
        b_.copy_async(tiles_, b_.add(raw_base, b_raw_[q]), v);
      }
      return;
    }
    if (s_.tf32 && !s_.swap) return;
    for (const CopyUnit& u : b_units_) {
      const Value v = guarded_load(b_mem_, b_.add(u.source, b_step), {guard_k_ ? b_.cmplt(b_.add(k0, u.k), c(k_)) : Value{}, u.inside, live});
      b_.copy_async(tiles_, b_.add(b_base, u.local), v);
    }
  }

  // A 16-byte copy's elements at memory[index ..] where every given
  // condition holds, else zeros.
  Value guarded_load(Value memory, Value index, std::initializer_list<Value> conditions) {
    const auto n = static_cast<std::uint8_t>(s_.vec());
    Value inside;
    for (Value cond : conditions)
      if (cond.valid()) inside = inside.valid() ? b_.and_(inside, cond) : cond;
    if (!inside.valid()) return b_.load(memory, index, n);
    const Value v = b_.load(memory, b_.select(inside, index, c(0)), n);
    return b_.select(inside, v, b_.broadcast(zero_, n));
  }

  // The 4 WGMMAs of one step from stage `stage`: k 16 j of the warp group's
  // A rows and of B's slice j.
  void compute(Value stage, Value b_stage_index = {}) {
    const Value a_stage = b_.add(b_.mul(stage, c(s_.a_size())), a_group_);
    const Value b_stage = b_.add(b_.mul(b_stage_index.valid() ? b_stage_index : stage, c(s_.b_size())), c(s_.stages * s_.a_size()));
    for (std::int64_t j = 0; j < s_.bk() / s_.mma_k(); ++j) {
      for (std::int64_t q = 0; q < s_.split; ++q) {
        // tf32: B's rows are n, k j 8 into each (kernel_ir.h, the tf32 form).
        const std::int64_t b_at = s_.tf32 ? 32 * q * s_.wn() + 8 * j : j * kAtom * (s_.bn / 64) + q * kAtom * (s_.wn() / 64);
        const Value tiles = b_.insert(b_.broadcast(affine(a_stage, 1, s_.mma_k() * j), 2), affine(b_stage, 1, b_at), 1);
        b_.wgmma(tiles_, tiles, acc_[static_cast<std::size_t>(q)], static_cast<std::uint32_t>(s_.wn()));
      }
    }
  }

  // C: accumulator element i of thread (w, g, t) of warp group `group` at
  // row 64 group + 16 w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2t + i % 2
  // (sdk::wgmma_d_coord); the two columns of a row as one store where C is
  // column-contiguous with even rows.
  void store_c() {
    const Value c_mem = params_.at(p_.c_param);
    const DType c_dtype = old_[p_.c_param].dtype;
    const auto [warp, g, t] = fragment_thread();
    const Value warp_row = b_.mul(warp, c(16));
    const Value row0 = b_.add(b_.add(m0_, b_.mul(group_, c(64))), b_.add(warp_row, g));
    const Value col0 = b_.add(n0_, b_.mul(t, c(2)));
    for (int h = 0; h < 2; ++h) {
      const Value row = affine(row0, 1, 8 * h);
      const Value row_in = guard_m_ ? b_.cmplt(row, c(m_)) : Value{};
      const Value row_at = b_.add(scaled(row, p_.c.c0), c(p_.c.constant));
      for (std::int64_t j = 0; j < s_.bn / 8; ++j) {
        const std::int64_t per = s_.wn() / 8;  // 8-column blocks per WGMMA
        const Value d = b_.load(acc_[static_cast<std::size_t>(j / per)], c(4 * (j % per)), 4);
        const Value col = affine(col0, 1, 8 * j);
        if (c_pairs_) {
          const Value pair = b_.insert(b_.broadcast(mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h))), 2),
                                       mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h + 1))), 1);
          mma::store_c_element(b_, c_mem, b_.add(row_at, col), pair, row_in, guard_n_ ? b_.cmplt(col, c(n_)) : Value{});
          continue;
        }
        for (int e = 0; e < 2; ++e) {
          const Value jc = affine(col, 1, e);
          const Value v = mma::c_element(b_, c_dtype, b_.extract(d, static_cast<std::uint32_t>(2 * h + e)));
          mma::store_c_element(b_, c_mem, b_.add(row_at, scaled(jc, p_.c.c1)), v, row_in,
                               guard_n_ ? b_.cmplt(jc, c(n_)) : Value{});
        }
      }
    }
  }

  const Kernel& old_;
  const Product& p_;
  Config s_;
  bool c_pairs_;
  std::map<ValueId, Value> params_;
  std::int64_t m_ = 0, n_ = 0, k_ = 0;
  bool guard_m_ = false, guard_n_ = false, guard_k_ = false;
  Value a_mem_, b_mem_, tid_, m0_, n0_, group_, zero_, tiles_, a_group_, b_staged_;
  std::vector<Value> acc_;  // one per WGMMA along n
  std::vector<CopyUnit> a_units_, b_units_;
  std::vector<Value> b_xor_;  // tf32: each B unit's swizzle XOR before its element's i
  std::vector<Value> b_raw_;  // tf32 b_async=1: each B unit's piece in piece stage 0
};

Result<Config> config_of(const OptStep& step) {
  KILN_TRY(known_params(step, {"bm", "bn", "stages", "inflight", "split", "mma_first", "tf32", "b_async", "b_vec", "swap"}));
  Config s;
  KILN_TRY_ASSIGN(s.bm, require_param(step, "bm"));
  KILN_TRY_ASSIGN(s.bn, require_param(step, "bn"));
  s.stages = step.param("stages", 4);
  s.inflight = step.param("inflight", 1);
  s.split = step.param("split", 1);
  s.mma_first = step.param("mma_first", 0);
  s.tf32 = step.param("tf32", 0);
  s.b_async = step.param("b_async", 0);
  s.b_vec = step.param("b_vec", 1);
  s.swap = step.param("swap", 0);
  return s;
}

class WgmmaStaged final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "matrix products of f16/bf16 (or f32 as tf32, when asked: tf32=1) on the warp-group MMA (wgmma, sm_90a), "
           "a bm x bn block per group of bm / 64 warp groups, A and B tiles of 64 (tf32: 32) along k copied "
           "asynchronously (tf32's B through registers, stored transposed b_vec k a store, or with b_async=1 copied too and "
           "transposed in LOCAL, or with swap=1 C^T = B^T A^T, B^T's fragments from registers) "
           "into 128-byte-swizzled LOCAL memory in 2 to 6 stages, up to 2 WGMMA groups kept in flight (inflight, default 1)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!ir::verify(kernel).ok()) return steps;
    auto matched = mma::match(kernel);
    if (!std::holds_alternative<Product>(matched)) return steps;
    const Product& p = std::get<Product>(matched);
    if (p.input == DType::F32) return steps;  // tf32 changes the numerics: only on request (the AllowTf32 recipes)
    // A short list: 128 x 128 and 128 x 256 blocks of two warp groups, then
    // 64-row ones for small m, in 3 stages with no WGMMA group kept in
    // flight. The forms with one in flight are the recipes'
    // (core/tune/default_space.cpp): as configs too, the tuner would meet
    // each first as a config and drop the recipe as a duplicate.
    const std::int64_t m64 = ceil_div(p.mp.lengths[0], 64) * 64, n64 = ceil_div(p.mp.lengths[1], 64) * 64;
    constexpr std::pair<std::int64_t, std::int64_t> kBlocks[] = {{128, 128}, {128, 256}, {64, 128}, {64, 64}};
    for (const auto& [bm, bn] : kBlocks) {
      if (bm > std::max<std::int64_t>(m64, 64) || bn > std::max<std::int64_t>(n64, 64)) continue;
      const Config s{bm, bn, 3, 0};
      if (!misfit(p, s, device).empty()) continue;
      steps.push_back(make_step(kName, {{"bm", bm}, {"bn", bn}, {"stages", 3}, {"inflight", 0}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY_ASSIGN(const Config s, config_of(step));
    return mma::rewrite_product(
        kernel, step, "the staged WGMMA kernel", [&](const Product& p) { return misfit(p, s, device); },
        [&](const Product& p) { return Emitter(kernel, p, s, device).run(); });
  }
};

}  // namespace

const Optimization& wgmma_staged() {
  static const WgmmaStaged instance;
  return instance;
}

}  // namespace kiln::passes::opts
