// kiln/sdk/interpreter.hpp - the reference interpreter: runs a wire-format
// kernel (kiln/kernel_ir.h) on host memory with exactly the semantics written
// there. It is the oracle every pass, optimization sequence and plugin is
// checked against, and the engine of the dummy plugin.
//
//   kiln::sdk::InterpretedProgram program(ops);        // validate + decode once
//   kiln_arg args[] = {host_buffer_arg(a), host_buffer_arg(b), host_buffer_arg(c)};
//   kiln::sdk::ExecStats stats = program.run(args);    // grid from the INDEX ops
//
// Robustness: any op array, even garbage from a third-party host, yields a
// program or a PluginError naming the op (never a crash, a hang or an
// out-of-bounds read): the constructor validates the structure first, and run
// checks every memory access, divisor and barrier, and stops after
// RunOptions::max_ops executed ops.
//
// Execution model. The threads of a work-group (and, for speed, of a batch
// of consecutive work-groups) step through the kernel together, op by op,
// under an active mask, the way GPUs run warps: an IF or LOOP whose
// condition or trip count differs between threads masks the threads that do
// not take it. A BARRIER must be reached by all threads of a group or by none
// ("divergent barrier at op N"). Results equal those of running each thread
// alone from barrier to barrier, for every kernel without data races. With
// RunOptions::check_storage (the default) the interpreter also reports what
// would make a device's result differ from its own: a race on LOCAL storage
// (a thread reads an element another thread wrote since the last barrier, or
// overwrites with a different value an element another thread wrote or read
// since then) and a read of LOCAL/REGISTER storage nobody wrote (contents
// start undefined). A missing barrier thus fails loudly instead of passing by
// luck. Work-groups are independent: a correct kernel's result does not
// depend on their order, and the interpreter runs them in batches.
//
// Values: f16/bf16 are computed in f32 and rounded to nearest even after each
// op (kiln/sdk/half.hpp; casts round correctly from any type); integer
// arithmetic wraps; shifts take y mod the bit width; float -> int casts
// truncate (NaN gives 0 and out-of-range values saturate to i64/u64, then
// wrap: the ABI leaves them undefined); MAD is not fused (two roundings).
//
// Thread safety: a program is immutable; run() may be called concurrently.
#pragma once

#include <kiln/plugin.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>
#include <string_view>
#include <utility>

#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::sdk {

// ----------------------------------------------------------------- stats --

// Classes of executed ops, for timing models. Vector ops count once per lane.
enum class OpClass : std::uint8_t {
  IntAlu,       // integer/bool arithmetic, logic, comparisons, shifts, MAD
  IntDiv,       // integer DIV / MOD
  FloatAlu,     // f32/f16/bf16 add, sub, mul, MAD, min, max, comparisons, neg, abs, floor, trunc
  DoubleAlu,    // the same on f64
  FloatSpecial, // float DIV, MOD, POW, RECIP, SQRT, SIN, COS (any float dtype)
  ExpLn,        // EXP, LN
  Exp2Log2,     // EXP2, LOG2
  Convert,      // CAST
  Move,         // SELECT, VEC_BROADCAST, VEC_INSERT, VEC_EXTRACT
  Control,      // LOOP, END_LOOP, IF, END_IF, BARRIER
  Count
};
inline constexpr std::size_t kOpClassCount = static_cast<std::size_t>(OpClass::Count);
std::string_view op_class_name(OpClass c);

enum class MemorySpace : std::uint8_t { Global, Local, Register, Count };
inline constexpr std::size_t kMemorySpaceCount = static_cast<std::size_t>(MemorySpace::Count);
std::string_view memory_space_name(MemorySpace s);

struct MemoryStats {
  std::uint64_t loads = 0;          // load instructions executed by threads (a vector load counts once)
  std::uint64_t stores = 0;
  std::uint64_t load_bytes = 0;
  std::uint64_t store_bytes = 0;
  std::uint64_t warp_accesses = 0;  // load/store instructions issued per warp (>= 1 active thread)
  // Global memory only: aligned RunOptions::sector_bytes segments touched,
  // counted per warp access (neighbouring threads reading neighbouring
  // elements share sectors: coalesced; a stride spreads them: one sector per
  // thread). Counted along the warp's threads in order, so non-monotonic
  // patterns may count a sector twice.
  std::uint64_t sectors = 0;
};

// What one launch did. Thread-level counts are exact; warp-level counts
// group a work-group's threads into warps of RunOptions::warp_size
// consecutive linear thread ids (axis 0 fastest), as GPUs do.
struct ExecStats {
  std::uint64_t groups = 0;
  std::uint64_t threads_per_group = 0;
  std::uint64_t threads = 0;                       // groups * threads_per_group
  std::uint32_t warp_size = 0;                     // as used for warp counts
  std::uint64_t warps = 0;                         // groups * ceil(threads_per_group / warp_size)
  std::uint64_t local_bytes_per_group = 0;         // LOCAL storage of the kernel
  std::uint64_t register_bytes_per_thread = 0;     // REGISTER storage of the kernel
  std::array<std::uint64_t, kOpClassCount> thread_ops{};  // executed per thread (vector: per lane)
  std::array<std::uint64_t, kOpClassCount> warp_ops{};    // issued per warp (vector: per lane)
  std::array<MemoryStats, kMemorySpaceCount> memory{};
  std::uint64_t barriers = 0;                      // barrier crossings, counted once per group
  std::uint64_t executed_ops = 0;                  // thread-level ops + threads started (the max_ops budget)

