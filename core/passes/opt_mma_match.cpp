// The matcher shared by mma_tile and mma_staged (opt_mma_match.hpp).
#include "opt_mma_match.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "opt_support.hpp"

#include <kiln/sdk/wire.hpp>

#include <utility>

namespace kiln::passes::opts::mma {

namespace {

using ir::DType;
using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

std::optional<Affine2> affine2(const Kernel& kernel, ValueId id, ValueId atom0, ValueId atom1) {
  const auto form = ir::affine_form(kernel, id);
  if (!form) return std::nullopt;
  Affine2 out;
  out.constant = form->constant;
  for (const auto& [atom, coefficient] : form->terms) {
    if (atom == atom0) out.c0 = coefficient;
    else if (atom == atom1) out.c1 = coefficient;
    else return std::nullopt;
  }
  return out;
}

std::string describe(const Kernel& kernel, ValueId id) { return "`" + ir::print_op(kernel, id) + "` (op " + std::to_string(id) + ")"; }

ValueId through_f32_cast(const Kernel& kernel, ValueId id) {
  return kernel[id].kind == OpKind::Cast && kernel[id].dtype == DType::F32 && kernel[id].lanes == 1 ? kernel[id].src[0] : id;
}

bool loads_from(const Kernel& kernel, ValueId id, ValueId memory) {
  return kernel[id].kind == OpKind::Load && kernel[id].src[0] == memory && kernel[id].lanes == 1;
}

// The kernel as a Product, or why it is not one.
}  // namespace

std::variant<Product, std::string> match(const Kernel& kernel) {
  auto matched = tile::match_matrix_product(kernel);
  if (std::holds_alternative<std::string>(matched)) return "not a matrix product: " + std::get<std::string>(matched);
  Product p;
  p.mp = std::get<tile::MatrixProduct>(std::move(matched));
  const tile::MatrixProduct& mp = p.mp;
  if (mp.staged.size() != 2 || mp.staged[0].side == mp.staged[1].side)
    return "the product loads " + std::to_string(mp.staged.size()) + " operands; mma_tile takes one A and one B";
  const ValueId a_load = mp.staged[0].side == 0 ? mp.staged[0].load : mp.staged[1].load;
  const ValueId b_load = mp.staged[0].side == 0 ? mp.staged[1].load : mp.staged[0].load;
  p.a_param = kernel[a_load].src[0];
  p.b_param = kernel[b_load].src[0];
  p.input = kernel[a_load].dtype;
  if (kernel[b_load].dtype != p.input) return "A and B have different dtypes";
  if (p.input != DType::F32 && p.input != DType::F16 && p.input != DType::BF16)
    return "A and B are " + std::string(ir::dtype_name(p.input)) + " (mma takes f16, bf16, or f32 as tf32)";
  const auto a = affine2(kernel, kernel[a_load].src[1], mp.indices[0], mp.loop);
  const auto b = affine2(kernel, kernel[b_load].src[1], mp.loop, mp.indices[1]);
  if (!a) return "the index of " + describe(kernel, a_load) + " is not affine in the row and k";
  if (!b) return "the index of " + describe(kernel, b_load) + " is not affine in k and the column";
  p.a = *a;
  p.b = *b;

  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  const ValueId loop = mp.loop, loop_end = blocks.end[loop];
  for (std::uint32_t axis = 0; axis < 3; ++axis)
    if (axis != mp.axes[0] && axis != mp.axes[1])
      if (const auto other = find_index(kernel, ir::Scope::Group, axis))
        if (ir::constant_int(kernel, kernel[*other].src[0]).value_or(0) != 1)
          return "the kernel uses a third GROUP axis (" + describe(kernel, *other) + ")";
  // Every store: the accumulator's initial zero, its update in the loop, C.
  ValueId acc = ir::kNoValue, init = ir::kNoValue, update = ir::kNoValue, out = ir::kNoValue;
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if ((op.kind == OpKind::Loop && id != loop) || op.kind == OpKind::If)
      return "the kernel has a block besides the k loop (" + describe(kernel, id) + ")";
    if (op.kind == OpKind::Load && kernel[op.src[0]].kind == OpKind::Param && id != a_load && id != b_load)
      return describe(kernel, id) + " reads memory other than A and B";
    if (op.kind == OpKind::Mma) return "the kernel already uses MMA";
    if (op.kind != OpKind::Store) continue;
    if (op.lanes != 1) return describe(kernel, id) + " is a vector store";
    const ir::Op& memory = kernel[op.src[0]];
    const bool inside = id > loop && id < loop_end;
    if (memory.kind == OpKind::Storage && memory.scope() == ir::Scope::Register && memory.imm == 1 &&
        memory.dtype == DType::F32 && (acc == ir::kNoValue || acc == op.src[0])) {
      acc = op.src[0];
      ValueId& slot = inside ? update : init;
      if (slot != ir::kNoValue || (!inside && id > loop)) return "the accumulator is written more than once";
      slot = id;
    } else if (memory.kind == OpKind::Param && memory.param_kind() == ir::ParamKind::GlobalMut && !inside && id > loop &&
               out == ir::kNoValue) {
      out = id;
    } else {
      return describe(kernel, id) + " is not the accumulator's or C's store";
    }
  }
  if (init == ir::kNoValue || update == ir::kNoValue || out == ir::kNoValue)
    return "no f32 accumulator zeroed before the k loop, updated in it and stored to C after it";
  if (ir::constant_double(kernel, kernel[init].src[2]).value_or(1) != 0) return "the accumulator does not start at 0";
  // The update: acc + x * y (either order), or mad(x, y, acc), x from A, y from B (cast to f32).
  const ir::Op& sum = kernel[kernel[update].src[2]];
  ValueId x = ir::kNoValue, y = ir::kNoValue, current = ir::kNoValue;
  if (sum.kind == OpKind::Mad && sum.dtype == DType::F32) {
    x = sum.src[0], y = sum.src[1], current = sum.src[2];
  } else if (sum.kind == OpKind::Binary && sum.binary() == ir::BinaryOp::Add && sum.dtype == DType::F32) {
    for (int side = 0; side < 2; ++side) {
      const ir::Op& product = kernel[sum.src[1 - side]];
      if (loads_from(kernel, sum.src[side], acc) && product.kind == OpKind::Binary && product.binary() == ir::BinaryOp::Mul) {
        current = sum.src[side], x = product.src[0], y = product.src[1];
        break;
      }
    }
  }
  if (current == ir::kNoValue || !loads_from(kernel, current, acc) || current < loop)
    return "the loop's accumulator update " + describe(kernel, update) + " is not acc + a * b";
  x = through_f32_cast(kernel, x);
  y = through_f32_cast(kernel, y);
  if (x == b_load && y == a_load) std::swap(x, y);
  if (x != a_load || y != b_load) return "the loop accumulates something other than A * B (" + describe(kernel, update) + ")";
  // C = acc (cast to C's dtype).
  const ir::Op& c_param = kernel[kernel[out].src[0]];
  ValueId value = kernel[out].src[2];
  if (c_param.dtype != DType::F32) {
    if (kernel[value].kind != OpKind::Cast) return "C is not the accumulator cast to C's dtype";
    value = kernel[value].src[0];
  }
  if (!loads_from(kernel, value, acc) || value < loop_end) return "C is not the accumulator's final value";
  const auto c = affine2(kernel, kernel[out].src[1], mp.indices[0], mp.indices[1]);
  if (!c) return "the index of " + describe(kernel, out) + " is not affine in the row and the column";
  p.c = *c;
  p.c_param = kernel[out].src[0];
  return p;
}

