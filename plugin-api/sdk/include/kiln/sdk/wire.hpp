// kiln/sdk/wire.hpp - small C++ helpers for reading the IR wire format
// (kiln/kernel_ir.h): names, dtype properties, operand walking.
//
// Header-only, C++20. Shared by the core (printer, parser, verifier) and by
// plugins (emitters, interpreter), so every place spells an op the same way.
#pragma once

#include <kiln/kernel_ir.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace kiln::sdk {

// ------------------------------------------------------------------ dtypes --

struct DTypeInfo {
  std::string_view name;  // as in the text form: "f32", "bf16", "bool", ...
  std::uint8_t bytes;     // size of one element in memory
  bool is_float;
  bool is_signed;         // signed integers and floats
};

inline constexpr std::array<DTypeInfo, KILN_DTYPE_COUNT> kDTypes = {{
    {"invalid", 0, false, false},
    {"bf16", 2, true, true},
    {"f16", 2, true, true},
    {"f32", 4, true, true},
    {"f64", 8, true, true},
    {"u8", 1, false, false},
    {"u16", 2, false, false},
    {"u32", 4, false, false},
    {"u64", 8, false, false},
    {"i8", 1, false, true},
    {"i16", 2, false, true},
    {"i32", 4, false, true},
    {"i64", 8, false, true},
    {"bool", 1, false, false},
}};

constexpr bool dtype_valid(unsigned dt) { return dt > KILN_DTYPE_INVALID && dt < KILN_DTYPE_COUNT; }
constexpr const DTypeInfo& dtype_info(unsigned dt) {
  return kDTypes[dtype_valid(dt) ? dt : 0u];
}
constexpr std::string_view dtype_name(unsigned dt) { return dtype_info(dt).name; }
constexpr unsigned dtype_bytes(unsigned dt) { return dtype_info(dt).bytes; }
constexpr bool dtype_is_float(unsigned dt) { return dtype_info(dt).is_float; }
constexpr bool dtype_is_int(unsigned dt) {
  return dtype_valid(dt) && !dtype_info(dt).is_float && dt != KILN_DTYPE_BOOL;
}
constexpr bool dtype_is_signed_int(unsigned dt) { return dtype_is_int(dt) && dtype_info(dt).is_signed; }

// --------------------------------------------------------------- op names --

inline constexpr std::array<std::string_view, KILN_OP_KIND_COUNT> kOpKindNames = {{
    "invalid", "const", "param", "storage", "load", "store", "index", "loop", "endloop", "if",
    "endif", "barrier", "unary", "binary", "cast", "mad", "select", "broadcast", "insert",
    "extract", "mma", "subgroup_reduce", "bf16_pair", "dot_bf16", "copy_async", "copy_commit", "copy_wait",
    "load_matrix", "wgmma", "wgmma_fence", "wgmma_commit", "wgmma_wait", "prefetch",
}};

inline constexpr std::array<std::string_view, KILN_MMA_SHAPE_COUNT> kMmaShapeNames = {{"invalid", "m16n8k16", "m16n8k8"}};

inline constexpr std::array<std::string_view, KILN_UNARY_COUNT> kUnaryNames = {{
    "invalid", "neg", "bitnot", "exp", "exp2", "ln", "log2", "recip", "sqrt", "sin", "cos",
    "floor", "trunc", "abs", "tanh", "erf", "sigmoid", "rsqrt", "log1p", "expm1",
}};

inline constexpr std::array<std::string_view, KILN_BINARY_COUNT> kBinaryNames = {{
    "invalid", "add", "sub", "mul", "div", "pow", "mod", "cmplt", "cmpgt", "max", "min", "or",
    "and", "bitxor", "bitor", "bitand", "shl", "shr", "noteq", "eq",
}};

inline constexpr std::array<std::string_view, 4> kParamKindNames = {{"invalid", "global", "global_mut", "var"}};
inline constexpr std::array<std::string_view, 4> kScopeNames = {{"invalid", "group", "local", "register"}};

template <std::size_t N>
constexpr std::string_view name_of(const std::array<std::string_view, N>& names, unsigned v) {
  return v < N ? names[v] : std::string_view("unknown");
}
constexpr std::string_view op_kind_name(unsigned k) { return name_of(kOpKindNames, k); }
constexpr std::string_view unary_name(unsigned u) { return name_of(kUnaryNames, u); }
constexpr std::string_view binary_name(unsigned b) { return name_of(kBinaryNames, b); }
constexpr std::string_view param_kind_name(unsigned p) { return name_of(kParamKindNames, p); }
constexpr std::string_view scope_name(unsigned s) { return name_of(kScopeNames, s); }
constexpr std::string_view mma_shape_name(unsigned s) { return name_of(kMmaShapeNames, s); }

