// kiln/ir/kernel.hpp - the core's working form of the kernel IR.
//
// A Kernel is a vector of Ops in SSA order, exactly the wire format of
// kiln/kernel_ir.h with typed enums: ops[i] defines value i; operands name
// earlier ops; LOOP/END_LOOP and IF/END_IF are nested markers. The semantics
// of every op are written in kernel_ir.h and implemented by the reference
// interpreter (kiln/sdk/interpreter.hpp).
//
// Passes rewrite a Kernel by building a new op vector (see rewriter.hpp):
// ops have no identity beyond their position, so two kernels that print the
// same are equal and hash the same, whatever sequence of edits produced them.
#pragma once

#include <kiln/kernel_ir.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::ir {

enum class DType : std::uint8_t {
  Invalid = KILN_DTYPE_INVALID,
  BF16 = KILN_DTYPE_BF16,
  F16 = KILN_DTYPE_F16,
  F32 = KILN_DTYPE_F32,
  F64 = KILN_DTYPE_F64,
  U8 = KILN_DTYPE_U8,
  U16 = KILN_DTYPE_U16,
  U32 = KILN_DTYPE_U32,
  U64 = KILN_DTYPE_U64,
  I8 = KILN_DTYPE_I8,
  I16 = KILN_DTYPE_I16,
  I32 = KILN_DTYPE_I32,
  I64 = KILN_DTYPE_I64,
  Bool = KILN_DTYPE_BOOL,
};
inline constexpr DType kIndexType = DType::I64;

enum class OpKind : std::uint8_t {
  Invalid = KILN_OP_INVALID,
  Const = KILN_OP_CONST,
  Param = KILN_OP_PARAM,
  Storage = KILN_OP_STORAGE,
  Load = KILN_OP_LOAD,
  Store = KILN_OP_STORE,
  Index = KILN_OP_INDEX,
  Loop = KILN_OP_LOOP,
  EndLoop = KILN_OP_END_LOOP,
  If = KILN_OP_IF,
  EndIf = KILN_OP_END_IF,
  Barrier = KILN_OP_BARRIER,
  Unary = KILN_OP_UNARY,
  Binary = KILN_OP_BINARY,
  Cast = KILN_OP_CAST,
  Mad = KILN_OP_MAD,
  Select = KILN_OP_SELECT,
  Broadcast = KILN_OP_VEC_BROADCAST,
  Insert = KILN_OP_VEC_INSERT,
  Extract = KILN_OP_VEC_EXTRACT,
  Mma = KILN_OP_MMA,
  SubgroupReduce = KILN_OP_SUBGROUP_REDUCE,
  Bf16Pair = KILN_OP_BF16_PAIR,
  DotBf16 = KILN_OP_DOT_BF16,
  CopyAsync = KILN_OP_COPY_ASYNC,
  CopyCommit = KILN_OP_COPY_COMMIT,
  CopyWait = KILN_OP_COPY_WAIT,
  LoadMatrix = KILN_OP_LOAD_MATRIX,
  Wgmma = KILN_OP_WGMMA,
  WgmmaFence = KILN_OP_WGMMA_FENCE,
  WgmmaCommit = KILN_OP_WGMMA_COMMIT,
  WgmmaWait = KILN_OP_WGMMA_WAIT,
  Prefetch = KILN_OP_PREFETCH,
};

enum class MmaShape : std::uint8_t {
  M16N8K16 = KILN_MMA_M16N8K16,
  M16N8K8 = KILN_MMA_M16N8K8,
};

enum class UnaryOp : std::uint8_t {
  Neg = KILN_UNARY_NEG,
  BitNot = KILN_UNARY_BIT_NOT,
  Exp = KILN_UNARY_EXP,
  Exp2 = KILN_UNARY_EXP2,
  Ln = KILN_UNARY_LN,
  Log2 = KILN_UNARY_LOG2,
  Recip = KILN_UNARY_RECIP,
  Sqrt = KILN_UNARY_SQRT,
  Sin = KILN_UNARY_SIN,
  Cos = KILN_UNARY_COS,
  Floor = KILN_UNARY_FLOOR,
  Trunc = KILN_UNARY_TRUNC,
  Abs = KILN_UNARY_ABS,
  // ABI 1.1; a device that does not claim one gets it lowered (docs/passes.md).
  Tanh = KILN_UNARY_TANH,
  Erf = KILN_UNARY_ERF,
  Sigmoid = KILN_UNARY_SIGMOID,
  Rsqrt = KILN_UNARY_RSQRT,
  Log1p = KILN_UNARY_LOG1P,
  Expm1 = KILN_UNARY_EXPM1,
};

