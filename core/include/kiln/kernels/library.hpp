// kiln/kernels/library.hpp - the standard kernels: IR builders with size
// parameters, each with a plain C++ reference. They serve `kiln run`, tests
// and benchmarks:
//
//   auto k = make_standard_kernel("softmax-rows", {.m = 64, .n = 1000}, DType::F32).value();
//   auto inputs = k.make_inputs(seed);          // random, in each input's range
//   auto outputs = k.make_outputs();            // NaN-filled until written
//   ... compile k.kernel on a device, launch with (inputs, outputs, scalars) by slot ...
//   auto expected = k.make_outputs();
//   k.reference(inputs, expected);
//   bool ok = compare(outputs[0], expected[0]) <= k.tolerance;
//
// Every kernel is in the canonical unoptimized form (docs/ir.md lists them):
// one thread per output element through GROUP indices only, inputs at slots
// 0.., outputs after them, then scalars; reductions loop over a 1-element
// REGISTER accumulator. f16/bf16 kernels compute reductions and row math in
// f32 (loads cast up, results cast back); elementwise kernels compute in the
// dtype itself.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/kernels/host_buffer.hpp"
#include "kiln/result.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kernels {

// Elementwise kernels (add, add-dyn, exp-chain) use n; row kernels
// (sum-rows, max-rows, softmax-rows, layernorm-rows) and transpose use
// m rows of n columns; matmul and matmul-bt multiply [m,k] by [k,n].
struct KernelSize {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
};

enum class ArgRole { Input, Output, Scalar };

// One launch argument, in PARAM slot order.
struct ArgSpec {
  std::string name;            // "a", "x", "n", ...
  ArgRole role = ArgRole::Input;
  ir::DType dtype = ir::DType::F32;
  std::uint64_t elements = 1;  // buffer elements (1 for a scalar)
  std::uint64_t scalar_bits = 0;  // Scalar: its value, as CONST bits of dtype
  double low = -1.0;           // Input: the range make_inputs draws from
  double high = 1.0;
};

// One buffer per Input argument, in slot order, filled by
// fill_random(buffer, seed + slot, low, high).
std::vector<HostBuffer> make_input_buffers(std::span<const ArgSpec> args, std::uint64_t seed);
// One buffer per Output argument, in slot order, filled with NaN (integers:
// 0x5a bytes) so that elements a kernel fails to write do not pass as results.
std::vector<HostBuffer> make_output_buffers(std::span<const ArgSpec> args);
// `elements` of `dtype` filled as make_output_buffers fills an output.
HostBuffer make_poison_buffer(ir::DType dtype, std::size_t elements);

// The arguments of any kernel (for `kiln ir FILE --run`), from its PARAMs in
// slot order: GLOBAL -> Input, GLOBAL_MUT -> Output, each of the element
// count the param declares; VAR -> Scalar taking the next of `scalars` (in
// slot order), converted to the param's dtype as CAST converts. Errors
// (InvalidArgument) name the param: a buffer without an element count
// (write it as f32[N]), too few or too many scalars, a missing slot.
Result<std::vector<ArgSpec>> args_of(const ir::Kernel& kernel, std::span<const double> scalars = {});

// inputs and outputs in slot order, one buffer per Input / Output argument.
using Reference = std::function<void(std::span<const HostBuffer> inputs, std::span<HostBuffer> outputs)>;

struct StandardKernel {
  std::string name;
  KernelSize size;
  ir::DType dtype = ir::DType::F32;
  ir::Kernel kernel;
  std::vector<ArgSpec> args;
  double flops = 0;            // arithmetic ops (exp counts as one), for GFLOP/s
  double bytes = 0;            // minimal bytes read + written, for GB/s
  double tolerance = 0;        // compare() error accepted (see host_buffer.hpp)
  // The error accepted when f32 products may run on tf32 matrix units
  // (AutotuneSettings::allow_tf32): f16's, whose 10 mantissa bits tf32 keeps.
  double tf32_tolerance = 0;
  std::vector<ir::DType> dtypes;  // the dtypes this kernel can be made in
  Reference reference;         // computes in double, stores in the buffer dtype

  // make_input_buffers / make_output_buffers of args.
  std::vector<HostBuffer> make_inputs(std::uint64_t seed) const { return make_input_buffers(args, seed); }
  std::vector<HostBuffer> make_outputs() const { return make_output_buffers(args); }
};

// The names make_standard_kernel accepts, in a fixed order.
std::span<const std::string_view> standard_kernel_names();

// Errors: NotFound (unknown name, listing the known ones), InvalidArgument
// (a size < 1 or too large), Unsupported (a dtype the kernel does not allow).
Result<StandardKernel> make_standard_kernel(std::string_view name, const KernelSize& size,
                                            ir::DType dtype = ir::DType::F32);

}  // namespace kiln::kernels
