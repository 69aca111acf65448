// kiln/runtime/launch.hpp - launch arguments and timing results.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/plugin.h>

#include <bit>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kiln {

class Buffer;

// One launch argument, bound to the PARAM whose slot is its position: a
// buffer (GLOBAL / GLOBAL_MUT params) or a scalar value (VARIABLE params,
// with the param's dtype). A buffer argument refers to the Buffer, which
// must outlive the launch call.
class LaunchArg {
 public:
  static LaunchArg buffer(const Buffer& buffer) {
    LaunchArg arg;
    arg.buffer_ = &buffer;
    return arg;
  }
  // The value's bits as a CONST of `dtype` holds them (kernel_ir.h).
  static LaunchArg scalar(ir::DType dtype, std::uint64_t bits) {
    LaunchArg arg;
    arg.dtype_ = dtype;
    arg.bits_ = bits;
    return arg;
  }
  // int32_t, int64_t, uint32_t, uint64_t, float, double, bool...
  template <class T>
  static LaunchArg value(T v) {
    static_assert(std::is_arithmetic_v<T>);
    if constexpr (std::is_same_v<T, float>) return scalar(ir::DType::F32, std::bit_cast<std::uint32_t>(v));
    else if constexpr (std::is_same_v<T, double>) return scalar(ir::DType::F64, std::bit_cast<std::uint64_t>(v));
    else if constexpr (std::is_same_v<T, bool>) return scalar(ir::DType::Bool, v ? 1 : 0);
    else {
      static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
      constexpr ir::DType kTypes[2][4] = {
          {ir::DType::U8, ir::DType::U16, ir::DType::U32, ir::DType::U64},
          {ir::DType::I8, ir::DType::I16, ir::DType::I32, ir::DType::I64}};
      constexpr int size_index = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
      using U = std::make_unsigned_t<T>;
      return scalar(kTypes[std::is_signed_v<T> ? 1 : 0][size_index], static_cast<U>(v));
    }
  }

  bool is_buffer() const { return buffer_ != nullptr; }
  const Buffer* buffer_ref() const { return buffer_; }
  ir::DType dtype() const { return dtype_; }
  std::uint64_t bits() const { return bits_; }

 private:
  const Buffer* buffer_ = nullptr;
  ir::DType dtype_ = ir::DType::Invalid;
  std::uint64_t bits_ = 0;
};

enum class TimerKind { Host = KILN_TIMER_HOST, Device = KILN_TIMER_DEVICE, Model = KILN_TIMER_MODEL };
std::string_view timer_kind_name(TimerKind kind);  // "host", "device", "model"

struct TimedLaunchOptions {
  std::uint32_t warmups = 1;
  std::uint32_t repeats = 5;      // >= 1
  std::uint64_t abort_ns = 0;     // stop early after a run longer than this (0: never)
  std::uint32_t flags = 0;        // KILN_TIMED_*
  // The longest one run may take (0: no limit); past it the launch fails
  // ErrorCode::Timeout. Where the API cannot cancel a running kernel
  // (OpenCL, Vulkan, CUDA) the device is lost afterwards (kiln/plugin.h,
  // timeout_ns); the C plugin honours it only with KILN_TIMED_ISOLATE.
  std::uint64_t timeout_ns = 0;
};

struct Timing {
  std::uint64_t min_ns = 0;
  std::uint64_t median_ns = 0;
  std::uint32_t runs = 0;         // timed runs made
  bool aborted = false;
  TimerKind timer = TimerKind::Host;
  std::vector<std::uint64_t> samples_ns;  // one per run
};

}  // namespace kiln