enum class BinaryOp : std::uint8_t {
  Add = KILN_BINARY_ADD,
  Sub = KILN_BINARY_SUB,
  Mul = KILN_BINARY_MUL,
  Div = KILN_BINARY_DIV,
  Pow = KILN_BINARY_POW,
  Mod = KILN_BINARY_MOD,
  CmpLt = KILN_BINARY_CMPLT,
  CmpGt = KILN_BINARY_CMPGT,
  Max = KILN_BINARY_MAX,
  Min = KILN_BINARY_MIN,
  Or = KILN_BINARY_OR,
  And = KILN_BINARY_AND,
  BitXor = KILN_BINARY_BIT_XOR,
  BitOr = KILN_BINARY_BIT_OR,
  BitAnd = KILN_BINARY_BIT_AND,
  Shl = KILN_BINARY_SHL,
  Shr = KILN_BINARY_SHR,
  NotEq = KILN_BINARY_NOT_EQ,
  Eq = KILN_BINARY_EQ,
};

enum class ParamKind : std::uint8_t {
  Global = KILN_PARAM_GLOBAL,
  GlobalMut = KILN_PARAM_GLOBAL_MUT,
  Variable = KILN_PARAM_VARIABLE,
};

enum class Scope : std::uint8_t {
  Group = KILN_SCOPE_GROUP,
  Local = KILN_SCOPE_LOCAL,
  Register = KILN_SCOPE_REGISTER,
};

using ValueId = std::uint32_t;
inline constexpr ValueId kNoValue = KILN_NO_OPERAND;

// One op; layout-identical to kiln_op (checked below).
struct Op {
  OpKind kind = OpKind::Invalid;
  DType dtype = DType::Invalid;
  std::uint8_t lanes = 1;
  std::uint8_t code = 0;     // UnaryOp, BinaryOp (BINARY, SUBGROUP_REDUCE), ParamKind, Scope or MmaShape, per kind
  std::uint32_t attr = 0;    // PARAM slot, INDEX axis, INSERT/EXTRACT lane, MMA input dtype, subgroup width
  std::array<ValueId, 3> src = {kNoValue, kNoValue, kNoValue};
  std::uint32_t reserved = 0;
  std::uint64_t imm = 0;     // CONST bits, PARAM/STORAGE element count

  UnaryOp unary() const { return static_cast<UnaryOp>(code); }
  BinaryOp binary() const { return static_cast<BinaryOp>(code); }
  ParamKind param_kind() const { return static_cast<ParamKind>(code); }
  Scope scope() const { return static_cast<Scope>(code); }
  MmaShape mma_shape() const { return static_cast<MmaShape>(code); }

  // Whether other ops may name this op's result as an operand (STORE, IF and
  // the END/BARRIER markers have none).
  bool has_result() const;
  // Whether the result is a memory reference (a GLOBAL/GLOBAL_MUT PARAM or a
  // STORAGE) rather than a value.
  bool is_memory() const;
  // The src[] entries this kind uses, in order (the rest are kNoValue).
  std::span<const ValueId> operands() const { return {src.data(), operand_count()}; }
  std::span<ValueId> operands() { return {src.data(), operand_count()}; }
  std::size_t operand_count() const;

  bool operator==(const Op&) const = default;
};

static_assert(sizeof(Op) == sizeof(kiln_op));
static_assert(offsetof(Op, attr) == offsetof(kiln_op, attr));
static_assert(offsetof(Op, src) == offsetof(kiln_op, src));
static_assert(offsetof(Op, imm) == offsetof(kiln_op, imm));

struct Kernel {
  std::vector<Op> ops;

  // The id the next appended op will get.
  ValueId next_id() const { return static_cast<ValueId>(ops.size()); }

  std::size_t size() const { return ops.size(); }
  const Op& operator[](ValueId id) const { return ops[id]; }
  Op& operator[](ValueId id) { return ops[id]; }

  // Exact conversions to and from the ABI wire format.
  std::vector<kiln_op> to_wire() const;
  static Kernel from_wire(std::span<const kiln_op> ops);

  bool operator==(const Kernel&) const = default;
};

}  // namespace kiln::ir
