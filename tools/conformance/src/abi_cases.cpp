// The kit's ABI cases: what a device says of itself, a buffer's round trip
// (the device and memory cases are memory_cases.cpp's), and small
// kernels the core's standard library does not build (f16/bf16 rounding
// after each op, integer wrap and shifts, vectors, a minimal add that any
// device that compiles at all can run), each compared with the interpreter.
#include "cases.hpp"

#include <kiln/conformance/capabilities.hpp>
#include <kiln/conformance/wire_builder.hpp>

#include <kiln/sdk/wire.hpp>

#include <cstring>
#include <random>

namespace kiln::conformance::detail {

namespace {

HostArg random_floats(std::uint8_t dt, std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  return random_arg(dt, n, rng, lo, hi);
}

// Every rule of kiln_device_info the kit can check, all problems at once.
Verdict device_info(const Target& t) {
  const kiln_device_info& info = t.info;
  Problems problems;
  const auto expect = [&](bool ok, const std::string& what) { problems.expect(ok, what); };
  expect(std::strlen(info.name) > 0, "name is empty");
  expect(info.max_local_threads >= 1, "max_local_threads is 0");
  expect(info.warp_size >= 1, "warp_size is 0");
  expect((info.vector_widths & (1u << 1)) != 0, "vector_widths lacks bit 1 (scalars)");
  expect(info.dtype_ops[KILN_DTYPE_INVALID] == 0, "dtype_ops[INVALID] is not 0");
  if (info.flags & KILN_DEVICE_HOST_MEMORY)
    expect(t.plugin.api().buffer_host_pointer != nullptr, "HOST_MEMORY device without buffer_host_pointer");
  if (info.flags & KILN_DEVICE_CAN_COMPILE) {
    const std::string missing = missing_kernel_functions(t.plugin.api());
    expect(missing.empty(), "CAN_COMPILE device, but the table has no " + missing);
  }
  return problems.verdict();
}

Verdict buffers_round_trip(const Target& t) {
  std::vector<std::uint8_t> in(1000), out(1000, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 3);
  kiln_buffer* b = t.plugin.alloc(t.device, in.size());
  try {
    t.plugin.write(t.device, b, in.data(), in.size());
    t.plugin.read(t.device, b, out.data(), out.size());
  } catch (...) {
    t.plugin.api().buffer_free(t.device, b);
    throw;
  }
  t.plugin.api().buffer_free(t.device, b);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i] != out[i])
      return Verdict::fail("byte " + std::to_string(i) + " of 1000 read back as " + std::to_string(out[i]) +
                           ", written as " + std::to_string(in[i]));
  return Verdict::pass();
}

// c[i] = a[i] + b[i] over n elements, one group axis, no IF, no local
// threads.
std::vector<kiln_op> add_kernel(std::int64_t n) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, n);
  auto i = w.group_index(0, w.const_i64(n));
  w.store(KILN_DTYPE_F32, c, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i), w.load(KILN_DTYPE_F32, b, i)));
  return w.ops;
}

std::vector<HostArg> add_args(std::int64_t n, std::uint64_t seed) {
  return {random_floats(KILN_DTYPE_F32, n, seed), random_floats(KILN_DTYPE_F32, n, seed + 1),
          HostArg::poisoned(KILN_DTYPE_F32, n)};
}

// The add kernel: the smallest kernel a compiling device must get right.
Verdict elementwise_add(const Target& t) {
  if (!has_binary(t.info, KILN_DTYPE_F32, KILN_BINARY_ADD)) return Verdict::unsupported("the device has no f32 add");
  return matches_interpreter(t, add_kernel(256), add_args(256, 1), 2, Tolerance{});
}