  const MemoryStats& global() const { return memory[static_cast<std::size_t>(MemorySpace::Global)]; }
  const MemoryStats& local() const { return memory[static_cast<std::size_t>(MemorySpace::Local)]; }
  const MemoryStats& registers() const { return memory[static_cast<std::size_t>(MemorySpace::Register)]; }
  std::uint64_t thread(OpClass c) const { return thread_ops[static_cast<std::size_t>(c)]; }
  std::uint64_t warp(OpClass c) const { return warp_ops[static_cast<std::size_t>(c)]; }
};

// --------------------------------------------------------------- options --

// Limits checked when a program is built: bounds on the memory a run needs.
struct InterpreterLimits {
  std::uint64_t max_kernel_ops = 1u << 20;              // ops in a kernel
  std::uint64_t max_local_threads = 1u << 16;           // threads per work-group
  std::uint64_t max_local_bytes = 64u << 20;            // LOCAL storage per group
  std::uint64_t max_register_bytes = 1u << 20;          // REGISTER storage per thread
};

struct RunOptions {
  // Stop with an error after this many thread-level ops (each op a thread
  // executes, plus one per thread started, plus one per 64 bytes of LOCAL
  // and REGISTER storage cleared when a batch of groups starts): a loop
  // that runs for ever, or close to it. 0: no limit.
  std::uint64_t max_ops = 20'000'000'000ull;
  std::uint32_t warp_size = 32;     // for the warp-level statistics (>= 1)
  std::uint32_t sector_bytes = 32;  // memory transaction granularity (a power of two)
  bool check_storage = true;        // report LOCAL races and reads of unwritten storage
  // Run only these work-groups (linear ids, axis 0 fastest; each < the
  // grid's group count), one at a time in the order given: a sample of a
  // large grid, e.g. the autotuner's reference outputs. Empty: every group.
  // The span must outlive run().
  std::span<const std::uint64_t> only_groups = {};
  // When set, the run records the elements every STORE writes to a
  // GLOBAL_MUT buffer in (*global_writes)[its param slot], as half-open
  // [begin, end) element ranges in the order written (a store that
  // continues the last range extends it; overlaps and repeats are kept; the
  // vector is resized to the argument count first). The autotuner's
  // sampled reference learns what a sample wrote from it instead of
  // comparing copies of each output (a 2^28-element output is 1 GiB).
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>* global_writes = nullptr;
};

// ------------------------------------------------------------- programs --

struct ProgramData;  // the decoded form (private to the SDK)

class InterpretedProgram {
 public:
  // Validates the kernel's structure and decodes it. Throws
  // PluginError(INVALID_ARGUMENT, "op N (kind): what", failed_op = N), or
  // failed_op -1 for whole-kernel problems (unclosed LOOP, missing slot...).
  explicit InterpretedProgram(std::span<const kiln_op> ops, const InterpreterLimits& limits = {});
  ~InterpretedProgram();
  InterpretedProgram(InterpretedProgram&&) noexcept;
  InterpretedProgram& operator=(InterpretedProgram&&) noexcept;

  // Runs the kernel once on host memory. args[i] binds the PARAM of slot i:
  // BUFFER (host_pointer, bytes) for GLOBAL/GLOBAL_MUT, SCALAR (dtype,
  // scalar_bits) for VARIABLE. The grid is computed from the INDEX ops
  // (compute_grid); the overload taking a grid checks that it matches.
  // Throws PluginError: INVALID_ARGUMENT for bad arguments or grid,
  // LAUNCH_FAILED for kernel faults (out-of-range or misaligned access,
  // divergent barrier, LOCAL race, unwritten storage read,
  // op budget exhausted), each naming the op, the thread and the values at
  // fault (failed_op() is the op).
  ExecStats run(std::span<const kiln_arg> args, const RunOptions& options = {}) const;
  ExecStats run(std::span<const kiln_arg> args, const LaunchGrid& grid, const RunOptions& options = {}) const;

  // The kernel as given (a copy).
  std::span<const kiln_op> ops() const;
  std::uint32_t param_count() const;
  std::uint64_t local_bytes_per_group() const;
  std::uint64_t register_bytes_per_thread() const;
  std::uint64_t threads_per_group() const;

 private:
  std::unique_ptr<const ProgramData> data_;
};

// ----------------------------------------------------------- arguments --

inline kiln_arg host_buffer_arg(void* data, std::uint64_t bytes) {
  kiln_arg a{};
  a.kind = KILN_ARG_BUFFER;
  a.host_pointer = data;
  a.bytes = bytes;
  return a;
}

template <class T>
kiln_arg host_buffer_arg(std::span<T> data) {
  return host_buffer_arg(const_cast<void*>(static_cast<const void*>(data.data())), data.size_bytes());
}

inline kiln_arg scalar_arg(kiln_dtype dtype, std::uint64_t bits) {
  kiln_arg a{};
  a.kind = KILN_ARG_SCALAR;
  a.dtype = dtype;
  a.scalar_bits = bits;
  return a;
}

}  // namespace kiln::sdk
