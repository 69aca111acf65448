// The interpreter's MMA (kernel_ir.h, KILN_OP_MMA): one warp's tile product,
// exactly as the contract writes it. The fragments are gathered into whole
// A, B, C tiles by the lane layout (sdk/wire.hpp, mma_*_coord), D is summed
// in f32 with k ascending, each product and sum rounded (two statements: the
// SDK builds without FP contraction, so nothing fuses), and scattered back.
#include <bit>

#include "interpreter_program.hpp"

namespace kiln::sdk::interp {

namespace {

// f32 -> tf32 (10 mantissa bits) to nearest, ties away from zero, as PTX
// cvt.rna.tf32.f32; the result is an f32 with the low 13 bits clear.
float round_to_tf32(float x) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>(0x7fffffffu);  // NaN stays NaN
  bits = (bits + 0x1000u) & ~0x1fffu;  // half an ulp onto the magnitude, then truncate
  return std::bit_cast<float>(bits);
}

}  // namespace

void mma_warp(unsigned shape, unsigned input, const MmaRows& rows, std::size_t first) {
  const MmaShapeInfo info = mma_shape_info(shape);
  const bool tf32 = input == KILN_DTYPE_F32;
  float a[16][16], b[16][8], c[16][8];
  for (unsigned lane = 0; lane < kMmaWarp; ++lane) {
    const std::size_t l = first + lane;
    for (unsigned i = 0; i < info.a_lanes; ++i) {
      const MmaCoord at = mma_a_coord(shape, lane, i);
      const float v = as_f32(rows.a[i][l]);
      a[at.row][at.col] = tf32 ? round_to_tf32(v) : v;
    }
    for (unsigned i = 0; i < info.b_lanes; ++i) {
      const MmaCoord at = mma_b_coord(shape, lane, i);
      const float v = as_f32(rows.b[i][l]);
      b[at.row][at.col] = tf32 ? round_to_tf32(v) : v;
    }
    for (unsigned i = 0; i < info.c_lanes; ++i) {
      const MmaCoord at = mma_c_coord(lane, i);
      c[at.row][at.col] = as_f32(rows.c[i][l]);
    }
  }
  float d[16][8];
  for (unsigned m = 0; m < info.m; ++m)
    for (unsigned n = 0; n < info.n; ++n) {
      float sum = c[m][n];
      for (unsigned k = 0; k < info.k; ++k) {
        const float product = a[m][k] * b[k][n];
        sum = sum + product;
      }
      d[m][n] = sum;
    }
  for (unsigned lane = 0; lane < kMmaWarp; ++lane)
    for (unsigned i = 0; i < info.c_lanes; ++i) {
      const MmaCoord at = mma_c_coord(lane, i);
      rows.d[i][first + lane] = from_f32(d[at.row][at.col]);
    }
}

}  // namespace kiln::sdk::interp
