// Internal: records of the same kernel at other shapes (the same structure,
// lengths aside) on the same device and search space. Their winners seed a
// new shape's tuning: measured right after the heuristic choice, so that a
// short budget starts from what won nearby (docs/autotune.md, "Nearby
// shapes").
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"
#include "kiln/tune/tuning_db.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tune::detail {

// ir::hash of the kernel with its lengths aside: every PARAM's and
// STORAGE's element count and every integer CONST read as 0. Kernels that
// differ only in their shape share it.
std::uint64_t structure_hash(const ir::Kernel& kernel);

// The winning sequences (not empty, distinct) of the records in `db` for
// `key`'s device and search space whose kernel has `kernel`'s structure
// and another hash, nearest in total PARAM elements first; at most `limit`.
// Records whose kernel text does not parse are passed over.
Result<std::vector<std::string>> nearby_winners(const TuningDb& db, const TuningKey& key, const ir::Kernel& kernel,
                                                std::size_t limit);

}  // namespace kiln::tune::detail
