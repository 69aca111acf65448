// The ABI 1.1 math ops (TANH ERF SIGMOID RSQRT LOG1P EXPM1) in one kernel:
// out_k[i] = op_k(in_k[i]) for the six ops, inputs of mixed magnitudes in
// each op's domain (never zeros only), run on the reference interpreter or a
// runtime device, and the error in units of the dtype's last place. Shared
// by lower_math_test.cpp and math_devices_test.cpp.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"

#include <kiln/runtime.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kiln::passes::test {

inline constexpr ir::UnaryOp kMathOps[] = {ir::UnaryOp::Tanh,  ir::UnaryOp::Erf,   ir::UnaryOp::Sigmoid,
                                           ir::UnaryOp::Rsqrt, ir::UnaryOp::Log1p, ir::UnaryOp::Expm1};
inline constexpr std::size_t kMathOpCount = std::size(kMathOps);

inline std::string op_name(ir::UnaryOp op) { return std::string(sdk::unary_name(static_cast<unsigned>(op))); }

// out_k[i] = op_k(in_k[i]), i < n: params in_0..in_5 then out_0..out_5.
inline ir::Kernel math_kernel(ir::DType dt, std::int64_t n, std::span<const ir::UnaryOp> ops = kMathOps) {
  ir::Builder b;
  std::vector<ir::Value> in, out;
  for (std::size_t k = 0; k < ops.size(); ++k) in.push_back(b.param(ir::ParamKind::Global, dt, n));
  for (std::size_t k = 0; k < ops.size(); ++k) out.push_back(b.param(ir::ParamKind::GlobalMut, dt, n));
  const ir::Value i = b.group_index(0, n);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const ir::Value x = b.load(in[k], i);
    b.store(out[k], i, b.unary(ops[k], x));
  }
  return b.finish();
}

// n inputs for `op`: half of them 10^u for u uniform in [-7, 1.5] (near 0
// up to where tanh, erf and sigmoid saturate), half uniform in [-6, 6],
// both signs; log1p's stay above -1 and rsqrt's are positive. Every 16th
// element is one of the special values (signed zeros, 1, large values).
inline std::vector<double> math_inputs(ir::UnaryOp op, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 977 + static_cast<unsigned>(op));
  std::uniform_real_distribution<double> exponent(-7, 1.5), middle(-6, 6), unit(0, 1);
  const double specials[] = {-0.0, 0.0, 1.0, -1.0, 30.0, -30.0, 100.0, -100.0};
  std::vector<double> xs;
  for (std::size_t i = 0; i < n; ++i) {
    double x = i % 16 == 15 ? specials[(i / 16) % std::size(specials)]
               : i % 2 == 0 ? std::pow(10.0, exponent(rng)) * (unit(rng) < 0.5 ? -1 : 1)
                            : middle(rng);
    if (op == ir::UnaryOp::Rsqrt) x = std::fabs(x) + (x == 0 ? 1e-3 : 0);
    if (op == ir::UnaryOp::Log1p && x <= -1) x = -unit(rng) * 0.999;
    xs.push_back(x);
  }
  return xs;
}


// The value's bits in dtype `dt` (rounded to nearest even) and back.
inline std::uint64_t encode(ir::DType dt, double v) {
  switch (dt) {
    case ir::DType::F16: return sdk::f32_to_f16_bits(static_cast<float>(v));
    case ir::DType::BF16: return sdk::f32_to_bf16_bits(static_cast<float>(v));
    case ir::DType::F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<std::uint64_t>(v);
  }
}
inline double decode(ir::DType dt, std::uint64_t bits) {
  switch (dt) {
    case ir::DType::F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case ir::DType::BF16: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case ir::DType::F32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    default: return std::bit_cast<double>(bits);
  }
}

using Columns = std::vector<std::vector<double>>;  // [op][element]

inline std::vector<unsigned char> bytes_of(ir::DType dt, const std::vector<double>& values) {
  std::vector<unsigned char> out(values.size() * ir::dtype_bytes(dt));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t bits = encode(dt, values[i]);
    std::memcpy(out.data() + i * ir::dtype_bytes(dt), &bits, ir::dtype_bytes(dt));
  }
  return out;
}
inline std::vector<double> values_of(ir::DType dt, const std::vector<unsigned char>& bytes) {
  std::vector<double> out(bytes.size() / ir::dtype_bytes(dt));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * ir::dtype_bytes(dt), ir::dtype_bytes(dt));
    out[i] = decode(dt, bits);
  }
  return out;
}

