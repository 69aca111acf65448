// tests/cuda/matmul_untuned_bits.hpp - an f32 matmul optimized by one
// sequence, run on the CUDA device beside the untuned kernel on the same
// device with the same inputs: the two must agree bit for bit (the device
// compared with itself, so the comparison holds where the interpreter
// rounds differently, e.g. a MAD rounded twice). The staged-kernel device
// tests (simt_staged, wgmma_staged tf32) share it; each picks inputs for
// which its products are exact or ordered alike.
#pragma once

#include "support/kernel_runner.hpp"

#include <gtest/gtest.h>
#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/optimization.hpp>

#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::test {

// `value()` gives each element of A, then of B; C starts poisoned. Reports
// the first five differing elements by row and column.
inline void expect_matmul_gives_the_untuned_kernels_bits(const AbiPlugin& plugin, kiln_device* device,
                                                         const DeviceInfo& device_info,
                                                         const kernels::KernelSize& size, const std::string& step,
                                                         const std::function<float()>& value) {
  const auto kernel = kernels::make_standard_kernel("matmul", size, ir::DType::F32);
  ASSERT_TRUE(kernel.ok());
  const auto untuned = passes::optimize(kernel->kernel, {}, device_info);
  const auto tuned = passes::optimize(kernel->kernel, passes::parse_sequence(step).value(), device_info);
  ASSERT_TRUE(untuned.ok() && tuned.ok()) << (tuned.ok() ? untuned.error().to_string() : tuned.error().to_string());
  std::vector<HostArg> args;
  for (std::size_t count : {static_cast<std::size_t>(size.m * size.k), static_cast<std::size_t>(size.k * size.n)}) {
    HostArg arg = HostArg::buffer(KILN_DTYPE_F32, count);
    for (std::size_t e = 0; e < count; ++e) arg.set(e, std::bit_cast<std::uint32_t>(value()));
    args.push_back(arg);
  }
  args.push_back(HostArg::poisoned(KILN_DTYPE_F32, static_cast<std::size_t>(size.m * size.n)));
  std::vector<HostArg> want = args, got = args;
  try {
    conformance::run_kernel(plugin, device, untuned->to_wire(), want);
    conformance::run_kernel(plugin, device, tuned->to_wire(), got);
  } catch (const AbiError& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  int bad = 0;
  for (std::size_t e = 0; e < want[2].count(); ++e)
    if (want[2].get(e) != got[2].get(e) && bad++ < 5)
      ADD_FAILURE() << "c[" << e << "] (row " << e / static_cast<std::size_t>(size.n) << ", column "
                    << e % static_cast<std::size_t>(size.n) << "): " << got[2].as<float>(e) << ", untuned "
                    << want[2].as<float>(e);
  EXPECT_EQ(bad, 0);
}

}  // namespace kiln::test
