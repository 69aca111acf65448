// kiln_kernel_from_text / print / params: kernels in the IR text form and
// what their launch arguments are.
#include "capi/handles.hpp"

#include <kiln/ir/text.hpp>
#include <kiln/ir/verify.hpp>

#include <algorithm>
#include <cstring>

using kiln::capi::check_struct;
using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

namespace {

// The PARAM ops of a kernel, by slot (nullptr where a slot is missing).
std::vector<const kiln::ir::Op*> params_by_slot(const kiln::ir::Kernel& kernel) {
  std::vector<const kiln::ir::Op*> slots;
  for (const kiln::ir::Op& op : kernel.ops) {
    if (op.kind != kiln::ir::OpKind::Param) continue;
    if (op.attr >= slots.size()) slots.resize(op.attr + 1, nullptr);
    slots[op.attr] = &op;
  }
  return slots;
}

}  // namespace

extern "C" {

kiln_status_t* kiln_kernel_from_text(const char* text, size_t len, kiln_kernel_t** out) {
  return guard("kiln_kernel_from_text", [&]() -> kiln_status_t* {
    if (out == nullptr) return null_argument("kiln_kernel_from_text", "out");
    if (text == nullptr && len > 0) return null_argument("kiln_kernel_from_text", "text");
    kiln::Result<kiln::ir::SourceKernel> parsed = kiln::ir::parse_with_lines(std::string_view(text ? text : "", len));
    if (!parsed) return make_status(parsed.error());
    kiln::Result<void> verified = kiln::ir::verify(parsed->kernel);
    if (!verified) {
      kiln::Error error = verified.error();
      const std::int64_t op = error.op;
      std::uint32_t line = 0;
      if (op >= 0 && static_cast<std::size_t>(op) < parsed->lines.size()) line = parsed->lines[op];
      if (line > 0) error.message = "line " + std::to_string(line) + ": " + error.message;
      kiln_status_t* status = make_status(error);
      status->line = line;
      return status;
    }
    *out = new kiln_kernel_t{std::move(parsed->kernel)};
    return nullptr;
  });
}

void kiln_kernel_free(kiln_kernel_t* kernel) { delete kernel; }

kiln_status_t* kiln_kernel_print(const kiln_kernel_t* kernel, char** text) {
  return guard("kiln_kernel_print", [&]() -> kiln_status_t* {
    if (kernel == nullptr) return null_argument("kiln_kernel_print", "kernel");
    if (text == nullptr) return null_argument("kiln_kernel_print", "text");
    *text = kiln::capi::copy_string(kiln::ir::print(kernel->kernel));
    return nullptr;
  });
}

size_t kiln_kernel_op_count(const kiln_kernel_t* kernel) { return kernel ? kernel->kernel.size() : 0; }

kiln_status_t* kiln_kernel_param_count(const kiln_kernel_t* kernel, size_t* count) {
  return guard("kiln_kernel_param_count", [&]() -> kiln_status_t* {
    if (kernel == nullptr) return null_argument("kiln_kernel_param_count", "kernel");
    if (count == nullptr) return null_argument("kiln_kernel_param_count", "count");
    *count = params_by_slot(kernel->kernel).size();
    return nullptr;
  });
}

kiln_status_t* kiln_kernel_param(const kiln_kernel_t* kernel, size_t slot, kiln_param_info_t* info) {
  return guard("kiln_kernel_param", [&]() -> kiln_status_t* {
    if (kernel == nullptr) return null_argument("kiln_kernel_param", "kernel");
    if (kiln_status_t* s = check_struct("kiln_kernel_param", info, info ? info->struct_size : 0, KILN_PARAM_INFO_T_SIZE))
      return s;
    const std::vector<const kiln::ir::Op*> slots = params_by_slot(kernel->kernel);
    if (slot >= slots.size() || slots[slot] == nullptr)
      return make_status(KILN_CODE_INVALID_ARGUMENT, "kiln_kernel_param: the kernel has no param in slot " +
                                                         std::to_string(slot) + " (it has " +
                                                         std::to_string(slots.size()) + " slots)");
    const kiln::ir::Op& op = *slots[slot];
    info->kind = op.code;
    info->dtype = static_cast<uint32_t>(op.dtype);
    info->elements = op.imm;
    return nullptr;
  });
}

}  // extern "C"