// The kernel's outputs on the interpreter for `inputs` (one column per op).
inline Columns run_interpreter(const ir::Kernel& kernel, ir::DType dt, const Columns& inputs) {
  std::vector<std::vector<unsigned char>> memory;
  for (const auto& column : inputs) memory.push_back(bytes_of(dt, column));
  for (const auto& column : inputs) memory.emplace_back(column.size() * ir::dtype_bytes(dt));
  std::vector<kiln_arg> args;
  for (auto& m : memory) args.push_back(sdk::host_buffer_arg(m.data(), m.size()));
  const std::vector<kiln_op> wire = kernel.to_wire();
  sdk::InterpretedProgram program(wire);
  program.run(args);
  Columns out;
  for (std::size_t k = 0; k < inputs.size(); ++k) out.push_back(values_of(dt, memory[inputs.size() + k]));
  return out;
}

// The kernel's outputs on `device` (compiled by Device::compile, which
// lowers what the device does not claim), or the error.
inline Result<Columns> run_device(const Device& device, const ir::Kernel& kernel, ir::DType dt, const Columns& inputs) {
  KILN_TRY_ASSIGN(Program program, device.compile(kernel, {.mode = CompileMode::Frozen}));
  std::vector<Buffer> buffers;
  std::vector<LaunchArg> args;
  for (std::size_t pass = 0; pass < 2; ++pass)
    for (const auto& column : inputs) {
      KILN_TRY_ASSIGN(Buffer buffer, device.allocate(column.size() * ir::dtype_bytes(dt)));
      const std::vector<unsigned char> bytes =
          pass == 0 ? bytes_of(dt, column) : std::vector<unsigned char>(column.size() * ir::dtype_bytes(dt));
      KILN_TRY(buffer.write(std::as_bytes(std::span(bytes))));
      buffers.push_back(std::move(buffer));
    }
  for (const Buffer& buffer : buffers) args.push_back(LaunchArg::buffer(buffer));
  KILN_TRY_ASSIGN(Event done, device.launch(program, args));
  KILN_TRY(done.wait());
  Columns out;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    std::vector<unsigned char> bytes(inputs[k].size() * ir::dtype_bytes(dt));
    KILN_TRY(buffers[inputs.size() + k].read(std::as_writable_bytes(std::span(bytes))));
    out.push_back(values_of(dt, bytes));
  }
  return out;
}

// |got - want| in units of the last place of `want` in dtype dt (the place
// of the least normal value for subnormal and zero results). Equal values,
// both NaN or the same infinity are 0; a NaN or infinity against anything
// else is infinite.
inline double ulp_error(ir::DType dt, double got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (got == want) return 0;
  if (std::isinf(want) || std::isinf(got)) return INFINITY;
  int mantissa = 52, min_exp = -1022;
  switch (dt) {
    case ir::DType::F16: mantissa = 10, min_exp = -14; break;
    case ir::DType::BF16: mantissa = 7, min_exp = -126; break;
    case ir::DType::F32: mantissa = 23, min_exp = -126; break;
    default: break;
  }
  // A device may flush subnormal results to zero (GPUs, lavapipe).
  if (std::fabs(want) < std::ldexp(1.0, min_exp) && std::fabs(got) < std::ldexp(1.0, min_exp)) return 0;
  const int e = want == 0 ? min_exp : std::max(std::ilogb(want), min_exp);
  return std::fabs(got - want) / std::ldexp(1.0, e - mantissa);
}

struct Worst {
  double ulps = 0;
  double x = 0, got = 0, want = 0;
};

// The worst error over the elements, each less `allowance(x)` ulp (what an
// op's bound grows by with |x|; 0 for most).
template <class Allowance>
Worst worst_error(ir::DType dt, const std::vector<double>& xs, const std::vector<double>& got,
                  const std::vector<double>& want, Allowance allowance) {
  Worst w;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::max(0.0, ulp_error(dt, got[i], want[i]) - allowance(xs[i]));
    if (!(e <= w.ulps)) w = {e, decode(dt, encode(dt, xs[i])), got[i], want[i]};
  }
  return w;
}
inline Worst worst_error(ir::DType dt, const std::vector<double>& xs, const std::vector<double>& got,
                         const std::vector<double>& want) {
  return worst_error(dt, xs, got, want, [](double) { return 0.0; });
}

inline std::string describe(ir::UnaryOp op, const Worst& w) {
  return op_name(op) + ": " + std::to_string(w.ulps) + " ulp (beyond any allowance) at x = " + std::to_string(w.x) + " (got " +
         std::to_string(w.got) + ", interpreter " + std::to_string(w.want) + ")";
}

}  // namespace kiln::passes::test
