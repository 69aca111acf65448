// Shared by the tests of the performance optimizations (register_block,
// tiled_reduce, local_tile, vectorize): apply one step by name and check
// that the result verifies, and that it computes what the input computed on
// the reference interpreter with random inputs.
#pragma once

#include "passes/pass_test_support.hpp"

#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/optimization.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace kiln::passes::test {

// The step's result (an error is returned, not failed on).
inline Result<ir::Kernel> apply_step(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device) {
  Result<OptStep> step = OptStep::parse(step_text);
  if (!step.ok()) return step.error();
  const Optimization* optimization = find_optimization(step->opt);
  if (optimization == nullptr) return make_error(ErrorCode::NotFound, "no optimization " + step->opt);
  return optimization->apply(kernel, *step, device);
}

// Applies `step_text`, failing the test when it errs or the result does not verify.
inline ir::Kernel applied(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device) {
  Result<ir::Kernel> out = apply_step(kernel, step_text, device);
  if (!out.ok()) {
    ADD_FAILURE() << step_text << ": " << out.error().to_string() << "\n" << ir::print(kernel);
    return kernel;
  }
  if (Result<void> valid = ir::verify(*out); !valid.ok())
    ADD_FAILURE() << step_text << " made an invalid kernel: " << valid.error().to_string() << "\n" << ir::print(*out);
  return std::move(out).value();
}

// The step's error message ("" and a test failure when it applied).
inline std::string step_error_message(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device) {
  Result<ir::Kernel> out = apply_step(kernel, step_text, device);
  if (out.ok()) {
    ADD_FAILURE() << step_text << " applied, an error was expected:\n" << ir::print(*out);
    return "";
  }
  EXPECT_EQ(out.error().code, ErrorCode::InvalidArgument) << out.error().to_string();
  return out.error().message;
}

// Runs a standard kernel and its optimized form on the interpreter with the
// same random inputs; "" when the outputs agree within the kernel's
// tolerance (times `slack`, for reassociated sums).
inline std::string compare_standard(const kernels::StandardKernel& k, const ir::Kernel& optimized, std::uint64_t seed,
                                    double slack = 1) {
  return compare_outcomes(run_on_interpreter(k.kernel, k.args, seed), run_on_interpreter(optimized, k.args, seed),
                          k.tolerance * slack);
}

inline kernels::StandardKernel standard(std::string_view name, kernels::KernelSize size,
                                        ir::DType dtype = ir::DType::F32) {
  return kernels::make_standard_kernel(name, size, dtype).value();
}

// The step list of configs() as text, for EXPECT_THAT.
inline std::vector<std::string> config_texts(const Optimization& optimization, const ir::Kernel& kernel,
                                             const DeviceInfo& device) {
  std::vector<std::string> texts;
  for (const OptStep& step : optimization.configs(kernel, device)) texts.push_back(step.to_string());
  return texts;
}

}  // namespace kiln::passes::test
