// The shared kernel suite (kernel_suite.hpp) as cases, one per kernel. The
// suite's kernels use work-groups of up to 64 threads; on a device with
// fewer (max_local_threads 1, say) the ones that fit still run and the
// others are unsupported with the sizes, instead of the whole suite
// being skipped.
#include <kiln/sdk/capabilities.hpp>
#include "cases.hpp"

#include <kiln/conformance/capabilities.hpp>
#include <kiln/conformance/kernel_suite.hpp>

#include <kiln/sdk/grid.hpp>

namespace kiln::conformance::detail {

namespace {

// The work-group the host would launch `kernel` with.
sdk::LaunchGrid grid_of(const SuiteKernel& kernel) {
  std::vector<HostArg> args = kernel.args;
  std::vector<kiln_arg> abi;
  for (HostArg& a : args)
    abi.push_back(a.scalar ? sdk::scalar_arg(static_cast<kiln_dtype>(a.dtype), a.bits)
                           : sdk::host_buffer_arg(a.bytes.data(), a.bytes.size()));
  return sdk::compute_grid(kernel.ops, abi);
}

// Empty when the kernel's work-group fits the device, else why not.
std::string does_not_fit(const SuiteKernel& kernel, const kiln_device_info& info) {
  const sdk::LaunchGrid grid = grid_of(kernel);
  const std::uint64_t threads = grid.threads_per_group();
  const std::string shape =
      std::to_string(grid.local[0]) + "x" + std::to_string(grid.local[1]) + "x" + std::to_string(grid.local[2]);
  if (threads > info.max_local_threads)
    return "needs " + std::to_string(threads) + " threads per work-group (" + shape + "); the device's max_local_threads is " +
           std::to_string(info.max_local_threads);
  for (int axis = 0; axis < 3; ++axis)
    if (info.max_local_dims[axis] != 0 && grid.local[axis] > info.max_local_dims[axis])
      return "needs " + shape + " threads per work-group; the device's max_local_dims[" + std::to_string(axis) +
             "] is " + std::to_string(info.max_local_dims[axis]);
  return {};
}

// The capabilities the quick suite is built for: f32 and i32 only, so every
// kernel shape runs once rather than once per dtype.
kiln_device_info quick_capabilities(const kiln_device_info& info) {
  kiln_device_info quick = info;
  for (unsigned dt = 0; dt < 32; ++dt) {
    if (dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_I32) continue;
    for (unsigned code = 0; code < KILN_CAP_SLOTS; ++code) {
      sdk::set_op_kind(quick, dt, code, false);
      sdk::set_unary(quick, dt, code, false);
      sdk::set_binary(quick, dt, code, false);
    }
  }
  return quick;
}

}  // namespace

std::vector<Case> suite_cases(const kiln_device_info& info, bool quick, unsigned seed) {
  std::vector<Case> cases;
  // 67 elements: not a multiple of the 64-thread groups, so the IF guard matters.
  for (SuiteKernel& kernel : kernel_suite(quick ? quick_capabilities(info) : info, 67, seed)) {
    auto shared = std::make_shared<const SuiteKernel>(std::move(kernel));
    cases.push_back({"suite: " + shared->name, [shared](const Target& t) {
                       if (auto v = cannot_run_kernels(t)) return *v;
                       if (std::string why = does_not_fit(*shared, t.info); !why.empty())
                         return Verdict::unsupported(why);
                       Problems problems;
                       for (const std::string& p : run_suite_kernel(t.plugin, t.device, *shared)) problems.expect(false, p);
                       return problems.verdict();
                     }});
  }
  return cases;
}

}  // namespace kiln::conformance::detail