// --------------------------------------------------------------- MMA ops --

// The fragment sizes of an MMA shape (kernel_ir.h, KILN_OP_MMA): lanes of A,
// B and C/D per thread, and the tile's M, N, K. All zero for an unknown shape.
struct MmaShapeInfo {
  unsigned a_lanes, b_lanes, c_lanes;
  unsigned m, n, k;
};
constexpr MmaShapeInfo mma_shape_info(unsigned shape) {
  switch (shape) {
    case KILN_MMA_M16N8K16: return {8, 4, 4, 16, 8, 16};
    case KILN_MMA_M16N8K8: return {4, 2, 4, 16, 8, 8};
    default: return {0, 0, 0, 0, 0, 0};
  }
}
// Whether `dtype` is an input dtype of `shape` (f16/bf16 for m16n8k16,
// f32 read as tf32 for m16n8k8).
constexpr bool mma_input_allowed(unsigned shape, unsigned dtype) {
  if (shape == KILN_MMA_M16N8K16) return dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
  if (shape == KILN_MMA_M16N8K8) return dtype == KILN_DTYPE_F32;
  return false;
}
// The text name of an MMA input dtype: "f16", "bf16", "tf32".
constexpr std::string_view mma_input_name(unsigned shape, unsigned dtype) {
  if (shape == KILN_MMA_M16N8K8 && dtype == KILN_DTYPE_F32) return "tf32";
  return dtype_name(dtype);
}
// The KILN_FEATURE_MMA_* bit a device sets to run (shape, dtype); UINT32_MAX
// when there is none.
constexpr unsigned mma_feature(unsigned shape, unsigned dtype) {
  if (shape == KILN_MMA_M16N8K16 && dtype == KILN_DTYPE_F16) return KILN_FEATURE_MMA_M16N8K16_F16;
  if (shape == KILN_MMA_M16N8K16 && dtype == KILN_DTYPE_BF16) return KILN_FEATURE_MMA_M16N8K16_BF16;
  if (shape == KILN_MMA_M16N8K8 && dtype == KILN_DTYPE_F32) return KILN_FEATURE_MMA_M16N8K8_TF32;
  return UINT32_MAX;
}
inline constexpr unsigned kMmaWarp = 32;  // threads that execute one MMA together

// Where element i of the fragment of thread `lane` (0..31) lies in its tile,
// as kernel_ir.h writes the layout: A at (row m, col k), B at (row k, col n),
// C and D at (row m, col n).
struct MmaCoord {
  unsigned row, col;
};
constexpr MmaCoord mma_a_coord(unsigned shape, unsigned lane, unsigned i) {
  const unsigned g = lane / 4, t = lane % 4;
  if (shape == KILN_MMA_M16N8K16) return {g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)};
  return {g + 8 * (i % 2), t + 4 * (i / 2)};
}
constexpr MmaCoord mma_b_coord(unsigned shape, unsigned lane, unsigned i) {
  const unsigned g = lane / 4, t = lane % 4;
  if (shape == KILN_MMA_M16N8K16) return {2 * t + i % 2 + 8 * (i / 2), g};
  return {t + 4 * i, g};
}
constexpr MmaCoord mma_c_coord(unsigned lane, unsigned i) { return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2}; }

// ---------------------------------------------------- subgroup reductions --

// The reductions SUBGROUP_REDUCE takes (kernel_ir.h): add, mul, max, min.
constexpr bool subgroup_reduction_allowed(unsigned b) {
  return b == KILN_BINARY_ADD || b == KILN_BINARY_MUL || b == KILN_BINARY_MAX || b == KILN_BINARY_MIN;
}
// Its widths: a power of two from 2 to 64.
inline constexpr unsigned kMaxSubgroupWidth = 64;
constexpr bool subgroup_width_allowed(std::uint32_t w) {
  return w >= 2 && w <= kMaxSubgroupWidth && (w & (w - 1)) == 0;
}

