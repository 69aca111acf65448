#include "nearby_records.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::tune::detail {

namespace {

double total_param_elements(const ir::Kernel& kernel) {
  double total = 0;
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Param) total += static_cast<double>(op.imm);
  return std::max(total, 1.0);
}

}  // namespace

std::uint64_t structure_hash(const ir::Kernel& kernel) {
  ir::Kernel shape_free = kernel;
  for (ir::Op& op : shape_free.ops) {
    const bool length = op.kind == ir::OpKind::Param || op.kind == ir::OpKind::Storage ||
                        (op.kind == ir::OpKind::Const && !ir::is_float(op.dtype));
    if (length) op.imm = 0;
  }
  return ir::hash(shape_free);
}

Result<std::vector<std::string>> nearby_winners(const TuningDb& db, const TuningKey& key, const ir::Kernel& kernel,
                                                std::size_t limit) {
  KILN_TRY_ASSIGN(const std::vector<TuningEntry> entries, db.list(/*with_candidates=*/false));
  const std::uint64_t structure = structure_hash(kernel);
  const double elements = total_param_elements(kernel);
  std::vector<std::pair<double, const TuningEntry*>> near;
  for (const TuningEntry& e : entries) {
    if (e.key.device_fingerprint != key.device_fingerprint || e.key.space_version != key.space_version ||
        e.key.kernel_hash == key.kernel_hash || e.sequence.empty())
      continue;
    Result<ir::Kernel> other = ir::parse(e.kernel_text);
    if (!other || structure_hash(*other) != structure) continue;
    near.emplace_back(std::abs(std::log(total_param_elements(*other) / elements)), &e);
  }
  // Nearest first; equal distances by id (the older record first), so the order is fixed.
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->id < b.second->id;
  });
  std::vector<std::string> winners;
  for (const auto& [distance, e] : near) {
    if (winners.size() >= limit) break;
    if (std::find(winners.begin(), winners.end(), e->sequence) == winners.end()) winners.push_back(e->sequence);
  }
  return winners;
}

}  // namespace kiln::tune::detail
