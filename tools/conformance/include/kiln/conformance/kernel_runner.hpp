// kiln/conformance/kernel_runner.hpp - the one runner of plugin tests: a
// hand-built wire kernel on a plugin through the ABI test host (compile,
// allocate and fill buffers, launch with the grid the host would compute,
// read every buffer back), the same kernel on the SDK's reference
// interpreter, and the comparison of the two.
//
// The interpreter is the oracle (docs/architecture.md): plugin tests never
// re-implement IR semantics on the host. The one independent reference,
// which checks the interpreter itself, is tests/sdk/interp_reference.hpp.
#pragma once

#include <kiln/conformance/abi_host.hpp>

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::conformance {

// ------------------------------------------------------------ host values --

// A float element's value (f16/bf16/f32/f64 bits -> double).
inline double float_value(unsigned dt, std::uint64_t bits) {
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case KILN_DTYPE_F64: return std::bit_cast<double>(bits);
    case KILN_DTYPE_F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    default: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
  }
}

// The bits of `v` in float dtype `dt` (f16/bf16 rounded from f32).
inline std::uint64_t float_bits(unsigned dt, double v) {
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case KILN_DTYPE_F64: return std::bit_cast<std::uint64_t>(v);
    case KILN_DTYPE_F16: return sdk::f32_to_f16_bits(static_cast<float>(v));
    default: return sdk::f32_to_bf16_bits(static_cast<float>(v));
  }
}

// Integer bits truncated to dt's width (bool: 0 or 1).
inline std::uint64_t int_bits(unsigned dt, std::uint64_t v) {
  if (dt == KILN_DTYPE_BOOL) return v & 1;
  const unsigned bits = sdk::dtype_bytes(dt) * 8;
  return bits >= 64 ? v : v & ((std::uint64_t{1} << bits) - 1);
}

// An element for messages: the value, and the bits of half floats.
inline std::string show_value(unsigned dt, std::uint64_t bits) {
  if (!sdk::dtype_is_float(dt)) return std::to_string(sdk::int_from_bits(bits, dt));
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", float_value(dt, bits));
  if (sdk::dtype_bytes(dt) == 2) return std::string(text) + " (0x" + std::to_string(bits) + ")";
  return text;
}

// The dtype a C++ element type stores as (uint16_t: u16, not f16).
template <class T>
constexpr std::uint8_t dtype_of() {
  if constexpr (std::is_same_v<T, float>) return KILN_DTYPE_F32;
  else if constexpr (std::is_same_v<T, double>) return KILN_DTYPE_F64;
  else if constexpr (std::is_same_v<T, bool>) return KILN_DTYPE_BOOL;
  else {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
    constexpr std::uint8_t kSigned[] = {KILN_DTYPE_I8, KILN_DTYPE_I16, 0, KILN_DTYPE_I32, 0, 0, 0, KILN_DTYPE_I64};
    constexpr std::uint8_t kUnsigned[] = {KILN_DTYPE_U8, KILN_DTYPE_U16, 0, KILN_DTYPE_U32, 0, 0, 0, KILN_DTYPE_U64};
    return std::is_signed_v<T> ? kSigned[sizeof(T) - 1] : kUnsigned[sizeof(T) - 1];
  }
}

// One launch argument with host-side contents: a buffer of little-endian
// elements, or a scalar's bits.
struct HostArg {
  std::uint8_t dtype = KILN_DTYPE_INVALID;
  bool scalar = false;
  std::uint64_t bits = 0;           // scalar value
  std::vector<std::uint8_t> bytes;  // buffer contents

  static HostArg buffer(std::uint8_t dtype, std::size_t count) {
    HostArg a;
    a.dtype = dtype;
    a.bytes.assign(count * sdk::dtype_bytes(dtype), 0);
    return a;
  }
  template <class T>
  static HostArg of(std::uint8_t dtype, const std::vector<T>& values) {
    HostArg a = buffer(dtype, values.size() * sizeof(T) / sdk::dtype_bytes(dtype));
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
    return a;
  }
  template <class T>
  static HostArg of(const std::vector<T>& values) {
    return of(dtype_of<T>(), values);
  }
  static HostArg value(std::uint8_t dtype, std::uint64_t bits) {
    HostArg a;
    a.dtype = dtype;
    a.scalar = true;
    a.bits = bits;
    return a;
  }
  // A buffer every element of which is the byte 0xA5, a pattern no op
  // produces by chance everywhere: outputs a kernel fails to write show.
  static HostArg poisoned(std::uint8_t dtype, std::size_t count) {
    HostArg a = buffer(dtype, count);
    std::fill(a.bytes.begin(), a.bytes.end(), std::uint8_t{0xA5});
    return a;
  }
  std::size_t count() const { return bytes.size() / sdk::dtype_bytes(dtype); }
  std::uint64_t get(std::size_t i) const {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i * sdk::dtype_bytes(dtype), sdk::dtype_bytes(dtype));
    return v;
  }
  void set(std::size_t i, std::uint64_t v) { std::memcpy(bytes.data() + i * sdk::dtype_bytes(dtype), &v, sdk::dtype_bytes(dtype)); }
  template <class T>
  T as(std::size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  std::vector<T> values() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
};

