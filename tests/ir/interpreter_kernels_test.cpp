// Every standard kernel, at several sizes (1, 7, 257, 1000 and small matmul
// shapes) and in every dtype it allows, run on the SDK's reference
// interpreter on random inputs and compared with its C++ reference; and a
// LOCAL-storage tree reduction written in the text form.
// Built only once the interpreter is in the tree (tests/ir/CMakeLists.txt).
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <numeric>

using namespace kiln;
using namespace kiln::kernels;
using ir::DType;

namespace {

// Runs `k` on the interpreter with fresh random inputs; returns compare()'s error.
double run_and_compare(const StandardKernel& k, std::uint64_t seed) {
  std::vector<HostBuffer> inputs = k.make_inputs(seed);
  std::vector<HostBuffer> outputs = k.make_outputs();
  std::vector<kiln_arg> args;
  std::size_t next_input = 0, next_output = 0;
  for (const ArgSpec& arg : k.args) {
    switch (arg.role) {
      case ArgRole::Input: {
        HostBuffer& b = inputs[next_input++];
        args.push_back(sdk::host_buffer_arg(b.data().data(), b.bytes()));
        break;
      }
      case ArgRole::Output: {
        HostBuffer& b = outputs[next_output++];
        args.push_back(sdk::host_buffer_arg(b.data().data(), b.bytes()));
        break;
      }
      case ArgRole::Scalar:
        args.push_back(sdk::scalar_arg(static_cast<kiln_dtype>(arg.dtype), arg.scalar_bits));
        break;
    }
  }
  const std::vector<kiln_op> wire = k.kernel.to_wire();
  sdk::InterpretedProgram(wire).run(args);

  std::vector<HostBuffer> expected = k.make_outputs();
  k.reference(inputs, expected);
  double worst = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) worst = std::max(worst, compare(outputs[i], expected[i]));
  return worst;
}

void check(std::string_view name, const KernelSize& size, DType dtype) {
  const auto made = make_standard_kernel(name, size, dtype);
  ASSERT_TRUE(made.ok()) << made.error().to_string();
  const StandardKernel& k = *made;
  SCOPED_TRACE(std::string(name) + " m=" + std::to_string(size.m) + " n=" + std::to_string(size.n) +
               " k=" + std::to_string(size.k) + " " + std::string(ir::dtype_name(dtype)));
  ASSERT_TRUE(ir::verify(k.kernel).ok());
  try {
    const double error = run_and_compare(k, 20261129);
    EXPECT_LE(error, k.tolerance) << "max_rel_err " << error << " > tolerance " << k.tolerance;
  } catch (const sdk::PluginError& e) {
    ADD_FAILURE() << "interpreter: " << e.what() << "\n" << ir::print(k.kernel);
  }
}

const std::int64_t kSizes[] = {1, 7, 257, 1000};

}  // namespace

TEST(InterpreterKernels, ElementwiseKernelsAtEverySize) {
  for (std::string_view name : {"add", "add-dyn", "exp-chain"})
    for (std::int64_t n : kSizes) check(name, {.n = n}, DType::F32);
}

TEST(InterpreterKernels, RowKernelsAtEverySize) {
  for (std::string_view name : {"sum-rows", "max-rows", "softmax-rows", "layernorm-rows", "rmsnorm-rows", "transpose"})
    for (std::int64_t n : kSizes) {
      check(name, {.m = 7, .n = n}, DType::F32);
      check(name, {.m = n, .n = 7}, DType::F32);
    }
}

TEST(InterpreterKernels, MatmulShapes) {
  const KernelSize shapes[] = {{1, 1, 1}, {7, 5, 3}, {16, 33, 20}, {3, 1, 257}, {1, 257, 2}, {5, 7, 1000}};
  for (std::string_view name : {"matmul", "matmul-bt"})
    for (const KernelSize& shape : shapes) check(name, shape, DType::F32);
}

TEST(InterpreterKernels, EveryAllowedDtype) {
  for (std::string_view name : standard_kernel_names()) {
    const std::vector<DType> dtypes = make_standard_kernel(name, {}).value().dtypes;
    for (DType dtype : dtypes) check(name, {.m = 7, .n = 257, .k = 33}, dtype);
  }
}

TEST(InterpreterKernels, ErrorsStayFarBelowTolerance) {
  // The tolerances are not loose enough to hide a real bug: the errors
  // measured are well below them (and a wrong kernel is far above).
  const auto k = make_standard_kernel("softmax-rows", {.m = 4, .n = 1000}).value();
  const double error = run_and_compare(k, 5);
  EXPECT_LT(error, k.tolerance / 4) << error;
  auto wrong = k;
  wrong.reference = make_standard_kernel("layernorm-rows", {.m = 4, .n = 1000}).value().reference;
  EXPECT_GT(run_and_compare(wrong, 5), 100 * k.tolerance);
}

TEST(InterpreterKernels, LocalTreeReductionWithBarriers) {
  const auto kernel = ir::parse(ir::samples::kTreeReduce);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  ASSERT_TRUE(ir::verify(*kernel).ok()) << ir::verify(*kernel).error().to_string();
  HostBuffer in(DType::F32, 64), out(DType::F32, 8);
  fill_random(in, 11);
  kiln_arg args[] = {sdk::host_buffer_arg(in.data().data(), in.bytes()),
                     sdk::host_buffer_arg(out.data().data(), out.bytes())};
  const std::vector<kiln_op> wire = kernel->to_wire();
  sdk::InterpretedProgram(wire).run(args);
  for (std::size_t g = 0; g < 8; ++g) {
    // The tree's order: ((x0+x4)+(x2+x6)) + ((x1+x5)+(x3+x7)), in f32.
    auto x = [&](std::size_t i) { return static_cast<float>(in.get(g * 8 + i)); };
    const float expected = ((x(0) + x(4)) + (x(2) + x(6))) + ((x(1) + x(5)) + (x(3) + x(7)));
    EXPECT_EQ(static_cast<float>(out.get(g)), expected) << "group " << g;
  }
}