constexpr bool binary_is_comparison(unsigned b) {
  return b == KILN_BINARY_CMPLT || b == KILN_BINARY_CMPGT || b == KILN_BINARY_NOT_EQ ||
         b == KILN_BINARY_EQ;
}
constexpr bool binary_is_commutative(unsigned b) {
  switch (b) {
    case KILN_BINARY_ADD: case KILN_BINARY_MUL: case KILN_BINARY_MAX: case KILN_BINARY_MIN:
    case KILN_BINARY_OR: case KILN_BINARY_AND: case KILN_BINARY_BIT_XOR: case KILN_BINARY_BIT_OR:
    case KILN_BINARY_BIT_AND: case KILN_BINARY_NOT_EQ: case KILN_BINARY_EQ:
      return true;
    default:
      return false;
  }
}

// ------------------------------------------------------------ op structure --

// Number of src[] operands an op kind uses (VEC_INSERT: 2, MAD/SELECT/STORE: 3...).
constexpr unsigned operand_count(unsigned kind) {
  switch (kind) {
    case KILN_OP_CONST: case KILN_OP_PARAM: case KILN_OP_STORAGE: case KILN_OP_BARRIER:
    case KILN_OP_COPY_COMMIT: case KILN_OP_COPY_WAIT: case KILN_OP_WGMMA_FENCE: case KILN_OP_WGMMA_COMMIT:
    case KILN_OP_WGMMA_WAIT:
      return 0;
    case KILN_OP_INDEX: case KILN_OP_LOOP: case KILN_OP_END_LOOP: case KILN_OP_IF:
    case KILN_OP_END_IF: case KILN_OP_UNARY: case KILN_OP_CAST: case KILN_OP_VEC_BROADCAST:
    case KILN_OP_VEC_EXTRACT: case KILN_OP_SUBGROUP_REDUCE:
      return 1;
    case KILN_OP_LOAD: case KILN_OP_BINARY: case KILN_OP_VEC_INSERT: case KILN_OP_BF16_PAIR: case KILN_OP_LOAD_MATRIX:
    case KILN_OP_PREFETCH:
      return 2;
    case KILN_OP_STORE: case KILN_OP_MAD: case KILN_OP_SELECT: case KILN_OP_MMA: case KILN_OP_DOT_BF16:
    case KILN_OP_COPY_ASYNC: case KILN_OP_WGMMA:
      return 3;
    default:
      return 0;
  }
}

// COPY_ASYNC moves exactly this many bytes (kernel_ir.h).
inline constexpr unsigned kCopyAsyncBytes = 16;
// COPY_WAIT's attr: at most this many groups left pending.
inline constexpr unsigned kMaxCopyWaitGroups = 7;

// LOAD_MATRIX (kernel_ir.h): element 2j + e of lane `lane`'s result is
// memory[row index of lane source_lane + column]; attr matrices of 8 x 8.
struct MatrixElementSource {
  unsigned source_lane;
  unsigned column;
};
constexpr MatrixElementSource load_matrix_source(bool transposed, unsigned lane, unsigned element) {
  const unsigned j = element / 2, e = element % 2, g = lane / 4, t = lane % 4;
  return transposed ? MatrixElementSource{8 * j + 2 * t + e, g} : MatrixElementSource{8 * j + g, 2 * t + e};
}

