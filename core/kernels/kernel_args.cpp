// Launch arguments and their host buffers, for standard kernels and for any
// kernel read from text.
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/kernels/library.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <limits>
#include <map>

namespace kiln::kernels {

std::vector<HostBuffer> make_input_buffers(std::span<const ArgSpec> args, std::uint64_t seed) {
  // Each buffer has its own random stream (seeded by its slot), so large
  // ones fill on threads of their own with the very same values.
  constexpr std::uint64_t kThreadedElements = std::uint64_t{1} << 20;
  std::vector<HostBuffer> buffers;
  std::vector<std::future<void>> fills;
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const ArgSpec& arg = args[slot];
    if (arg.role != ArgRole::Input) continue;
    buffers.emplace_back(arg.dtype, arg.elements);
  }
  std::size_t next = 0;
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const ArgSpec& arg = args[slot];
    if (arg.role != ArgRole::Input) continue;
    HostBuffer& buffer = buffers[next++];
    const auto fill = [&buffer, &arg, s = seed + slot] { fill_random(buffer, s, arg.low, arg.high); };
    if (arg.elements >= kThreadedElements) fills.push_back(std::async(std::launch::async, fill));
    else fill();
  }
  for (std::future<void>& f : fills) f.get();
  return buffers;
}

HostBuffer make_poison_buffer(ir::DType dtype, std::size_t elements) {
  HostBuffer buffer(dtype, elements);
  if (elements == 0) return buffer;
  if (ir::is_float(dtype)) {
    // One NaN, then copies of it, doubling (large outputs: no per-element encode).
    buffer.set(0, std::numeric_limits<double>::quiet_NaN());
    const std::size_t width = ir::dtype_bytes(dtype);
    std::byte* bytes = buffer.data().data();
    for (std::size_t done = width; done < buffer.bytes(); done *= 2)
      std::memcpy(bytes + done, bytes, std::min(done, buffer.bytes() - done));
  } else {
    std::memset(buffer.data().data(), 0x5a, buffer.bytes());
  }
  return buffer;
}

std::vector<HostBuffer> make_output_buffers(std::span<const ArgSpec> args) {
  std::vector<HostBuffer> buffers;
  for (const ArgSpec& arg : args)
    if (arg.role == ArgRole::Output) buffers.push_back(make_poison_buffer(arg.dtype, arg.elements));
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