// `n` random elements: floats uniform in [lo, hi] (integers: any bits;
// bool: 0 or 1); with `nonzero`, no zeros (divisors).
inline HostArg random_arg(std::uint8_t dt, std::size_t n, std::mt19937_64& rng, double lo = -4, double hi = 4,
                          bool nonzero = false) {
  HostArg a = HostArg::buffer(dt, n);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits = 0;
    do {
      bits = sdk::dtype_is_float(dt) ? float_bits(dt, dist(rng)) : int_bits(dt, rng());
    } while (nonzero && (sdk::dtype_is_float(dt) ? float_value(dt, bits) == 0 : bits == 0));
    a.set(i, bits);
  }
  return a;
}

// ---------------------------------------------------------------- compare --

// How close a result must be to the interpreter's. Integers and bool are
// always exact. Floats: within rtol * |want| + atol, or within `ulps` units
// in the last place (f16/bf16 results of ops a device may fuse or compute
// a few f32 ulps differently, which can round to the neighbouring half).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  unsigned ulps = 0;
};

inline bool close_enough(unsigned dt, std::uint64_t got, std::uint64_t want, const Tolerance& t) {
  if (got == want) return true;
  if (!sdk::dtype_is_float(dt)) return false;
  const double g = float_value(dt, got), w = float_value(dt, want);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (std::isinf(w) || std::isinf(g)) return g == w;
  if (t.ulps != 0 && sdk::dtype_bytes(dt) == 2 && ((got ^ want) & 0x8000) == 0) {
    const auto diff = static_cast<std::int64_t>(got & 0x7fff) - static_cast<std::int64_t>(want & 0x7fff);
    if (static_cast<std::uint64_t>(diff < 0 ? -diff : diff) <= t.ulps) return true;
  }
  return std::fabs(g - w) <= t.rtol * std::fabs(w) + t.atol;
}

// "what: k of n wrong: [i] got x want y; ..." (the first few), or nullopt
// when every element is close enough.
inline std::optional<std::string> difference(const std::string& what, const HostArg& got, const HostArg& want,
                                             const Tolerance& tolerance) {
  if (got.dtype != want.dtype || got.bytes.size() != want.bytes.size())
    return what + ": got " + std::to_string(got.count()) + " " + std::string(sdk::dtype_name(got.dtype)) + ", want " +
           std::to_string(want.count()) + " " + std::string(sdk::dtype_name(want.dtype));
  std::size_t bad = 0;
  std::string shown;
  for (std::size_t e = 0; e < want.count(); ++e) {
    if (close_enough(want.dtype, got.get(e), want.get(e), tolerance)) continue;
    if (bad++ < 3)
      shown += " [" + std::to_string(e) + "] got " + show_value(want.dtype, got.get(e)) + " want " +
               show_value(want.dtype, want.get(e)) + ";";
  }
  if (bad == 0) return std::nullopt;
  return what + ": " + std::to_string(bad) + " of " + std::to_string(want.count()) + " wrong:" + shown;
}

// ------------------------------------------------------------ on a plugin --

// A compiled program, released on destruction.
class ProgramHandle {
 public:
  ProgramHandle(const AbiPlugin& plugin, kiln_program* program) : plugin_(&plugin), program_(program) {}
  ~ProgramHandle() {
    if (program_ != nullptr) plugin_->api().program_release(program_);
  }
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  kiln_program* get() const { return program_; }

 private:
  const AbiPlugin* plugin_;
  kiln_program* program_;
};

