// Recognizes what local_tile applies to: a matrix-product-like kernel, i.e.
// a top-level LOOP (the reduction over k) with a straight-line body that
// loads from read-only buffers at indices depending on the loop counter and
// on exactly one of two GROUP axes each (matmul: a[i, k] on axis m = i,
// b[k, j] on axis n = j; n is the lower-numbered axis, m the higher), with
// at least one such load along each axis.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::passes::opts::tile {

// A load staged through LOCAL storage.
struct StagedLoad {
  ir::ValueId load = ir::kNoValue;
  unsigned side = 0;           // 0: varies along axis m (an "a" operand), 1: along n ("b")
  bool k_fastest = false;      // consecutive k are consecutive in memory (else the axis is)
};

struct MatrixProduct {
  ir::ValueId loop = ir::kNoValue;
  std::int64_t trip_count = 0;                    // K
  std::array<std::uint32_t, 2> axes{};            // GROUP axis numbers of m and n (n < m)
  std::array<ir::ValueId, 2> indices{};           // their INDEX ops
  std::array<std::int64_t, 2> lengths{};          // M, N
  std::vector<StagedLoad> staged;
  std::vector<std::uint8_t> deps;                 // per op: bit 0 m, bit 1 n, bit 2 the loop counter
};

// The first LOOP that makes the kernel a matrix product, or why none does.
std::variant<MatrixProduct, std::string> match_matrix_product(const ir::Kernel& kernel);

}  // namespace kiln::passes::opts::tile
