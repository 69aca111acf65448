// Recognising matrix products in wire kernels, semantically:
//
//   every integer value is tracked as an affine function of the GROUP indices
//   and the (single) LOOP counter p, with constant coefficients;
//   a 1-element REGISTER accumulator is set to 0 before the loop, updated in
//   the loop by acc + x*y (ADD of a MUL, either operand order, or MAD), where
//   x and y are LOADs of two GLOBAL buffers;
//   after the loop one STORE writes acc, or acc * alpha (alpha a CONST or a
//   VARIABLE param, either side), into the GLOBAL_MUT buffer.
//
// From the coefficients follow the roles: C's unit-stride group axis is j
// (columns), its other one i (rows); the operand indexed by i is A, the one
// by j is B; each operand's unit stride (on p or on i/j) says whether it is
// transposed, the other coefficient is its leading dimension. Op order, which
// side of a MUL/ADD/MAD a value is on, and how the indices were written do
// not matter. Anything else throws PluginError(UNSUPPORTED) naming the first
// op that does not fit.
#pragma once

#include <kiln/plugin.h>
#include <kiln/sdk/launch_args.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::cblas {

// An affine index: constant + sum of coefficient * symbol, symbols being the
// group axes 0..2 and the loop counter (3).
struct Affine {
  static constexpr int kLoop = 3;
  std::int64_t constant = 0;
  std::array<std::int64_t, 4> coefficient{};

  bool is_constant() const { return coefficient == std::array<std::int64_t, 4>{}; }
};

// One matrix operand of the product.
struct Operand {
  std::uint32_t slot = 0;     // PARAM slot of its buffer
  Affine index;               // of its LOAD or STORE
  bool transposed = false;    // A: stored [K][M]; B: stored [N][K]
  std::int64_t ld = 0;        // leading dimension (0: follows from the sizes)
  // Unit stride on both of its dimensions (A[i + p]): a valid layout only
  // when one dimension has extent 1, and either transposition may be the one.
  bool ambiguous = false;
};

struct GemmPlan {
  unsigned dtype = 0;             // KILN_DTYPE_F32 or F64
  Operand a, b, c;
  int row_axis = -1, col_axis = -1;  // group axes of i and j (-1: extent 1)
  std::uint32_t k_op = 0;            // the LOOP's trip count op (host-evaluable)
  enum class Alpha { One, Constant, Variable } alpha_kind = Alpha::One;
  double alpha = 1.0;                // Constant
  std::uint32_t alpha_slot = 0;      // Variable
  std::vector<sdk::ParamSlot> params;  // by slot
  std::vector<kiln_op> ops;          // the kernel, to evaluate K at launch
  std::uint32_t store_op = 0;        // the output STORE
};

struct GemmDims {
  std::int64_t m = 1, n = 1, k = 0;
};

struct LeadingDims {
  std::int64_t lda = 1, ldb = 1, ldc = 1;
};

// Throws PluginError(UNSUPPORTED) with failed_op when the kernel is not a
// matrix product this plugin can run (also when its fixed sizes give a
// layout BLAS cannot express, e.g. overlapping rows).
GemmPlan match_gemm(std::span<const kiln_op> ops);

// The sizes, when the kernel fixes them (CONST group lengths and trip count).
std::optional<GemmDims> static_dims(const GemmPlan& plan);

// The leading dimensions at these sizes (an operand's 0 means the natural one).
LeadingDims leading_dims(const Operand& a, const Operand& b, const Operand& c, const GemmDims& dims);

// Settles ambiguous operands for these sizes. Returns "" when BLAS can run the
// product (leading dimensions at least the rows they skip), else the reason.
std::string settle_layout(Operand& a, Operand& b, const Operand& c, const GemmDims& dims);

// The call a plan makes, as text (program_source, language "blas-call").
std::string describe_call(const GemmPlan& plan);

}  // namespace kiln::cblas
