// Shared by the tests of the structural optimizations: apply one step given
// in its text form and check the result (it verifies and computes what the
// input computed, exactly, on the reference interpreter), list configs, and
// the standard kernels at odd sizes that the numeric checks run.
#pragma once

#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/optimization.hpp"
#include "passes/pass_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::passes::test {

inline OptStep step_of(std::string_view text) {
  Result<OptStep> step = OptStep::parse(text);
  if (!step.ok()) {
    ADD_FAILURE() << step.error().to_string();
    return {};
  }
  return std::move(step).value();
}

inline Result<ir::Kernel> apply_step(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device) {
  const OptStep step = step_of(step_text);
  const Optimization* optimization = find_optimization(step.opt);
  if (optimization == nullptr) return make_error(ErrorCode::NotFound, "no optimization named " + step.opt);
  return optimization->apply(kernel, step, device);
}

// Applies `step_text` to `kernel`; a failure when it is refused, does not
// verify, or changes the results on the interpreter (inputs from `seed`,
// VARIABLE params from `scalars`; exactly unless `tolerance`, for a step
// that reassociates sums). Returns the optimized kernel.
inline ir::Kernel expect_applies(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device,
                                 std::span<const double> scalars = {}, std::uint64_t seed = 7, double tolerance = 0) {
  Result<ir::Kernel> out = apply_step(kernel, step_text, device);
  if (!out.ok()) {
    ADD_FAILURE() << step_text << " was refused: " << out.error().to_string() << "\n" << ir::print(kernel);
    return kernel;
  }
  if (Result<void> valid = ir::verify(*out); !valid.ok()) {
    ADD_FAILURE() << step_text << " produced an invalid kernel: " << valid.error().to_string() << "\n" << ir::print(*out);
    return kernel;
  }
  if (std::string diff = compare_runs(kernel, *out, scalars, tolerance, seed); !diff.empty())
    ADD_FAILURE() << step_text << " changed the results: " << diff << "\nbefore:\n" << ir::print(kernel) << "after:\n"
                  << ir::print(*out);
  return std::move(out).value();
}

// The printed result of `step_text` on the kernel written in `text`
// (checked as expect_applies checks it).
inline std::string after_step(std::string_view step_text, std::string_view text, const DeviceInfo& device = gpu_preset(),
                              std::span<const double> scalars = {}) {
  return ir::print(expect_applies(parse_valid(text), step_text, device, scalars));
}

// The message of a step that must be refused ("" and a failure when it applies).
inline std::string refusal(const ir::Kernel& kernel, std::string_view step_text, const DeviceInfo& device = gpu_preset()) {
  Result<ir::Kernel> out = apply_step(kernel, step_text, device);
  if (out.ok()) {
    ADD_FAILURE() << step_text << " applied but should have been refused:\n" << ir::print(*out);
    return "";
  }
  EXPECT_EQ(out.error().code, ErrorCode::InvalidArgument) << out.error().to_string();
  return out.error().message;
}
inline std::string refusal(std::string_view text, std::string_view step_text, const DeviceInfo& device = gpu_preset()) {
  return refusal(parse_valid(text), step_text, device);
}

// configs() of the named optimization, as step texts.
inline std::vector<std::string> config_texts(std::string_view optimization, const ir::Kernel& kernel,
                                             const DeviceInfo& device) {
  std::vector<std::string> texts;
  const Optimization* opt = find_optimization(optimization);
  if (opt == nullptr) {
    ADD_FAILURE() << "no optimization named " << optimization;
    return texts;
  }
  for (const OptStep& step : opt->configs(kernel, device)) texts.push_back(step.to_string());
  return texts;
}

inline ir::Kernel standard(std::string_view name, kernels::KernelSize size, ir::DType dtype = ir::DType::F32) {
  Result<kernels::StandardKernel> made = kernels::make_standard_kernel(name, size, dtype);
  if (!made.ok()) {
    ADD_FAILURE() << made.error().to_string();
    return {};
  }
  return std::move(made->kernel);
}

// Standard kernels at odd sizes, for numeric checks (add-dyn is left out:
// its buffers have no element count; dynamic kernels are written as text).
inline std::vector<ir::Kernel> odd_standard_kernels() {
  return {standard("add", {1, 1000, 1}),          standard("exp-chain", {1, 96, 1}),
          standard("sum-rows", {7, 24, 1}),       standard("max-rows", {12, 5, 1}, ir::DType::I32),
          standard("softmax-rows", {6, 16, 1}),   standard("layernorm-rows", {4, 8, 1}),
          standard("matmul", {12, 8, 6}),         standard("matmul-bt", {8, 4, 16}),
          standard("transpose", {16, 6, 1}),      standard("matmul", {4, 6, 8}, ir::DType::I64)};
}

inline std::vector<DeviceInfo> presets() { return {gpu_preset(), small_preset(), cpu_preset()}; }

// A row sum whose sizes are VARIABLE params (slot 2 rows, slot 3 columns),
// for configs() on dynamic lengths; run it with scalars {rows, columns}
// where rows * columns <= 96.
inline constexpr std::string_view kDynamicRowSum = R"(
%x = param 0 global f32[96]
%y = param 1 global_mut f32[12]
%rows = param 2 var i64
%cols = param 3 var i64
%row = index group 0 %rows
%base = mul i64 %row, %cols
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store f32 %acc[%at], %zero
%c = loop %cols
  %i = add i64 %base, %c
  %v = load f32 %x[%i]
  %s = load f32 %acc[%at]
  %t = add f32 %s, %v
  store f32 %acc[%at], %t
endloop %c
%r = load f32 %acc[%at]
store f32 %y[%row], %r
)";

}  // namespace kiln::passes::test
