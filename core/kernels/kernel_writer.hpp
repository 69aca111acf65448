// Shared by the standard kernel builders (internal to core/kernels): a
// Builder that knows the storage dtype of a kernel's buffers and the dtype
// it computes in, and the pieces every kernel description repeats.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/kernels/library.hpp"

#include <string>
#include <vector>

namespace kiln::kernels::detail {

class KernelWriter {
 public:
  KernelWriter(ir::DType storage, ir::DType compute) : storage_(storage), compute_(compute) {}

  ir::Builder& b() { return b_; }
  ir::DType compute() const { return compute_; }

  // Buffer params of the storage dtype, slots in call order.
  ir::Value input(std::uint64_t elements) { return b_.param(ir::ParamKind::Global, storage_, elements); }
  ir::Value output(std::uint64_t elements) { return b_.param(ir::ParamKind::GlobalMut, storage_, elements); }

  // Loads as the compute dtype / stores from it, casting when they differ.
  ir::Value read(ir::Value memory, ir::Value index) {
    const ir::Value v = b_.load(memory, index);
    return compute_ == storage_ ? v : b_.cast(compute_, v);
  }
  void write(ir::Value memory, ir::Value index, ir::Value value) {
    b_.store(memory, index, compute_ == storage_ ? value : b_.cast(storage_, value));
  }

  ir::Value number(double value) { return b_.constant(compute_, value); }
  ir::Value i64(std::int64_t value) { return b_.constant_i64(value); }

  // A one-element REGISTER accumulator of the compute dtype, set to `init`
  // (emitted where called: before the loop that accumulates).
  ir::Value accumulator(ir::Value init) {
    const ir::Value acc = b_.storage(ir::Scope::Register, compute_, 1);
    b_.store(acc, zero(), init);
    return acc;
  }
  ir::Value get(ir::Value acc) { return b_.load(acc, zero()); }
  void put(ir::Value acc, ir::Value value) { b_.store(acc, zero(), value); }

 private:
  ir::Value zero() {
    if (!zero_.valid()) zero_ = i64(0);
    return zero_;
  }

  ir::Builder b_;
  ir::DType storage_;
  ir::DType compute_;
  ir::Value zero_;
};

// Argument specs, in slot order.
inline ArgSpec input_arg(std::string name, ir::DType dtype, std::uint64_t elements, double low = -1.0,
                         double high = 1.0) {
  return ArgSpec{std::move(name), ArgRole::Input, dtype, elements, 0, low, high};
}
inline ArgSpec output_arg(std::string name, ir::DType dtype, std::uint64_t elements) {
  return ArgSpec{std::move(name), ArgRole::Output, dtype, elements, 0, 0, 0};
}

// The range of random inputs: [-1, 1] for floats, whole numbers in [-9, 9]
// for integers (exact through every reference).
inline double input_low(ir::DType dtype) { return ir::is_float(dtype) ? -1.0 : -9.0; }
inline double input_high(ir::DType dtype) { return ir::is_float(dtype) ? 1.0 : 9.0; }

// The builders, one per kernel family. Each fills name-independent fields
// (kernel, args, flops, bytes, reference); library.cpp checks sizes and
// dtypes first and sets the rest.
StandardKernel make_add(const KernelSize& size, ir::DType dtype);
StandardKernel make_add_dyn(const KernelSize& size, ir::DType dtype);
StandardKernel make_exp_chain(const KernelSize& size, ir::DType dtype);
StandardKernel make_sum_rows(const KernelSize& size, ir::DType dtype);
StandardKernel make_max_rows(const KernelSize& size, ir::DType dtype);
StandardKernel make_softmax_rows(const KernelSize& size, ir::DType dtype);
StandardKernel make_layernorm_rows(const KernelSize& size, ir::DType dtype);
StandardKernel make_rmsnorm_rows(const KernelSize& size, ir::DType dtype);
StandardKernel make_matmul(const KernelSize& size, ir::DType dtype);
StandardKernel make_matmul_bt(const KernelSize& size, ir::DType dtype);
StandardKernel make_transpose(const KernelSize& size, ir::DType dtype);

}  // namespace kiln::kernels::detail
