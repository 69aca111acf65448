#include "device_limits.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"

#include <string>

namespace kiln::detail {

namespace {

Error over_limit(const DeviceInfo& info, std::int64_t op, const std::string& what) {
  Error e = make_error(ErrorCode::Unsupported, what);
  e.device = info.id;
  e.function = "compile";
  e.op = op;
  return e;
}

}  // namespace

Result<void> check_device_limits(const ir::Kernel& kernel, const DeviceInfo& info) {
  // The verifier caps one STORAGE at 2^48 bytes, so the sum cannot wrap
  // before it passes any device's local memory; checked all the same.
  std::uint64_t local_bytes = 0;
  std::uint64_t register_bytes = 0;
  std::uint64_t threads = 1;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == ir::OpKind::Storage && op.scope() == ir::Scope::Local) {
      std::uint64_t bytes = 0;
      if (__builtin_mul_overflow(op.imm, std::uint64_t{ir::dtype_bytes(op.dtype)}, &bytes) ||
          __builtin_add_overflow(local_bytes, bytes, &local_bytes))
        local_bytes = UINT64_MAX;
      if (info.local_memory_bytes != 0 && local_bytes > info.local_memory_bytes)
        return over_limit(info, id, "local storage of " + std::to_string(local_bytes) +
                                        " bytes per work-group (up to this op), past the device's local memory of " +
                                        std::to_string(info.local_memory_bytes) + " bytes");
    }
    if (op.kind == ir::OpKind::Storage && op.scope() == ir::Scope::Register) {
      std::uint64_t bytes = 0;
      if (__builtin_mul_overflow(op.imm, std::uint64_t{ir::dtype_bytes(op.dtype)}, &bytes) ||
          __builtin_add_overflow(register_bytes, bytes, &register_bytes))
        register_bytes = UINT64_MAX;
      const std::uint64_t limit = info.max_register_bytes != 0 ? info.max_register_bytes : kDefaultMaxRegisterBytes;
      if (register_bytes > limit)
        return over_limit(info, id, "register storage of " + std::to_string(register_bytes) +
                                        " bytes per thread (up to this op), past the device's limit of " +
                                        std::to_string(limit) + " bytes (max_register_bytes)");
    }
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local && op.attr < 3) {
      const auto length = ir::constant_int(kernel, op.src[0]);
      if (!length || *length < 1) continue;  // the verifier's local-length rule
      const auto n = static_cast<std::uint64_t>(*length);
      if (info.max_local_dims[op.attr] != 0 && n > info.max_local_dims[op.attr])
        return over_limit(info, id, std::to_string(n) + " threads per work-group on axis " +
                                        std::to_string(op.attr) + ", past the device's maximum of " +
                                        std::to_string(info.max_local_dims[op.attr]));
      threads = n > UINT64_MAX / threads ? UINT64_MAX : threads * n;
      if (info.max_local_threads != 0 && threads > info.max_local_threads)
        return over_limit(info, id, std::to_string(threads) +
                                        " threads per work-group, past the device's maximum of " +
                                        std::to_string(info.max_local_threads));
    }
  }
  return {};
}

}  // namespace kiln::detail
