// add (c = a + b), add-dyn (the same with n a VARIABLE param) and exp-chain
// (y = exp(x) * 2 + 1): one thread per element on group axis 0, computed in
// the dtype itself.
//
// Builder calls are sequenced one per statement throughout core/kernels: C++
// leaves the order of nested argument evaluation open, and the op order (so
// the printed kernel and its hash) must not depend on the compiler.
#include "kernel_writer.hpp"

#include "kiln/ir/dtype.hpp"

#include <cmath>

namespace kiln::kernels::detail {

using ir::DType;
using ir::Value;

namespace {

StandardKernel add_kernel(const KernelSize& size, DType dtype, bool dynamic) {
  const auto n = static_cast<std::uint64_t>(size.n);
  const std::uint64_t known = dynamic ? 0 : n;  // dynamic buffers have no static length
  KernelWriter w(dtype, dtype);
  auto& b = w.b();
  const Value a = w.input(known);
  const Value bb = w.input(known);
  const Value c = w.output(known);
  const Value length = dynamic ? b.param(ir::ParamKind::Variable, DType::I64) : w.i64(size.n);
  const Value i = b.group_index(0, length);
  const Value x = b.load(a, i);
  const Value y = b.load(bb, i);
  b.store(c, i, b.add(x, y));

  StandardKernel k;
  k.kernel = b.finish();
  k.args = {input_arg("a", dtype, n, input_low(dtype), input_high(dtype)),
            input_arg("b", dtype, n, input_low(dtype), input_high(dtype)), output_arg("c", dtype, n)};
  if (dynamic)
    k.args.push_back(ArgSpec{"n", ArgRole::Scalar, DType::I64, 1, ir::encode_int(DType::I64, size.n), 0, 0});
  k.flops = static_cast<double>(n);
  k.bytes = 3.0 * static_cast<double>(n) * ir::dtype_bytes(dtype);
  k.reference = [n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    for (std::size_t i = 0; i < n; ++i) out[0].set(i, in[0].get(i) + in[1].get(i));
  };
  return k;
}

}  // namespace

StandardKernel make_add(const KernelSize& size, DType dtype) { return add_kernel(size, dtype, false); }
StandardKernel make_add_dyn(const KernelSize& size, DType dtype) { return add_kernel(size, dtype, true); }

StandardKernel make_exp_chain(const KernelSize& size, DType dtype) {
  const auto n = static_cast<std::uint64_t>(size.n);
  KernelWriter w(dtype, dtype);
  auto& b = w.b();
  const Value x = w.input(n);
  const Value y = w.output(n);
  const Value i = b.group_index(0, size.n);
  const Value e = b.exp(b.load(x, i));
  const Value two = w.number(2);
  const Value doubled = b.mul(e, two);
  const Value one = w.number(1);
  b.store(y, i, b.add(doubled, one));

  StandardKernel k;
  k.kernel = b.finish();
  k.args = {input_arg("x", dtype, n), output_arg("y", dtype, n)};
  k.flops = 3.0 * static_cast<double>(n);
  k.bytes = 2.0 * static_cast<double>(n) * ir::dtype_bytes(dtype);
  k.reference = [n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    for (std::size_t i = 0; i < n; ++i) out[0].set(i, std::exp(in[0].get(i)) * 2 + 1);
  };
  return k;
}

}  // namespace kiln::kernels::detail
