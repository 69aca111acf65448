// gelu.cpp - GELU (tanh form) over a vector from C++: the kernel written as
// its formula with the builder's operators (kiln/ir/expr.hpp), compiled for a
// device as a user would (heuristic schedule), launched, checked against the
// same formula on the host, timed. docs/embedding.md shows it beside C and
// Python.
//   kiln-gelu-cpp [DEVICE]     (default c:0)
#include <kiln/ir/expr.hpp>
#include <kiln/runtime.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

using namespace kiln::ir;

template <class T>
T gelu(T x) {  // one formula for the kernel (T = Expr) and the host (T = double)
  using std::tanh;
  return 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x * x * x)));
}

int main(int argc, char** argv) try {
  const std::string device_id = argc > 1 ? argv[1] : "c:0";
  constexpr std::int64_t n = 1 << 16;

  kiln::Runtime runtime = kiln::Runtime::open().value();
  kiln::Device device = runtime.device(device_id).value();

  Builder b;
  const Memory x{b, b.param(ParamKind::Global, DType::F32, n)};
  const Memory y{b, b.param(ParamKind::GlobalMut, DType::F32, n)};
  const Expr i{b, b.group_index(0, n)};
  y.store(i, gelu(x[i]));
  const Kernel kernel = b.finish();
  const kiln::Program program = device.compile(kernel).value();

  std::vector<float> xs(n), ys(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  for (float& v : xs) v = uniform(rng);
  kiln::Buffer in = device.allocate(n * sizeof(float)).value();
  kiln::Buffer out = device.allocate(n * sizeof(float)).value();
  in.write(std::as_bytes(std::span(xs))).value();
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(in), kiln::LaunchArg::buffer(out)};
  device.launch(program, args).value().wait().value();
  out.read(std::as_writable_bytes(std::span(ys))).value();

  double worst = 0;
  for (std::int64_t k = 0; k < n; ++k) worst = std::max(worst, std::abs(ys[k] - gelu<double>(xs[k])));
  const kiln::Timing timing = device.timed_launch(program, args, {.warmups = 1, .repeats = 5}).value();
  std::printf("gelu on %s: max abs error %.2g, median %.1f us\n", device_id.c_str(), worst, timing.median_ns / 1e3);
  return worst < 1e-5 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
