// Compile for the dummy: the interpreter's structural validation, then the
// device's limits (dtypes and ops it supports, vector widths, LOCAL sizes and
// LOCAL memory); the program is the pre-decoded kernel.
#include "dummy.hpp"
#include "kiln/sdk/plugin_entry.hpp"

#include <kiln/sdk/capabilities.hpp>
#include "kiln/sdk/launch_args.hpp"
#include "kiln/sdk/listing.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::dummy {

namespace {

[[noreturn]] void unsupported(const Device& device, std::uint32_t id, const kiln_op& op, const std::string& what) {
  sdk::fail(KILN_STATUS_UNSUPPORTED,
            "op " + std::to_string(id) + " (" + std::string(sdk::op_kind_name(op.kind)) + "): " + what +
                " on device '" + device.config.info.name + "'",
            id);
}

// Checks what the interpreter accepts against what this device has.
void check_device_limits(const Device& device, std::span<const kiln_op> ops) {
  const kiln_device_info& info = device.config.info;
  std::uint64_t local_bytes = 0;
  std::uint64_t threads = 1;
  for (std::uint32_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    const bool typed = sdk::has_result(op.kind) || op.kind == KILN_OP_STORE;
    if (typed && op.kind != KILN_OP_LOOP && op.kind != KILN_OP_INDEX && !sdk::has_op_kind(info, op.dtype, op.kind))
      unsupported(device, id, op,
                  sdk::has_dtype(info, op.dtype)
                      ? std::string(sdk::op_kind_name(op.kind)) + " on " + std::string(sdk::dtype_name(op.dtype)) +
                            " is not supported"
                      : "dtype " + std::string(sdk::dtype_name(op.dtype)) + " is not supported");
    if (typed && op.lanes > 1 && (info.vector_widths & (1u << op.lanes)) == 0)
      unsupported(device, id, op, std::to_string(op.lanes) + "-lane vectors are not supported");
    auto need = [&](bool has, unsigned dtype, std::string_view name) {
      if (!has)
        unsupported(device, id, op, std::string(name) + " on " + std::string(sdk::dtype_name(dtype)) + " is not supported");
    };
    switch (op.kind) {
      case KILN_OP_UNARY:
        need(sdk::has_unary(info, op.dtype, op.code), op.dtype, sdk::unary_name(op.code));
        break;
      case KILN_OP_BINARY: {
        const unsigned operand = ops[op.src[0]].dtype;
        need(sdk::has_binary(info, operand, op.code), operand, sdk::binary_name(op.code));
        break;
      }
      case KILN_OP_MAD:  // no capability of its own: a multiply and an add
        need(sdk::has_binary(info, op.dtype, KILN_BINARY_MUL), op.dtype, "mad (mul)");
        need(sdk::has_binary(info, op.dtype, KILN_BINARY_ADD), op.dtype, "mad (add)");
        break;
      case KILN_OP_SUBGROUP_REDUCE:  // plugin.h: subgroups of up to warp_size
        if (op.attr > info.warp_size)
          unsupported(device, id, op, "subgroups of " + std::to_string(op.attr) + " threads exceed warp_size " +
                                          std::to_string(info.warp_size));
        break;
      case KILN_OP_INDEX:
        if (op.code == KILN_SCOPE_LOCAL) {
          const std::uint64_t len = ops[op.src[0]].imm;
          if (len > info.max_local_dims[op.attr])
            unsupported(device, id, op, "LOCAL length " + std::to_string(len) + " on axis " + std::to_string(op.attr) +
                                            " exceeds max_local_dims " + std::to_string(info.max_local_dims[op.attr]));
          threads *= len;
          if (threads > info.max_local_threads)
            unsupported(device, id, op, std::to_string(threads) + " threads per group exceed max_local_threads " +
                                            std::to_string(info.max_local_threads));
        }
        break;
      case KILN_OP_STORAGE:
        if (op.code == KILN_SCOPE_LOCAL) {
          local_bytes += op.imm * sdk::dtype_bytes(op.dtype);
          if (local_bytes > info.local_memory_bytes)
            unsupported(device, id, op, std::to_string(local_bytes) + " bytes of LOCAL storage exceed local_memory_bytes " +
                                            std::to_string(info.local_memory_bytes));
        }
        break;
      default:
        break;
    }
  }
}


kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    Device& device = device_of(args.device);
    const std::span<const kiln_op> ops = sdk::kernel_ops(args.kernel);
    sdk::InterpretedProgram interpreted(ops);  // structural validation
    check_device_limits(device, ops);
    // Braces, not make_unique: clang 14 (the sanitizer build) lacks C++20's
    // parenthesized aggregate initialization.
    auto program = std::unique_ptr<Program>(new Program{&device, std::move(interpreted), sdk::wire_listing(ops),
                                                        hash_bytes(ops.data(), ops.size_bytes())});
    args.program = reinterpret_cast<kiln_program*>(program.release());
    args.failed_op = -1;
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::answer_program_source(raw, "program_source", [](kiln_program* program) {
    return sdk::ProgramText{"kiln-ir", reinterpret_cast<const Program*>(program)->listing};
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

}  // namespace

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::dummy