// What plugin.h has launch, launch_timed and compile refuse
// (INVALID_ARGUMENT): fewer arguments than params, a scalar for a buffer, a
// buffer smaller than its param, repeats of 0, a NULL kernel; and
// program_release(NULL) is a no-op. The add kernel launched right after
// them still adds.
Verdict launch_errors(const Target& t) {
  if (!has_binary(t.info, KILN_DTYPE_F32, KILN_BINARY_ADD)) return Verdict::unsupported("the device has no f32 add");
  if (auto v = cannot_run_kernels(t)) return *v;
  const kiln_plugin_api& api = t.plugin.api();
  constexpr std::int64_t n = 256;
  const std::vector<kiln_op> ops = add_kernel(n);
  std::vector<HostArg> args = add_args(n, 3);
  const std::vector<HostArg> want = interpreted(ops, args);
  const ProgramHandle program(t.plugin, t.plugin.compile(t.device, ops));
  const DeviceArgs bound(t.plugin, t.device, args, t.index);
  const kiln_launch_args right = launch_args(ops, t.device, program.get(), bound.abi());
  auto launch_with = [&](std::vector<kiln_arg> changed) {
    kiln_launch_args l = right;
    l.args = changed.data();
    l.n_args = changed.size();
    check(api.launch(&l));
    t.plugin.wait(l.event);
  };
  Problems problems;
  problems.expect_invalid([&] { launch_with({bound.abi().begin(), bound.abi().begin() + 2}); },
                          "launch with 2 arguments for 3 params");
  std::vector<kiln_arg> scalar = bound.abi();
  scalar[0] = kiln_arg{};
  scalar[0].kind = KILN_ARG_SCALAR;
  scalar[0].dtype = KILN_DTYPE_F32;
  problems.expect_invalid([&] { launch_with(scalar); }, "launch with a scalar for buffer param 0");
  std::vector<kiln_arg> small = bound.abi();
  small[2].bytes = 4;
  problems.expect_invalid([&] { launch_with(small); }, "launch binding 4 bytes to param 2, which uses 1024");
  if (api.launch_timed != nullptr) {
    kiln_timed_launch_args timed{};
    timed.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
    static_assert(sizeof timed.launch == KILN_LAUNCH_ARGS_STRUCT_SIZE, "1.0's launch is a prefix of 1.1's");
    std::memcpy(&timed.launch, &right, sizeof timed.launch);
    timed.launch.struct_size = sizeof timed.launch;
    timed.launch_args = &right;
    timed.repeats = 0;
    problems.expect_invalid([&] { check(api.launch_timed(&timed)); }, "launch_timed with repeats 0");
  }
  kiln_compile_args compile{};
  compile.struct_size = KILN_COMPILE_ARGS_STRUCT_SIZE;
  compile.device = t.device;
  compile.failed_op = -1;
  problems.expect_invalid([&] { check(api.compile(&compile)); }, "compile of a NULL kernel");
  api.program_release(nullptr);
  launch_and_wait(t.plugin, ops, t.device, program.get(), bound.abi());
  bound.read_back(args);
  if (auto problem = difference("output after the refused launches", args[2], want[2], Tolerance{}))
    problems.expect(false, *problem);
  return problems.verdict();
}

// f16 and bf16 add and multiply, rounded to nearest even after each op: exact.
Verdict half_precision(const Target& t) {
  bool ran = false;
  for (std::uint8_t dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    if (!has_binary(t.info, dt, KILN_BINARY_ADD) || !has_binary(t.info, dt, KILN_BINARY_MUL)) continue;
    const std::int64_t n = 512;
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
    auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, n);
    auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, n);
    auto i = w.group_index(0, w.const_i64(n));
    auto x = w.load(dt, a, i), y = w.load(dt, b, i);
    w.store(dt, c, i, w.binary(KILN_BINARY_MUL, dt, w.binary(KILN_BINARY_ADD, dt, x, y), y));
    Verdict v = matches_interpreter(t, w.ops, {random_floats(dt, n, 7, -8, 8), random_floats(dt, n, 8, -8, 8), HostArg::poisoned(dt, n)},
                                    2, Tolerance{});
    if (v.status != CaseStatus::passed) {
      v.reason = std::string(sdk::dtype_name(dt)) + ": " + v.reason;
      return v;
    }
    ran = true;
  }
  return ran ? Verdict::pass() : Verdict::unsupported("the device has no f16 or bf16 add and mul");
}

