// The verifier's shared state, internal to core/ir: verify.cpp walks the
// kernel and checks structure and operands; verify_ops.cpp checks the rules
// of each op kind.
#pragma once

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"

#include <kiln/sdk/wire.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir::verify_detail {

using sdk::kMaxCopyWaitGroups;  // kernel_ir.h, COPY_WAIT: attr N in 0..7

class Verifier {
 public:
  explicit Verifier(const Kernel& kernel);
  std::vector<Error> run();

  // Per-kind rules (verify_ops.cpp); false after reporting a violation.
  bool check_op(ValueId id);

 private:
  bool check_fields(ValueId id);
  bool check_operands(ValueId id);
  bool check_nesting(ValueId id);
  void check_param_slots();
  void check_unclosed_blocks();

  bool check_const(ValueId id, const Op& op);
  bool check_param(ValueId id, const Op& op);
  bool check_storage(ValueId id, const Op& op);
  bool check_memory_access(ValueId id, const Op& op);
  bool check_index(ValueId id, const Op& op);
  bool check_barrier(ValueId id, const Op& op);
  bool check_unary(ValueId id, const Op& op);
  bool check_binary(ValueId id, const Op& op);
  bool check_vector(ValueId id, const Op& op);
  bool check_mma(ValueId id, const Op& op);  // verify_mma.cpp
  bool check_subgroup_reduce(ValueId id, const Op& op);  // verify_subgroup.cpp
  bool check_bf16_dot(ValueId id, const Op& op);  // verify_bf16_dot.cpp
  bool check_copy_async(ValueId id, const Op& op);       // verify_copy_async.cpp
  bool check_load_matrix(ValueId id, const Op& op);      // verify_mma.cpp
  bool check_wgmma(ValueId id, const Op& op);            // verify_wgmma.cpp
  bool check_wgmma_collective(ValueId id, const std::string& name);  // verify_wgmma.cpp
  bool check_warp_collective(ValueId id, const std::string& name);  // verify_mma.cpp
  bool check_alignment_and_range(ValueId id, const Op& op, const Op& memory);

  // Records a violation of `rule` at op `id`; returns false for chaining.
  bool fail(ValueId id, std::string_view rule, const std::string& what);
  ValueType type(ValueId id) const { return {kernel_[id].dtype, kernel_[id].lanes}; }
  bool is_i64_scalar(ValueId id) const { return type(id) == ValueType{DType::I64, 1}; }

  const Kernel& kernel_;
  Blocks blocks_;
  AffineForms affine_forms_;  // every access's index, subexpressions decomposed once
  std::vector<bool> varying_;
  std::vector<bool> warp_varying_;  // computed at the first MMA
  bool has_local_index_ = false;
  std::map<std::pair<std::uint8_t, std::uint32_t>, ValueId> indices_;  // (scope, axis) -> first INDEX
  std::vector<Error> errors_;
};

}  // namespace kiln::ir::verify_detail
