#include "fuzz_bodies.hpp"

#include "kiln/ir/hash.hpp"
#include "kiln/ir/kernel.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/runtime/config.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <cstring>
#include <random>
#include <vector>

namespace kiln::fuzz {

namespace {

std::string_view as_text(Bytes input) { return {reinterpret_cast<const char*>(input.data()), input.size()}; }

std::vector<kiln_op> as_ops(Bytes input) {
  std::vector<kiln_op> ops(input.size() / sizeof(kiln_op));
  if (!ops.empty()) std::memcpy(ops.data(), input.data(), ops.size() * sizeof(kiln_op));
  return ops;
}

// Buffers of at most this many elements are allocated for a run; a kernel
// with a larger (or unsized) buffer is verified and validated but not run.
constexpr std::uint64_t kMaxRunElements = 4096;
// Ops a run may execute: small enough that every input takes milliseconds.
constexpr std::uint64_t kRunOpBudget = 200'000;

// Random (seeded by the kernel) contents for every PARAM, then one run.
// Faults the interpreter reports (PluginError) are expected outcomes.
void run_on_small_buffers(const sdk::InterpretedProgram& program, std::span<const kiln_op> ops) {
  std::vector<kiln_arg> args(program.param_count());
  std::vector<std::vector<std::uint8_t>> storage(args.size());
  std::vector<bool> bound(args.size(), false);
  std::mt19937_64 rng(ops.size());
  for (const kiln_op& op : ops) {
    if (op.kind != KILN_OP_PARAM || op.attr >= args.size() || bound[op.attr]) continue;
    bound[op.attr] = true;
    if (op.code == KILN_PARAM_VARIABLE) {
      args[op.attr] = sdk::scalar_arg(static_cast<kiln_dtype>(op.dtype), rng() % 64);
      continue;
    }
    if (op.imm == 0 || op.imm > kMaxRunElements || !sdk::dtype_valid(op.dtype)) return;
    std::vector<std::uint8_t>& bytes = storage[op.attr];
    bytes.resize(op.imm * sdk::dtype_bytes(op.dtype));
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng());
    args[op.attr] = sdk::host_buffer_arg(bytes.data(), bytes.size());
  }
  for (bool b : bound)
    if (!b) return;
  sdk::RunOptions options;
  options.max_ops = kRunOpBudget;
  try {
    (void)program.run(args, options);
  } catch (const sdk::PluginError&) {
  }
}

// Makes 32 arbitrary bytes per op into ops the verifier has a chance to
// accept, without changing ops that already make sense (so the wire form of
// real kernels is a good seed): operands point to earlier ops, sizes are
// small, reserved is zero.
void make_plausible(std::vector<kiln_op>& ops) {
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    kiln_op& op = ops[i];
    op.kind %= KILN_OP_KIND_COUNT;
    op.dtype %= KILN_DTYPE_COUNT;
    if (op.lanes == 0 || op.lanes > KILN_MAX_LANES) op.lanes = 1;
    op.reserved = 0;
    for (std::uint32_t& src : op.src)
      if (src != KILN_NO_OPERAND && src >= i) src = i == 0 ? KILN_NO_OPERAND : src % i;
    if ((op.kind == KILN_OP_PARAM || op.kind == KILN_OP_STORAGE) && op.imm > kMaxRunElements)
      op.imm = op.imm % kMaxRunElements + 1;
    if (op.kind == KILN_OP_PARAM) op.attr %= 8;
  }
}

}  // namespace

std::string config_input(Bytes input) {
  const std::filesystem::path file = "fuzz/config.json";
  const Result<Config> config = parse_config(as_text(input), file);
  if (!config.ok() && !config.error().message.starts_with(file.string()))
    return "a config error without the file's name: " + config.error().message;
  return {};
}

std::string ir_parse_input(Bytes input) {
  const auto result = ir::parse(as_text(input));
  if (!result.ok()) return {};
  const std::string printed = ir::print(*result);
  const auto again = ir::parse(printed);
  if (!again.ok()) return "a printed kernel does not parse: " + again.error().message + "\n" + printed;
  if (!(*again == *result)) return "print/parse round trip differs:\n" + printed;
  (void)ir::verify_all(*result);
  (void)ir::hash(*result);
  return {};
}

std::string kernel_run_input(Bytes input) {
  std::vector<kiln_op> ops = as_ops(input);
  if (ops.empty()) return {};
  make_plausible(ops);
  const ir::Kernel kernel = ir::Kernel::from_wire(ops);
  if (!ir::verify(kernel).ok()) return {};
  // The host hands plugins only verified kernels: the reference
  // interpreter (the oracle every plugin is checked against) must take them.
  const std::vector<kiln_op> wire = kernel.to_wire();
  try {
    const sdk::InterpretedProgram program(wire);
    run_on_small_buffers(program, wire);
  } catch (const sdk::PluginError& e) {
    return std::string("a verified kernel is refused by the interpreter: ") + e.what() + "\n" + ir::print(kernel);
  }
  return {};
}

std::string wire_input(Bytes input) {
  const std::vector<kiln_op> ops = as_ops(input);
  try {
    const sdk::InterpretedProgram program(ops);
    run_on_small_buffers(program, ops);
  } catch (const sdk::PluginError&) {
    return {};  // refused by the structure checks every plugin relies on
  }
  for (const sdk::Dialect* dialect :
       {&sdk::c_dialect(), &sdk::opencl_dialect(), &sdk::cuda_dialect(), &sdk::glsl_dialect()}) {
    try {
      (void)sdk::emit_c_family(ops, *dialect);
    } catch (const sdk::PluginError&) {
    }
  }
  return {};
}

Body body_named(std::string_view target) {
  if (target == "config") return config_input;
  if (target == "ir_parse") return ir_parse_input;
  if (target == "kernel_run") return kernel_run_input;
  if (target == "wire") return wire_input;
  return nullptr;
}

}  // namespace kiln::fuzz