// Integer arithmetic wraps; shifts take the count mod the width.
Verdict integer_wrap(const Target& t) {
  for (unsigned op : {KILN_BINARY_MUL, KILN_BINARY_BIT_XOR, KILN_BINARY_SHR})
    if (!has_binary(t.info, KILN_DTYPE_I32, op))
      return Verdict::unsupported("the device has no i32 " + std::string(sdk::binary_name(op)));
  const std::int64_t n = 256;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, n);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 1, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 2, n);
  auto i = w.group_index(0, w.const_i64(n));
  auto x = w.load(KILN_DTYPE_I32, a, i), y = w.load(KILN_DTYPE_I32, b, i);
  auto prod = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I32, x, y);
  w.store(KILN_DTYPE_I32, c, i,
          w.binary(KILN_BINARY_BIT_XOR, KILN_DTYPE_I32, prod, w.binary(KILN_BINARY_SHR, KILN_DTYPE_I32, x, y)));
  std::mt19937_64 rng(9);
  return matches_interpreter(t, w.ops,
                             {random_arg(KILN_DTYPE_I32, n, rng), random_arg(KILN_DTYPE_I32, n, rng),
                              HostArg::poisoned(KILN_DTYPE_I32, n)},
                             2, Tolerance{});
}

// Vector loads, MAD and stores, at the widest width the device offers (up to 8).
Verdict vector_mad(const Target& t) {
  std::uint8_t lanes = 1;
  for (std::uint8_t l : {2, 4, 8})
    if (t.info.vector_widths & (1u << l)) lanes = l;
  if (lanes == 1) return Verdict::unsupported("the device has no vector widths");
  if (!has_dtype(t.info, KILN_DTYPE_F32)) return Verdict::unsupported("the device has no f32");
  const std::int64_t n = 1024;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  auto g = w.group_index(0, w.const_i64(n / lanes));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  auto x = w.load(KILN_DTYPE_F32, a, i, lanes);
  auto half = w.broadcast(KILN_DTYPE_F32, w.const_f32(0.5f), lanes);
  w.store(KILN_DTYPE_F32, c, i, w.mad(KILN_DTYPE_F32, x, half, x, lanes), lanes);
  Verdict v = matches_interpreter(t, w.ops, {random_floats(KILN_DTYPE_F32, n, 10), HostArg::poisoned(KILN_DTYPE_F32, n)},
                                  1, Tolerance{1e-6, 0, 0});
  if (v.status != CaseStatus::passed) v.reason = "x" + std::to_string(lanes) + ": " + v.reason;
  return v;
}

}  // namespace

std::optional<Verdict> cannot_run_kernels(const Target& target) {
  const std::string missing = missing_kernel_functions(target.plugin.api());
  if (missing.empty()) return std::nullopt;
  return Verdict::unsupported("the plugin table has no " + missing);
}

Verdict matches_interpreter(const Target& target, const std::vector<kiln_op>& ops, std::vector<HostArg> args,
                            std::size_t out_slot, const Tolerance& tolerance) {
  if (auto v = cannot_run_kernels(target)) return *v;
  const std::vector<HostArg> want = interpreted(ops, args);
  run_kernel(target.plugin, target.device, ops, args);
  if (auto problem = difference("output", args[out_slot], want[out_slot], tolerance)) return Verdict::fail(*problem);
  return Verdict::pass();
}

std::vector<Case> abi_cases(const kiln_device_info&) {
  return {
      {"device info", device_info},
      {"device basics", device_basics},
      {"buffers round trip", buffers_round_trip},
      {"buffer and copy errors", buffer_errors},
      {"device-to-device copies", device_copies},
      {"elementwise add f32", elementwise_add},
      {"launch errors", launch_errors},
      {"half precision arithmetic is exact", half_precision},
      {"integer wrap and shifts", integer_wrap},
      {"vector mad f32", vector_mad},
  };
}

}  // namespace kiln::conformance::detail
