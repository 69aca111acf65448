#include "opt_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace kiln::passes::opts {

Error step_error(const OptStep& step, std::string_view why) {
  Error error = make_error(ErrorCode::InvalidArgument, step.to_string() + ": " + std::string(why));
  error.function = "optimize";
  return error;
}

Result<std::int64_t> require_param(const OptStep& step, std::string_view key) {
  for (const auto& [name, value] : step.params)
    if (name == key) return value;
  return step_error(step, "missing parameter '" + std::string(key) + "'");
}

Result<void> known_params(const OptStep& step, std::initializer_list<std::string_view> keys) {
  for (const auto& [name, value] : step.params) {
    bool known = false;
    for (std::string_view key : keys) known = known || key == name;
    if (known) continue;
    std::string expected;
    for (std::string_view key : keys) expected += (expected.empty() ? "" : ", ") + std::string(key);
    return step_error(step, "unknown parameter '" + name + "' (expected: " + (expected.empty() ? "none" : expected) + ")");
  }
  return {};
}

Result<bool> flag_param(const OptStep& step, std::string_view key) {
  const std::int64_t value = step.param(key, 0);
  if (value != 0 && value != 1) return step_error(step, std::string(key) + " must be 0 or 1");
  return value == 1;
}

OptStep make_step(std::string_view name, std::initializer_list<std::pair<std::string_view, std::int64_t>> params) {
  OptStep step;
  step.opt = std::string(name);
  for (const auto& [key, value] : params) step.params.emplace_back(std::string(key), value);
  return step;
}

std::optional<ir::ValueId> find_index(const ir::Kernel& kernel, ir::Scope scope, std::uint32_t axis) {
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == ir::OpKind::Index && op.scope() == scope && op.attr == axis) return id;
  }
  return std::nullopt;
}

std::optional<std::pair<ir::ValueId, std::int64_t>> single_local_axis(const ir::Kernel& kernel) {
  std::optional<std::pair<ir::ValueId, std::int64_t>> found;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Index || op.scope() != ir::Scope::Local) continue;
    const auto length = ir::constant_int(kernel, op.src[0]);
    if (found || !length || op.attr != 0) return std::nullopt;
    found = std::make_pair(id, *length);
  }
  return found;
}

bool is_local_storage(const ir::Kernel& kernel, ir::ValueId memory) {
  return kernel[memory].kind == ir::OpKind::Storage && kernel[memory].scope() == ir::Scope::Local;
}

std::uint64_t storage_bytes(const ir::Kernel& kernel, ir::Scope scope) {
  std::uint64_t bytes = 0;
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Storage && op.scope() == scope) bytes += op.imm * ir::dtype_bytes(op.dtype);
  return bytes;
}

std::optional<std::string> local_memory_refusal(const ir::Kernel& kernel, std::uint64_t added, const DeviceInfo& device,
                                                std::string_view what) {
  const std::uint64_t bytes = added + storage_bytes(kernel, ir::Scope::Local);
  if (bytes <= device.local_memory_bytes) return std::nullopt;
  return std::string(what) + " would make " + std::to_string(bytes) + " bytes of LOCAL storage per group, more than the " +
         std::to_string(device.local_memory_bytes) + " the device has";
}

std::uint64_t max_register_bytes(const DeviceInfo& device) {
  return device.max_register_bytes > 0 ? device.max_register_bytes : kDefaultMaxRegisterBytes;
}

bool read_only_load(const ir::Kernel& kernel, const ir::Op& op) {
  if (op.kind != ir::OpKind::Load) return false;
  const ir::Op& memory = kernel[op.src[0]];
  return memory.kind == ir::OpKind::Param && memory.param_kind() == ir::ParamKind::Global;
}

std::vector<ir::ValueId> loops_in_order(const ir::Kernel& kernel) {
  std::vector<ir::ValueId> loops;
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Loop) loops.push_back(id);
  return loops;
}

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> found;
  if (n < 1) return found;
  lo = std::max<std::int64_t>(lo, 1);
  hi = std::min(hi, n);
  // Pairs (d, n/d) for d up to min(sqrt(n), hi): every divisor <= hi is one
  // of them, and huge lengths cost at most sqrt(n) steps.
  for (std::int64_t d = 1; d <= n / d && d <= hi; ++d) {
    if (n % d != 0) continue;
    for (std::int64_t candidate : {d, n / d})
      if (candidate >= lo && candidate <= hi && (found.empty() || found.back() != candidate)) found.push_back(candidate);
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

}  // namespace kiln::passes::opts
