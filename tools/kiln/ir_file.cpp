#include "ir_file.hpp"

#include "commands.hpp"
#include "input_file.hpp"
#include "ir_run.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/ir/verify.hpp>

#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

namespace kiln::cli {

namespace {

// A whole loop nest is not known here; this is the tolerance of a 1024-term
// reduction in the output dtype (host_buffer.hpp), loose enough for a device's
// own tanh/exp and tight enough to catch a wrong op.
constexpr std::int64_t kAssumedReduction = 1024;

double parse_number(const std::string& text, const std::string& what) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) throw CommandFailed(what + ": `" + text + "` is not a number");
  return value;
}

// The var params' values in slot order from "%N=VALUE" assignments.
std::vector<double> scalar_values(const ir::Kernel& kernel, const std::string& file,
                                  const std::vector<std::string>& assignments) {
  std::map<std::uint32_t, ir::ValueId> vars;  // slot -> op
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Param && kernel[id].param_kind() == ir::ParamKind::Variable)
      vars.emplace(kernel[id].attr, id);
  std::string names;
  for (const auto& [slot, id] : vars) names += (names.empty() ? "" : ", ") + fmt::format("%{}", id);
  std::map<ir::ValueId, double> given;
  for (const std::string& assignment : assignments) {
    const std::size_t eq = assignment.find('=');
    if (eq == std::string::npos) throw CommandFailed("--scalar " + assignment + ": write NAME=VALUE, e.g. %3=1000");
    const std::string name = assignment.substr(0, eq);
    const auto var = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return fmt::format("%{}", v.second) == name; });
    if (var == vars.end())
      throw CommandFailed(fmt::format("--scalar {}: {} has no var param {} (its var params: {})", assignment, file, name,
                                      names.empty() ? "none" : names));
    given[var->second] = parse_number(assignment.substr(eq + 1), "--scalar " + name);
  }
  std::vector<double> values;
  for (const auto& [slot, id] : vars) {
    const auto value = given.find(id);
    if (value == given.end())
      throw CommandFailed(fmt::format("{}: var param %{} (slot {}, {}) needs a value: --scalar %{}=VALUE", file, id, slot,
                                      ir::dtype_name(kernel[id].dtype), id));
    values.push_back(value->second);
  }
  return values;
}

}  // namespace

ir::Kernel read_ir_file(const std::string& file) {
  Result<ir::SourceKernel> parsed = ir::parse_with_lines(read_input_file(file, kMaxIrFileBytes));
  if (!parsed.ok()) fail(make_error(ErrorCode::Parse, file + ":" + parsed.error().message));
  if (Result<void> valid = ir::verify(parsed->kernel); !valid.ok()) {
    const Error& e = valid.error();
    const bool has_line = e.op >= 0 && static_cast<std::size_t>(e.op) < parsed->lines.size();
    fail(make_error(ErrorCode::Verify, file + ":" + (has_line ? std::to_string(parsed->lines[e.op]) + ": " : " ") + e.message));
  }
  return std::move(parsed->kernel);
}

bool names_ir_file(const std::string& kernel_or_file) {
  std::error_code ec;
  return kernel_or_file.ends_with(".kir") || std::filesystem::is_regular_file(kernel_or_file, ec);
}

kernels::StandardKernel ir_file_kernel(const std::string& file, const std::vector<std::string>& scalars) {
  kernels::StandardKernel k;
  k.name = file;
  k.kernel = read_ir_file(file);
  Result<std::vector<kernels::ArgSpec>> args = kernels::args_of(k.kernel, scalar_values(k.kernel, file, scalars));
  if (!args) fail(args.error());
  k.args = std::move(args).value();
  k.dtype = ir::DType::Invalid;
  for (const kernels::ArgSpec& arg : k.args) {
    if (arg.role == kernels::ArgRole::Scalar) continue;
    k.bytes += static_cast<double>(arg.elements * ir::dtype_bytes(arg.dtype));
    if (arg.role == kernels::ArgRole::Output && k.dtype == ir::DType::Invalid) k.dtype = arg.dtype;
  }
  if (k.dtype == ir::DType::Invalid) throw CommandFailed(file + ": the kernel has no global_mut param, nothing to check");
  k.tolerance = kernels::tolerance(k.dtype, kAssumedReduction);
  k.dtypes = {k.dtype};
  k.reference = [kernel = k.kernel, args = k.args](std::span<const kernels::HostBuffer> inputs,
                                                   std::span<kernels::HostBuffer> outputs) {
    std::vector<kernels::HostBuffer> in(inputs.begin(), inputs.end());  // the interpreter takes mutable pointers
    const std::vector<kiln_arg> wire_args = interpreter_args(args, in, outputs);
    try {
      const std::vector<kiln_op> wire = kernel.to_wire();
      sdk::InterpretedProgram(wire).run(wire_args);
    } catch (const sdk::PluginError& e) {
      throw CommandFailed(std::string("the interpreter (the reference) failed: ") + e.what());
    }
  };
  return k;
}

}  // namespace kiln::cli
