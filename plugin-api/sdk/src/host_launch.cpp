#include "kiln/sdk/host_launch.hpp"

#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/wire.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace kiln::sdk {

HostArguments host_arguments(const kiln_launch_args& launch, std::span<const EmittedParam> params, std::string_view plugin) {
  const std::string who = std::string(plugin) + ": launch: ";
  if (launch.n_args != params.size())
    fail(KILN_STATUS_INVALID_ARGUMENT,
         who + std::to_string(launch.n_args) + " arguments for a kernel of " + std::to_string(params.size()) + " params");
  if (launch.n_args != 0 && launch.args == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, who + "args is NULL");
  HostArguments out;
  out.pointers.assign(params.size(), nullptr);
  out.scalars.assign(params.size(), 0);
  for (std::size_t slot = 0; slot < params.size(); ++slot) {
    const EmittedParam& p = params[slot];
    const kiln_arg& a = launch.args[slot];
    const std::string where = who + "argument " + std::to_string(slot) + " (" + std::string(dtype_name(p.dtype)) + " " +
                              std::string(param_kind_name(p.kind)) + "): ";
    if (p.kind == KILN_PARAM_VARIABLE) {
      if (a.kind != KILN_ARG_SCALAR) fail(KILN_STATUS_INVALID_ARGUMENT, where + "expected a scalar");
      if (a.dtype != p.dtype)
        fail(KILN_STATUS_INVALID_ARGUMENT, where + "scalar has dtype " + std::string(dtype_name(a.dtype)));
      out.scalars[slot] = a.scalar_bits;
      out.pointers[slot] = &out.scalars[slot];
      continue;
    }
    if (a.kind != KILN_ARG_BUFFER) fail(KILN_STATUS_INVALID_ARGUMENT, where + "expected a buffer");
    if (a.host_pointer == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, where + "host_pointer is NULL");
    const std::uint64_t need = p.elements * dtype_bytes(p.dtype);
    if (p.elements != 0 && a.bytes < need)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           where + "buffer holds " + std::to_string(a.bytes) + " bytes, the kernel reads up to " + std::to_string(need));
    out.pointers[slot] = a.host_pointer;
  }
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint64_t g = launch.groups[axis];
    if (g == 0 || g > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(KILN_STATUS_INVALID_ARGUMENT, who + "groups[" + std::to_string(axis) + "] is " + std::to_string(g));
    out.groups[axis] = static_cast<std::int64_t>(g);
  }
  return out;
}

void flush_host_caches(const HostArguments& arguments, const kiln_launch_args& launch) {
#if defined(__x86_64__)
  for (std::size_t slot = 0; slot < launch.n_args; ++slot) {
    const kiln_arg& a = launch.args[slot];
    if (a.kind != KILN_ARG_BUFFER || arguments.pointers[slot] == nullptr) continue;
    const char* p = static_cast<const char*>(arguments.pointers[slot]);
    for (std::uint64_t offset = 0; offset < a.bytes; offset += 64) __builtin_ia32_clflush(p + offset);
  }
  __builtin_ia32_mfence();
#else
  (void)arguments;
  (void)launch;
  // Larger than the last-level caches of the machines kiln runs on.
  static std::vector<char> sweep(std::size_t{256} << 20);
  static char sink = 0;
  for (std::size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<char>(sweep[i] + 1);
  sink = static_cast<char>(sink + sweep[sweep.size() / 2]);
#endif
}

}  // namespace kiln::sdk