// WGMMA (kernel_ir.h): a warp group of 128 threads computes a 64 x N tile,
// N a multiple of 8 in 8..256, k 16 per op, A and B in one 128-byte-swizzled
// LOCAL storage.
inline constexpr unsigned kWgmmaGroup = 128;
inline constexpr unsigned kWgmmaM = 64, kWgmmaK = 16, kWgmmaMaxN = 256;
// WGMMA_WAIT's attr: at most this many groups left pending.
inline constexpr unsigned kMaxWgmmaWaitGroups = 7;
constexpr bool wgmma_n_allowed(unsigned n) { return n >= 8 && n <= kWgmmaMaxN && n % 8 == 0; }
// Where element e of a swizzled storage is kept: the 16-byte chunk index
// (bits 3..5 of a 16-bit element's index) XOR the row within its 8 x 128-byte
// atom (bits 6..8).
constexpr std::uint64_t wgmma_swizzle(std::uint64_t e) { return e ^ (((e >> 6) & 7u) << 3); }
// The unswizzled element index of A[m][k] (tile at a) and B[k][n] (tile at b).
constexpr std::uint64_t wgmma_a_element(std::uint64_t a, unsigned m, unsigned k) { return a + 64u * m + k; }
constexpr std::uint64_t wgmma_b_element(std::uint64_t b, unsigned k, unsigned n) {
  return b + 1024u * (n / 64) + 64u * k + n % 64;
}
// Where the tile indices are allowed: A at a row start or 16, 32, 48
// elements into it of an atom, B at an atom.
constexpr bool wgmma_a_aligned(std::uint64_t a) { return a % 512 < 64 && a % 16 == 0; }
constexpr bool wgmma_b_aligned(std::uint64_t b) { return b % 512 == 0; }
// The tf32 form (dtype F32): k 8 per op, A and B both K-major (PTX has no
// transposed tf32 operand) in the 128-byte swizzle of 4-byte elements, 32 to
// a row: the 16-byte chunk index (bits 2..4) XOR the row within its atom
// (bits 5..7). A[m][k] at tile + 32 m + k, B[k][n] at tile + 32 n + k (B
// kept as its transpose, n rows of k); either tile at a row start or 8, 16,
// 24 elements into it of an 8 x 32 atom.
inline constexpr unsigned kWgmmaKTf32 = 8;
constexpr std::uint64_t wgmma_swizzle_tf32(std::uint64_t e) { return e ^ (((e >> 5) & 7u) << 2); }
constexpr std::uint64_t wgmma_tf32_element(std::uint64_t tile, unsigned row, unsigned k) { return tile + 32u * row + k; }
constexpr bool wgmma_tf32_aligned(std::uint64_t tile) { return tile % 256 < 32 && tile % 8 == 0; }
// The tf32 form with A from registers (code 1): a thread's fragment is 4
// elements; A[row][k] (row < 64, k < 8) is element `element` of the thread
// `thread` (0..127) of the warp group: rows 16 w + g and + 8, k t and t + 4.
inline constexpr unsigned kWgmmaTf32Fragment = 4;
struct WgmmaFragmentHolder {
  unsigned thread, element;
};
constexpr WgmmaFragmentHolder wgmma_tf32_a_holder(unsigned row, unsigned k) {
  return {32 * (row / 16) + 4 * (row % 8) + k % 4, (row % 16) / 8 + 2 * (k / 4)};
}
// Whether WGMMA's code fits its dtype: 0, or 1 (A from registers) on the
// tf32 form (F32) only.
constexpr bool wgmma_code_allowed(unsigned code, unsigned dtype) { return code == 0 || (code == 1 && dtype == KILN_DTYPE_F32); }
// The REGISTER elements a thread's WGMMA of width n names in its
// accumulator's storage at the least: N / 2 accumulators, and with code 1
// A's fragment past them.
constexpr std::uint64_t wgmma_register_elements(unsigned n, unsigned code) {
  return n / 2 + (code == 1 ? kWgmmaTf32Fragment : 0);
}
// An f32 as the tf32 tensor cores read it from shared memory: its low 13
// mantissa bits dropped (truncation toward zero; kernel_ir.h, WGMMA).
inline float wgmma_tf32_truncate(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return x;  // a NaN stays a NaN
  bits &= ~0x1fffu;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}
// Element i of the accumulator fragment of thread `thread` (its index in the
// warp group, 0..127): D[row][col].
struct WgmmaCoord {
  unsigned row, col;
};
constexpr WgmmaCoord wgmma_d_coord(unsigned thread, unsigned i) {
  const unsigned w = thread / 32, lane = thread % 32, g = lane / 4, t = lane % 4;
  return {16 * w + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + i % 2};
}

// Whether the op defines a value other ops may use as an operand.
constexpr bool has_result(unsigned kind) {
  switch (kind) {
    case KILN_OP_STORE: case KILN_OP_END_LOOP: case KILN_OP_END_IF: case KILN_OP_BARRIER:
    case KILN_OP_IF: case KILN_OP_INVALID: case KILN_OP_COPY_ASYNC: case KILN_OP_COPY_COMMIT:
    case KILN_OP_COPY_WAIT: case KILN_OP_WGMMA: case KILN_OP_WGMMA_FENCE: case KILN_OP_WGMMA_COMMIT:
    case KILN_OP_WGMMA_WAIT: case KILN_OP_PREFETCH:
      return false;
    default:
      return kind < KILN_OP_KIND_COUNT;
  }
}

// Whether the op's result is a memory reference (PARAM buffer or STORAGE)
// rather than a value.
constexpr bool is_memory(const kiln_op& op) {
  return op.kind == KILN_OP_STORAGE ||
         (op.kind == KILN_OP_PARAM && op.code != KILN_PARAM_VARIABLE);
}

constexpr std::span<const std::uint32_t> operands(const kiln_op& op) {
  return {op.src, operand_count(op.kind)};
}

// The host-evaluable expressions allowed as GROUP index lengths (and the
// evaluation the host and plugins share) live in kiln/sdk/grid.hpp.

}  // namespace kiln::sdk
