// Accumulating-loop simplification: a loop whose body only folds a
// loop-invariant x into a register element,
//
//   %l = loop %n
//     %v = load %acc[%i]
//     %w = OP %v, %x            (%x, %i defined before the loop)
//     store %acc[%i], %w
//   endloop %l
//
// runs in closed form: integer ADD  -> v + x*n,  integer SUB (v - x) ->
// v - x*n (wrapping products equal wrapping repeated sums); MAX, MIN,
// AND, OR, BIT_AND, BIT_OR (idempotent, floats too for MAX/MIN) -> one
// application; BIT_XOR with a constant count -> one application when the
// count is odd, nothing when even. A float ADD is left alone (n roundings
// are not one). When the count is not a constant >= 1 the closed form sits
// in `if n > 0`, so a loop that would not run still touches nothing.
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"

namespace kiln::passes::detail {

using ir::BinaryOp;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

namespace {

struct Accumulation {
  ValueId load = ir::kNoValue;
  ValueId update = ir::kNoValue;
  ValueId invariant = ir::kNoValue;  // x
};

bool closed_form_exists(BinaryOp op, ir::DType dtype, bool load_on_left, std::optional<std::int64_t> count) {
  const bool integer = ir::is_int(dtype);
  switch (op) {
    case BinaryOp::Add: return integer;
    case BinaryOp::Sub: return integer && load_on_left;
    case BinaryOp::Max: case BinaryOp::Min:
    case BinaryOp::And: case BinaryOp::Or: case BinaryOp::BitAnd: case BinaryOp::BitOr: return true;
    case BinaryOp::BitXor: return count.has_value();
    default: return false;
  }
}

std::optional<Accumulation> match(const ir::Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
  const ValueId end = blocks.end[loop];
  if (end == ir::kNoValue || end != loop + 4) return std::nullopt;
  const ir::Op& load = kernel[loop + 1];
  const ir::Op& update = kernel[loop + 2];
  const ir::Op& store = kernel[loop + 3];
  if (load.kind != OpKind::Load || update.kind != OpKind::Binary || store.kind != OpKind::Store) return std::nullopt;
  const ValueId memory = load.src[0];
  if (memory >= loop || kernel[memory].kind != OpKind::Storage || kernel[memory].scope() != ir::Scope::Register)
    return std::nullopt;
  if (store.src[0] != memory || store.src[1] != load.src[1] || load.src[1] >= loop || store.src[2] != loop + 2)
    return std::nullopt;
  const bool load_on_left = update.src[0] == loop + 1;
  const ValueId x = load_on_left ? update.src[1] : update.src[0];
  if ((load_on_left ? update.src[0] : update.src[1]) != loop + 1 || x >= loop) return std::nullopt;
  const auto count = ir::constant_int(kernel, kernel[loop].src[0]);
  if (!closed_form_exists(update.binary(), update.dtype, load_on_left, count)) return std::nullopt;
  return Accumulation{loop + 1, loop + 2, x};
}

}  // namespace

Kernel simplify_accumulating_loops(const Kernel& kernel, const DeviceInfo&) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    if (kernel[id].kind != OpKind::Loop) return false;
    const auto found = match(kernel, blocks, id);
    if (!found) return false;
    const ir::Op& load = kernel[found->load];
    const ir::Op& update = kernel[found->update];
    const auto count = ir::constant_int(kernel, kernel[id].src[0]);
    if (count && *count < 1) return false;  // remove_empty_ranges drops it
    if (update.binary() == BinaryOp::BitXor && *count % 2 == 0) {  // x ^ x = 0: no effect
      for (ValueId dead = id; dead <= blocks.end[id]; ++dead) rw.drop(dead);
      return true;
    }
    ir::Builder& b = rw.out();
    const Value n = rw.map(kernel[id].src[0]);
    ValueId guard = ir::kNoValue;
    if (!count) {
      const Value zero = b.constant_i64(0);
      guard = b.if_(b.cmpgt(n, zero));
    }
    const Value memory = rw.map(load.src[0]);
    const Value index = rw.map(load.src[1]);
    const Value v = b.load(memory, index, load.lanes);
    const Value x = rw.map(found->invariant);
    Value result;
    if (update.binary() == BinaryOp::Add || update.binary() == BinaryOp::Sub) {
      Value times = update.dtype == ir::DType::I64 ? n : b.cast(update.dtype, n);
      if (update.lanes != 1) times = b.broadcast(times, update.lanes);
      const Value total = b.mul(x, times);
      result = b.binary(update.binary(), v, total);
    } else {
      result = update.src[0] == found->load ? b.binary(update.binary(), v, x) : b.binary(update.binary(), x, v);
    }
    b.store(memory, index, result);
    if (guard != ir::kNoValue) b.end_if(guard);
    for (ValueId dead = id; dead <= blocks.end[id]; ++dead) rw.drop(dead);
    return true;
  });
}

}  // namespace kiln::passes::detail
