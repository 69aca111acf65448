// The matrix products the MMA optimizations (mma_tile, mma_staged) rewrite:
// C[i, j] = (cast) sum_k A[i, k] * B[k, j] accumulated in f32 from one
// 1-element REGISTER accumulator, A and B f16, bf16 or f32, indices affine
// in (i, k), (k, j), (i, j). Shared so both accept the same kernels.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/kernel.hpp"
#include "kiln/runtime/device_info.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/passes/optimization.hpp"
#include "opt_local_tile_match.hpp"
#include "opt_support.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace kiln::passes::opts::mma {

// index = c0 * atom0 + c1 * atom1 + constant.
struct Affine2 {
  std::int64_t c0 = 0, c1 = 0, constant = 0;
};

// What the MMA optimizations rebuild the kernel from.
struct Product {
  tile::MatrixProduct mp;
  ir::ValueId a_param = ir::kNoValue, b_param = ir::kNoValue, c_param = ir::kNoValue;
  ir::DType input = ir::DType::Invalid;  // A's and B's dtype
  Affine2 a, b, c;                       // A: (i, k), B: (k, j), C: (i, j)
};

// The kernel as a Product, or why it is not one.
std::variant<Product, std::string> match(const ir::Kernel& kernel);

// The MMA shape of the product's inputs (kiln_mma_shape).
unsigned shape_code(const Product& p);

// Why the device cannot run the product's MMA (shape and input dtype
// claimed, fragment vector widths), or "".
std::string device_misfit(const Product& p, const DeviceInfo& device);

// `value`, an f32 element of D, in C's dtype (cast when narrower).
ir::Value c_element(ir::Builder& b, ir::DType c_dtype, ir::Value value);
// Stores `value` at `index` of C under `row_in && col_in` where either is
// given (an invalid Value: that side needs no guard). Both MMA rewrites end so.
void store_c_element(ir::Builder& b, ir::Value c_mem, ir::Value index, ir::Value value, ir::Value row_in,
                     ir::Value col_in);

// The apply() of an optimization that rebuilds a matched product (mma_tile,
// mma_staged, pack_tile): `kernel` verified, matched, `misfit(product)`
// empty, then `emit(product)` verified; each failure a step_error, the last
// one naming `what` ("the packed kernel").
template <class Misfit, class Emit>
Result<ir::Kernel> rewrite_product(const ir::Kernel& kernel, const OptStep& step, std::string_view what,
                                   Misfit misfit, Emit emit) {
  if (Result<void> valid = ir::verify(kernel); !valid.ok())
    return step_error(step, "the kernel does not verify: " + valid.error().message);
  auto matched = match(kernel);
  if (std::holds_alternative<std::string>(matched)) return step_error(step, std::get<std::string>(matched));
  const Product& p = std::get<Product>(matched);
  if (const std::string why = misfit(p); !why.empty()) return step_error(step, why);
  ir::Kernel out = emit(p);
  if (Result<void> valid = ir::verify(out); !valid.ok())
    return step_error(step, "internal error: " + std::string(what) + " does not verify: " + valid.error().message);
  return out;
}

}  // namespace kiln::passes::opts::mma
