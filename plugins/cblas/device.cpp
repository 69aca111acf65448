// cblas:0, the one device: its DeviceInfo: OpenBLAS's version and kernels, the machine's CPU.
#include "cblas.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/host_cpu.hpp>
#include <kiln/sdk/host_memory.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/single_device.hpp>

#include <climits>

namespace kiln::cblas {

kiln_device_info describe_device(const OpenBlas& blas, int threads) {
  const sdk::HostCpu cpu = sdk::read_host_cpu();
  kiln_device_info info{};
  info.struct_size = sizeof info;
  sdk::copy_string(info.name, "OpenBLAS " + blas.version + " (" + blas.core + ")");
  sdk::copy_string(info.vendor, "OpenBLAS");
  std::string driver = blas.version;
  if (!blas.fallback_core.empty()) driver += "; OPENBLAS_CORETYPE=" + blas.core + " set by kiln (chose " + blas.fallback_core + ")";
  else if (blas.user_coretype) driver += "; OPENBLAS_CORETYPE=" + blas.core + " from the environment";
  sdk::copy_string(info.driver_version, driver);
  info.kind = KILN_DEVICE_KIND_CPU;
  info.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_FIXED_FUNCTION;
  info.memory_bytes = sdk::host_total_bytes();
  for (auto& dim : info.max_grid_dims) dim = INT_MAX;
  info.max_local_dims[0] = info.max_local_dims[1] = info.max_local_dims[2] = 1;
  info.max_local_threads = 1;
  info.compute_units = static_cast<std::uint32_t>(threads);
  info.warp_size = 1;
  info.clock_mhz = cpu.clock_mhz;
  info.vector_widths = 1u << 1;  // scalar kernels only: the autotuner has nothing to vectorise here
  // What a matrix product is made of, in the dtypes BLAS has.
  const std::uint32_t gemm_ops = KILN_CAP_BINARY(KILN_BINARY_ADD) | KILN_CAP_BINARY(KILN_BINARY_MUL);
  sdk::set_dtype_caps(info, KILN_DTYPE_F32, gemm_ops);
  sdk::set_dtype_caps(info, KILN_DTYPE_F64, gemm_ops);
  for (int level = 0; level < 3; ++level) info.cache_bytes[level] = cpu.cache_bytes[level];
  return info;
}

namespace {
const kiln_device_info& info_of_the_device() { return state().info; }
}  // namespace

const sdk::DeviceFunctions kDeviceFunctions = sdk::single_host_device<info_of_the_device>();

}  // namespace kiln::cblas
