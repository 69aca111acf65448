// Constant evaluation by running the reference interpreter on a one-op
// kernel: the folded value is, by construction, the one the oracle computes
// (libm calls, f16/bf16 rounding, integer wrapping, float -> int saturation),
// and no second implementation of the op semantics can drift from it.
// Integer expressions take the cheaper exact path of ir::constant_int.
#include "constant_eval.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"

#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <array>
#include <cstring>

namespace kiln::passes::detail {

namespace {

bool foldable_kind(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::Unary: case ir::OpKind::Binary: case ir::OpKind::Cast: case ir::OpKind::Mad:
    case ir::OpKind::Select:
      return true;
    default:
      return false;
  }
}

bool integral(ir::DType dtype) { return ir::is_int(dtype) || dtype == ir::DType::Bool; }

}  // namespace

std::optional<std::uint64_t> evaluate_constant_op(const ir::Op& op, std::span<const ir::Op> operands) {
  if (!foldable_kind(op.kind) || op.lanes != 1 || operands.size() != op.operand_count()) return std::nullopt;
  bool all_integral = integral(op.dtype);
  for (const ir::Op& operand : operands) {
    if (operand.kind != ir::OpKind::Const || operand.lanes != 1) return std::nullopt;
    all_integral = all_integral && integral(operand.dtype);
  }

  // %0.. = the operands, then the op itself.
  ir::Kernel scratch;
  for (const ir::Op& operand : operands) scratch.ops.push_back(operand);
  ir::Op folded = op;
  for (std::size_t i = 0; i < operands.size(); ++i) folded.src[i] = static_cast<ir::ValueId>(i);
  const auto result = static_cast<ir::ValueId>(scratch.size());
  scratch.ops.push_back(folded);

  if (all_integral && op.kind != ir::OpKind::Mad && op.kind != ir::OpKind::Select) {
    const auto value = ir::constant_int(scratch, result);
    if (!value) return std::nullopt;
    return ir::encode_int(op.dtype, *value);
  }

  // out[0] = op, run on one thread.
  ir::Builder b(std::move(scratch));
  const ir::Value out = b.param(ir::ParamKind::GlobalMut, op.dtype, 1);
  b.store(out, b.constant_i64(0), ir::Value{result});
  const ir::Kernel kernel = b.finish();
  const std::vector<kiln_op> wire = kernel.to_wire();
  std::array<std::byte, 8> bytes{};
  const kiln_arg args[] = {sdk::host_buffer_arg(bytes.data(), ir::dtype_bytes(op.dtype))};
  try {
    const sdk::InterpretedProgram program(wire);
    program.run(args);
  } catch (const sdk::PluginError&) {
    return std::nullopt;  // a fault (e.g. division by zero) stays in the kernel, where it belongs
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), ir::dtype_bytes(op.dtype));  // little-endian hosts only, as the SDK
  if (op.dtype == ir::DType::Bool) bits &= 1;
  return bits;
}

}  // namespace kiln::passes::detail
