// Fused multiply-add (finalize): ADD(MUL(a, b), c) -> MAD(a, b, c) on floats
// when the MUL has no other use and sits in the same block as the ADD
// (fusing across a loop boundary would move the multiply into the loop).
// MAD may round once or twice (kernel_ir.h); the interpreter rounds twice,
// so results on it are unchanged, and a device that fuses differs within an
// ulp. Integers are left alone: an integer MAD is exact either way and
// devices fuse it themselves, while index arithmetic kept as ADD/MUL stays
// in the affine shape analyses read (ir::affine_form: the cost model's
// coalescing, the verifier's range and alignment proofs).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"

namespace kiln::passes::detail {

using ir::ValueId;

Kernel fuse_multiply_add(const Kernel& kernel, const DeviceInfo&) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  const std::vector<std::uint32_t> uses = ir::use_counts(kernel);
  auto fusable_mul = [&](ValueId add, ValueId v) {
    if (v >= kernel.size()) return false;
    const ir::Op& op = kernel[v];
    return op.kind == ir::OpKind::Binary && op.binary() == ir::BinaryOp::Mul && uses[v] == 1 &&
           blocks.parent[v] == blocks.parent[add] && ir::is_float(op.dtype);
  };
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Binary || op.binary() != ir::BinaryOp::Add) return false;
    for (int side = 0; side < 2; ++side) {
      const ValueId mul = op.src[side];
      if (!fusable_mul(id, mul)) continue;
      const ir::Value a = rw.map(kernel[mul].src[0]);
      const ir::Value b = rw.map(kernel[mul].src[1]);
      const ir::Value c = rw.map(op.src[1 - side]);
      if (!a.valid() || !b.valid() || !c.valid()) return false;
      rw.replace(id, rw.out().mad(a, b, c));
      return true;
    }
    return false;
  });
}

}  // namespace kiln::passes::detail