// Device buffers for a set of HostArgs, freed on destruction. Host-memory
// devices also get each buffer's host pointer, as the host gives it.
class DeviceArgs {
 public:
  DeviceArgs(const AbiPlugin& plugin, kiln_device* device, const std::vector<HostArg>& args, std::uint32_t index = 0)
      : plugin_(plugin), device_(device) {
    const bool host_memory = (plugin.info(index).flags & KILN_DEVICE_HOST_MEMORY) != 0;
    for (const HostArg& a : args) {
      kiln_arg arg{};
      arg.dtype = a.dtype;
      if (a.scalar) {
        arg.kind = KILN_ARG_SCALAR;
        arg.scalar_bits = a.bits;
      } else {
        arg.kind = KILN_ARG_BUFFER;
        arg.bytes = a.bytes.size();
        arg.buffer = plugin.alloc(device, std::max<std::uint64_t>(arg.bytes, 1));
        buffers_.push_back(arg.buffer);
        if (!a.bytes.empty()) plugin.write(device, arg.buffer, a.bytes.data(), a.bytes.size());
        if (host_memory) arg.host_pointer = plugin.host_pointer(device, arg.buffer);
      }
      abi_.push_back(arg);
    }
  }
  ~DeviceArgs() {
    for (kiln_buffer* b : buffers_) plugin_.api().buffer_free(device_, b);
  }
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;

  const std::vector<kiln_arg>& abi() const { return abi_; }
  void read_back(std::vector<HostArg>& args) const {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (!args[i].scalar && !args[i].bytes.empty())
        plugin_.read(device_, abi_[i].buffer, args[i].bytes.data(), args[i].bytes.size());
  }

 private:
  const AbiPlugin& plugin_;
  kiln_device* device_;
  std::vector<kiln_arg> abi_;
  std::vector<kiln_buffer*> buffers_;
};

// The launch the host would make: the grid from the kernel's INDEX ops (or
// the one given).
inline kiln_launch_args launch_args(const std::vector<kiln_op>& ops, kiln_device* device, kiln_program* program,
                                    const std::vector<kiln_arg>& args, const sdk::LaunchGrid* grid = nullptr) {
  const sdk::LaunchGrid computed = grid != nullptr ? *grid : sdk::compute_grid(ops, args);
  kiln_launch_args l{};
  l.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  l.device = device;
  l.program = program;
  l.args = args.data();
  l.n_args = args.size();
  for (int axis = 0; axis < 3; ++axis) {
    l.groups[axis] = computed.groups[axis];
    l.local[axis] = computed.local[axis];
  }
  return l;
}

// Launches a compiled program once and waits for it.
inline void launch_and_wait(const AbiPlugin& plugin, const std::vector<kiln_op>& ops, kiln_device* device,
                            kiln_program* program, const std::vector<kiln_arg>& args,
                            const sdk::LaunchGrid* grid = nullptr) {
  kiln_launch_args l = launch_args(ops, device, program, args, grid);
  check(plugin.api().launch(&l));
  plugin.wait(l.event);
}

// Compiles `ops`, runs them once on `args` and reads every buffer back.
// Returns the program's source (for failure messages). Throws AbiError.
inline std::string run_kernel(const AbiPlugin& plugin, kiln_device* device, const std::vector<kiln_op>& ops,
                              std::vector<HostArg>& args, const sdk::LaunchGrid* grid = nullptr) {
  ProgramHandle program(plugin, plugin.compile(device, ops));
  DeviceArgs device_args(plugin, device, args);
  launch_and_wait(plugin, ops, device, program.get(), device_args.abi(), grid);
  device_args.read_back(args);
  return plugin.source(program.get());
}

// As above, on the grid given (tests of launch geometry).
inline std::string run_kernel(const AbiPlugin& plugin, kiln_device* device, const std::vector<kiln_op>& ops,
                              std::vector<HostArg>& args, const sdk::LaunchGrid& grid) {
  return run_kernel(plugin, device, ops, args, &grid);
}

// ------------------------------------------------------ on the interpreter --

// Runs `ops` on the reference interpreter over `args`, in place (the
// oracle's answer). Throws sdk::PluginError on a kernel fault.
inline void run_interpreter(const std::vector<kiln_op>& ops, std::vector<HostArg>& args,
                            const sdk::LaunchGrid* grid = nullptr) {
  std::vector<kiln_arg> abi;
  for (HostArg& a : args)
    abi.push_back(a.scalar ? sdk::scalar_arg(static_cast<kiln_dtype>(a.dtype), a.bits)
                           : sdk::host_buffer_arg(a.bytes.data(), a.bytes.size()));
  const sdk::InterpretedProgram program(ops);
  if (grid != nullptr) program.run(abi, *grid);
  else program.run(abi);
}

// `args` after the interpreter ran `ops` on a copy of them.
inline std::vector<HostArg> interpreted(const std::vector<kiln_op>& ops, std::vector<HostArg> args,
                                        const sdk::LaunchGrid* grid = nullptr) {
  run_interpreter(ops, args, grid);
  return args;
}

}  // namespace kiln::conformance
