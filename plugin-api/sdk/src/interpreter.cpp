// InterpretedProgram: the public face of the interpreter (decode once, run
// many times).
#include "kiln/sdk/interpreter.hpp"

#include "interpreter_program.hpp"

namespace kiln::sdk {

std::string_view op_class_name(OpClass c) {
  static constexpr std::array<std::string_view, kOpClassCount> names = {
      "int", "int-div", "float", "double", "float-special", "exp-ln", "exp2-log2", "convert", "move", "control"};
  const auto i = static_cast<std::size_t>(c);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view memory_space_name(MemorySpace s) {
  static constexpr std::array<std::string_view, kMemorySpaceCount> names = {"global", "local", "register"};
  const auto i = static_cast<std::size_t>(s);
  return i < names.size() ? names[i] : "unknown";
}

InterpretedProgram::InterpretedProgram(std::span<const kiln_op> ops, const InterpreterLimits& limits)
    : data_(std::make_unique<const ProgramData>(decode_program(ops, limits))) {}

InterpretedProgram::~InterpretedProgram() = default;
InterpretedProgram::InterpretedProgram(InterpretedProgram&&) noexcept = default;
InterpretedProgram& InterpretedProgram::operator=(InterpretedProgram&&) noexcept = default;

ExecStats InterpretedProgram::run(std::span<const kiln_arg> args, const RunOptions& options) const {
  return run_program(*data_, args, nullptr, options);
}

ExecStats InterpretedProgram::run(std::span<const kiln_arg> args, const LaunchGrid& grid,
                                  const RunOptions& options) const {
  return run_program(*data_, args, &grid, options);
}

std::span<const kiln_op> InterpretedProgram::ops() const { return data_->ops; }
std::uint32_t InterpretedProgram::param_count() const { return static_cast<std::uint32_t>(data_->param_ops.size()); }
std::uint64_t InterpretedProgram::local_bytes_per_group() const { return data_->local_bytes; }
std::uint64_t InterpretedProgram::register_bytes_per_thread() const { return data_->register_bytes; }
std::uint64_t InterpretedProgram::threads_per_group() const { return data_->threads_per_group; }

}  // namespace kiln::sdk
