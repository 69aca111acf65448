// The interpreter's decoded program (private to the SDK): what the validator
// and decoder (interpreter_decode.cpp) produce once per kernel and the engine
// (interpreter_engine.cpp) runs for every launch.
//
// Values live in slots (interpreter_values.hpp), one per element per thread;
// a value of `lanes` elements takes `lanes` consecutive slots. Ops whose
// value is the same in every thread of a launch or a group (CONST, VARIABLE
// params, INDEX) are not instructions: their slots are filled before the run.
// Memory (PARAM buffers, STORAGE) is referred to by index into `memories`.
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>
#include <vector>

#include "interpreter_values.hpp"
#include "kiln/sdk/interpreter.hpp"

namespace kiln::sdk {

namespace interp {

// One row of an element-wise op: out[l] = f(a[l], b[l], c[l]) for every lane
// l < n (inactive lanes too: the op has no side effects there). Returns n
// (no element-wise op faults: integer division by zero gives 0).
struct Row {
  u64* out;
  const u64* a;
  const u64* b;
  const u64* c;
  std::size_t n;
  unsigned shift;         // integer normalising shift of the result's dtype
  const std::uint8_t* active;
};
using RowFn = std::size_t (*)(const Row&);

RowFn unary_row(VClass c, unsigned op);
RowFn binary_row(VClass c, unsigned op);
RowFn cast_row(VClass from, VClass to);
RowFn mad_row(VClass c);
// BF16_PAIR (a = lo, b = hi) and DOT_BF16 (a = acc, b, c = the pair words),
// interpreter_bf16_dot.cpp.
RowFn bf16_pair_row();
RowFn dot_bf16_row();

enum class Exec : std::uint8_t {
  Load, Store, Loop, EndLoop, If, EndIf, Barrier, Elementwise, Select, Broadcast, Insert, Extract, Mma,
  SubgroupReduce, CopyAsync, CopyCommit, CopyWait, LoadMatrix, Wgmma, WgmmaFence, WgmmaCommit, WgmmaWait
};

// SUBGROUP_REDUCE over n lanes (interpreter_subgroup.cpp): out[l] = the
// reduction of x over the aligned subgroup of `width` lanes holding l, in
// the butterfly order of kernel_ir.h, each step through `fn` (the BINARY
// op's row function); lower and upper are n-lane scratch rows.
struct SubgroupRows {
  const u64* x;
  u64* out;
  u64* lower;
  u64* upper;
  std::size_t n;
  const std::uint8_t* active;
};
void subgroup_reduce_rows(RowFn fn, unsigned shift, unsigned width, const SubgroupRows& rows);

// One warp's MMA (interpreter_mma.cpp): reads the fragments of the 32
// threads at lanes [first, first + 32) of the operand rows (a[i]: element i
// of A's fragment, one u64 per lane; b, c likewise) and writes D's to d.
struct MmaRows {
  const u64* a[8];
  const u64* b[4];
  const u64* c[4];
  u64* d[4];
};
void mma_warp(unsigned shape, unsigned input, const MmaRows& rows, std::size_t first);

inline constexpr std::uint32_t kNoSlot = UINT32_MAX;
inline constexpr std::uint32_t kNone = UINT32_MAX;  // no op

struct Instr {
  Exec exec;
  std::uint8_t lanes = 1;      // elements of the result (LOAD/STORE: of the access)
  std::uint8_t dtype = 0;      // result dtype; LOAD/STORE: the memory's
  OpClass op_class = OpClass::Control;
  std::uint8_t shift = 0;      // Elementwise: result's integer shift
  std::uint8_t operands = 0;   // Elementwise: 1..3
  std::uint8_t input = 0;      // MMA: the dtype of A and B; WGMMA: 1 when A is in registers (code 1)
  std::uint32_t op = 0;        // index of the wire op (for errors)
  std::uint32_t dst = kNoSlot; // first slot of the result
  std::uint32_t a = kNoSlot;   // first slot of operand 0 (LOAD/STORE: memory index)
  std::uint32_t b = kNoSlot;   // operand 1 (LOAD/STORE: index slot)
  std::uint32_t c = kNoSlot;   // operand 2 (STORE: value slot)
  std::uint32_t jump = 0;      // LOOP/IF: instruction after the END; END_LOOP: first body instruction
  std::uint32_t depth = 0;     // LOOP/IF/END*: nesting depth of the block (its mask level - 1)
  std::uint32_t aux = 0;       // LOOP/END_LOOP: trip-count slot; INSERT/EXTRACT: lane;
                               // SELECT: 1 when the condition is a vector; MMA: the shape;
                               // SUBGROUP_REDUCE: the width; COPY_WAIT: the groups left pending;
                               // LOAD_MATRIX: 1 when transposed; LOAD/STORE: 1 when
                               // KILN_ACCESS_UNALIGNED; WGMMA: N (a, c: the
                               // memories of the tiles and the accumulator); WGMMA_WAIT: groups left
  RowFn fn = nullptr;          // Elementwise
};

enum class Space : std::uint8_t { Global, Local, Register };

struct Memory {
  std::uint32_t op;            // the PARAM or STORAGE op
  Space space;
  std::uint8_t dtype;
  bool writable;
  std::uint32_t param_slot = 0;    // Global: argument slot
  std::uint64_t elements = 0;      // declared count (Global: 0 when unknown)
  std::uint64_t offset = 0;        // Local: byte offset in a group's block; Register: in a thread's
  std::uint64_t first_element = 0; // Local/Register: element index in the block's shadow
};

struct ConstSlot {
  std::uint32_t slot;
  u64 value;
};
struct VariableSlot {
  std::uint32_t slot;
  std::uint32_t param_slot;
  std::uint8_t dtype;
  std::uint32_t op;
};
struct IndexSlot {
  std::uint32_t slot;
  std::uint32_t axis;
};

}  // namespace interp

struct ProgramData {
  std::vector<kiln_op> ops;                 // the kernel as given
  std::vector<interp::Instr> code;
  std::vector<interp::Memory> memories;
  std::vector<interp::ConstSlot> consts;
  std::vector<interp::VariableSlot> variables;
  std::vector<interp::IndexSlot> group_indices;
  std::vector<interp::IndexSlot> local_indices;
  std::vector<std::uint32_t> param_ops;     // [slot] -> PARAM op index
  std::uint32_t slot_count = 0;
  std::uint32_t max_depth = 0;              // deepest LOOP/IF nesting
  std::array<std::uint32_t, 3> local = {1, 1, 1};
  std::uint64_t threads_per_group = 1;
  std::uint64_t local_bytes = 0;            // LOCAL storage per group
  std::uint64_t local_elements = 0;
  std::uint64_t register_bytes = 0;         // REGISTER storage per thread
  std::uint64_t register_elements = 0;
  bool has_barrier = false;
};

// What validation learns of a kernel's structure, for decoding.
struct KernelStructure {
  std::vector<std::uint32_t> end_of;     // LOOP/IF op -> its END op
  std::vector<std::uint32_t> loop_of;    // op -> innermost LOOP whose body holds it (kNoSlot: none)
  std::vector<std::uint32_t> param_ops;  // slot -> PARAM op
  std::vector<interp::Memory> storages;  // STORAGE ops, laid out in a group's / a thread's block
  std::array<std::uint32_t, 3> local = {1, 1, 1};
  std::uint64_t threads_per_group = 1;
  std::uint64_t local_bytes = 0;
  std::uint64_t local_elements = 0;
  std::uint64_t register_bytes = 0;
  std::uint64_t register_elements = 0;
  bool has_barrier = false;
};

// Checks every rule the interpreter relies on (interpreter_validate.cpp);
// throws PluginError(INVALID_ARGUMENT) naming the op at fault.
KernelStructure validate_kernel(std::span<const kiln_op> ops, const InterpreterLimits& limits);

// Validates and builds the decoded form; throws PluginError naming the op at fault.
ProgramData decode_program(std::span<const kiln_op> ops, const InterpreterLimits& limits);

// Runs it (interpreter_engine.cpp) on the grid computed from the INDEX ops;
// `grid`, when not NULL, must equal it.
ExecStats run_program(const ProgramData& program, std::span<const kiln_arg> args, const LaunchGrid* grid,
                      const RunOptions& options);

}  // namespace kiln::sdk
