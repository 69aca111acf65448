// Helpers for the interpreter tests: typed host buffers as launch arguments,
// random inputs, and "expect this to fail with that message at that op".
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kiln/sdk/interpreter.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "support/wire_builder.hpp"

namespace kiln::test {

using Id = WireBuilder::Id;

// A buffer of raw bytes for `n` elements of a dtype.
struct Buffer {
  unsigned dtype;
  std::vector<unsigned char> bytes;

  Buffer(unsigned dt, std::size_t n) : dtype(dt), bytes(n * sdk::dtype_bytes(dt)) {}
  std::size_t size() const { return bytes.size() / sdk::dtype_bytes(dtype); }
  kiln_arg arg() { return sdk::host_buffer_arg(bytes.data(), bytes.size()); }

  // Element i as zero-extended bits.
  std::uint64_t bits(std::size_t i) const {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i * sdk::dtype_bytes(dtype), sdk::dtype_bytes(dtype));
    return v;
  }
  void set_bits(std::size_t i, std::uint64_t v) {
    std::memcpy(bytes.data() + i * sdk::dtype_bytes(dtype), &v, sdk::dtype_bytes(dtype));
  }
  template <class T>
  T get(std::size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void set(std::size_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
};

inline std::vector<kiln_arg> args_of(std::vector<Buffer*> buffers) {
  std::vector<kiln_arg> args;
  for (Buffer* b : buffers) args.push_back(b->arg());
  return args;
}

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline kiln_arg arg_of(std::vector<float>& v) { return sdk::host_buffer_arg(std::span(v)); }
inline kiln_arg arg_of(std::vector<double>& v) { return sdk::host_buffer_arg(std::span(v)); }
inline kiln_arg arg_of(std::vector<std::int32_t>& v) { return sdk::host_buffer_arg(std::span(v)); }
inline kiln_arg arg_of(std::vector<std::int64_t>& v) { return sdk::host_buffer_arg(std::span(v)); }

inline kiln_arg i64_arg(std::int64_t v) { return sdk::scalar_arg(KILN_DTYPE_I64, static_cast<std::uint64_t>(v)); }

// Runs and returns the statistics; fails the test on an error.
inline sdk::ExecStats run_ok(const std::vector<kiln_op>& ops, std::vector<kiln_arg> args,
                             const sdk::RunOptions& options = {}) {
  try {
    sdk::InterpretedProgram program(ops);
    return program.run(args, options);
  } catch (const sdk::PluginError& e) {
    ADD_FAILURE() << "unexpected error: " << e.what();
    return {};
  }
}

// Expects building or running to fail with `status`, a message containing
// `fragment`, and failed_op == op (unless op is -2).
inline void expect_error(const std::function<void()>& body, kiln_status status, const std::string& fragment,
                         std::int64_t op = -2) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const sdk::PluginError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
    if (op != -2) {
      EXPECT_EQ(e.failed_op(), op) << e.what();
    }
  }
}

inline void expect_invalid(const std::vector<kiln_op>& ops, const std::string& fragment, std::int64_t op = -2) {
  expect_error([&] { sdk::InterpretedProgram program(ops); }, KILN_STATUS_INVALID_ARGUMENT, fragment, op);
}

inline void expect_fault(const std::vector<kiln_op>& ops, std::vector<kiln_arg> args, const std::string& fragment,
                         std::int64_t op = -2, const sdk::RunOptions& options = {}) {
  expect_error([&] { sdk::InterpretedProgram(ops).run(args, options); }, KILN_STATUS_LAUNCH_FAILED, fragment, op);
}

// out[i] = f(in_0[i], ..., in_k[i]) for i < n, one thread per element on
// GROUP axis 0. `body` gets the loaded inputs and returns the value to store.
inline std::vector<kiln_op> map_kernel(std::size_t n, const std::vector<unsigned>& in_dtypes, unsigned out_dtype,
                                       const std::function<Id(WireBuilder&, const std::vector<Id>&)>& body) {
  WireBuilder w;
  std::vector<Id> params;
  std::uint32_t slot = 0;
  for (unsigned dt : in_dtypes)
    params.push_back(w.param(KILN_PARAM_GLOBAL, static_cast<std::uint8_t>(dt), slot++, n));
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, static_cast<std::uint8_t>(out_dtype), slot, n);
  const Id i = w.group_index(0, w.const_i64(static_cast<std::int64_t>(n)));
  std::vector<Id> loaded;
  for (std::size_t k = 0; k < params.size(); ++k)
    loaded.push_back(w.load(static_cast<std::uint8_t>(in_dtypes[k]), params[k], i));
  w.store(static_cast<std::uint8_t>(out_dtype), out, i, body(w, loaded));
  return w.ops;
}

}  // namespace kiln::test
