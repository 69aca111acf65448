// The matrix products the MMA optimizations (mma_tile, mma_staged) rewrite:
// C[i, j] = (cast) sum_k A[i, k] * B[k, j] accumulated in f32 from one
// 1-element REGISTER accumulator, A and B f16, bf16 or f32, indices affine
// in (i, k), (k, j), (i, j). Shared so both accept the same kernels.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/kernel.hpp"
#include "kiln/runtime/device_info.hpp"
#include "opt_local_tile_match.hpp"

#include <cstdint>
#include <string>
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

}  // namespace kiln::passes::opts::mma
