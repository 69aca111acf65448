// Launch arguments and their host buffers, for standard kernels and for any
// kernel read from text.
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/kernels/library.hpp"

#include <cstring>
#include <limits>
#include <map>

namespace kiln::kernels {

std::vector<HostBuffer> make_input_buffers(std::span<const ArgSpec> args, std::uint64_t seed) {
  std::vector<HostBuffer> buffers;
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const ArgSpec& arg = args[slot];
    if (arg.role != ArgRole::Input) continue;
    HostBuffer& buffer = buffers.emplace_back(arg.dtype, arg.elements);
    fill_random(buffer, seed + slot, arg.low, arg.high);
  }
  return buffers;
}

std::vector<HostBuffer> make_output_buffers(std::span<const ArgSpec> args) {
  std::vector<HostBuffer> buffers;
  for (const ArgSpec& arg : args) {
    if (arg.role != ArgRole::Output) continue;
    HostBuffer& buffer = buffers.emplace_back(arg.dtype, arg.elements);
    if (ir::is_float(arg.dtype)) {
      for (std::size_t i = 0; i < buffer.size(); ++i) buffer.set(i, std::numeric_limits<double>::quiet_NaN());
    } else {
      std::memset(buffer.data().data(), 0x5a, buffer.bytes());
    }
  }
  return buffers;
}

Result<std::vector<ArgSpec>> args_of(const ir::Kernel& kernel, std::span<const double> scalars) {
  auto invalid = [&](ir::ValueId id, const std::string& what) {
    Error e = make_error(ErrorCode::InvalidArgument, what + ": `" + ir::print_op(kernel, id) + "`");
    e.op = id;
    return e;
  };
  std::map<std::uint32_t, ir::ValueId> params;  // slot -> op
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Param && !params.emplace(kernel[id].attr, id).second)
      return invalid(id, "slot " + std::to_string(kernel[id].attr) + " is taken twice");
  std::vector<ArgSpec> args;
  std::size_t next_scalar = 0;
  for (const auto& [slot, id] : params) {
    const ir::Op& op = kernel[id];
    if (slot != args.size()) return invalid(id, "no param has slot " + std::to_string(args.size()));
    ArgSpec arg;
    arg.name = "%" + std::to_string(id);
    arg.dtype = op.dtype;
    if (op.param_kind() == ir::ParamKind::Variable) {
      if (next_scalar >= scalars.size())
        return invalid(id, "a value for var param " + std::to_string(slot) + " is needed (" +
                               std::to_string(scalars.size()) + " given)");
      arg.role = ArgRole::Scalar;
      arg.scalar_bits = ir::encode_float(op.dtype, scalars[next_scalar++]);
    } else {
      if (op.imm == 0) return invalid(id, "buffer param " + std::to_string(slot) + " has no element count (write it as [N])");
      arg.role = op.param_kind() == ir::ParamKind::GlobalMut ? ArgRole::Output : ArgRole::Input;
      arg.elements = op.imm;
    }
    args.push_back(std::move(arg));
  }
  if (next_scalar != scalars.size())
    return make_error(ErrorCode::InvalidArgument, std::to_string(scalars.size()) + " scalar values given, the kernel has " +
                                                      std::to_string(next_scalar) + " var params");
  return args;
}

}  // namespace kiln::kernels