unsigned shape_code(const Product& p) { return p.input == DType::F32 ? KILN_MMA_M16N8K8 : KILN_MMA_M16N8K16; }


std::string device_misfit(const Product& p, const DeviceInfo& device) {
  const unsigned shape = shape_code(p), input = static_cast<unsigned>(p.input);
  if (!device.supports_op_kind(KILN_OP_MMA, KILN_DTYPE_F32) || !device.has_feature(sdk::mma_feature(shape, input)))
    return "the device does not run mma " + std::string(sdk::mma_shape_name(shape)) + " " +
           std::string(sdk::mma_input_name(shape, input));
  const sdk::MmaShapeInfo info = sdk::mma_shape_info(shape);
  for (unsigned lanes : {info.a_lanes, info.b_lanes, info.c_lanes})
    if ((device.vector_width_mask & (1u << lanes)) == 0)
      return "the device has no " + std::to_string(lanes) + "-lane vectors (the fragments)";
  return "";
}

ir::Value c_element(ir::Builder& b, ir::DType c_dtype, ir::Value value) {
  return c_dtype == ir::DType::F32 ? value : b.cast(c_dtype, value);
}

void store_c_element(ir::Builder& b, ir::Value c_mem, ir::Value index, ir::Value value, ir::Value row_in,
                     ir::Value col_in) {
  const ir::Value inside = row_in.valid() && col_in.valid() ? b.and_(row_in, col_in) : (row_in.valid() ? row_in : col_in);
  if (inside.valid()) b.if_then(inside, [&] { b.store(c_mem, index, value); });
  else b.store(c_mem, index, value);
}

}  // namespace kiln::passes::opts::mma
