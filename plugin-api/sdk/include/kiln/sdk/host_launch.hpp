// kiln/sdk/host_launch.hpp - launch arguments for plugins that run kernels on
// host memory (KILN_DEVICE_HOST_MEMORY: C, CBLAS): checked against the
// kernel's params and turned into plain pointers.
//
// Buffers come as kiln_arg.host_pointer, which the host always sets for
// host-memory devices, also for buffers another host-memory plugin allocated
// (kiln_arg.buffer is then NULL): a c:0 buffer runs on cblas:0 as is.
#pragma once

#include <kiln/plugin.h>
#include <kiln/sdk/c_emitter.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::sdk {

// The arguments of one launch, by slot. Not copyable: pointers[] of a
// VARIABLE points into scalars[].
struct HostArguments {
  std::vector<void*> pointers;          // a buffer's bytes, or &scalars[slot]
  std::vector<std::uint64_t> scalars;   // VARIABLE value bits (0 for buffers)
  std::array<std::int64_t, 3> groups{1, 1, 1};

  HostArguments() = default;
  HostArguments(HostArguments&&) = default;
  HostArguments& operator=(HostArguments&&) = default;
  HostArguments(const HostArguments&) = delete;
  HostArguments& operator=(const HostArguments&) = delete;
};

// Checks `launch` against `params` (count, kinds, scalar dtypes, buffer
// sizes against known element counts, group counts >= 1) and gathers the
// pointers. Throws PluginError(INVALID_ARGUMENT) naming the plugin and slot.
HostArguments host_arguments(const kiln_launch_args& launch, std::span<const EmittedParam> params,
                             std::string_view plugin);

// Evicts the launch's buffers from every cache level (KILN_TIMED_FLUSH_CACHE):
// clflush on x86-64, a sweep through a large scratch buffer elsewhere.
void flush_host_caches(const HostArguments& arguments, const kiln_launch_args& launch);

}  // namespace kiln::sdk
