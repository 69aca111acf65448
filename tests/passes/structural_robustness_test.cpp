// Bad input never crashes: the structural optimizations' configs() and
// apply() on broken kernels (random op arrays, and standard kernels with one
// field mutated) and with nonsense parameters return errors or valid
// kernels, nothing else.
#include "passes/structural_test_support.hpp"

#include <random>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::string_view kStructural[] = {"split_local", "coarsen",     "split_loop", "unroll",     "merge_loops",
                                            "swap_loops",  "swap_axes",   "pad",        "reassociate"};

// Steps with parameters in and out of range for every structural optimization.
std::vector<std::string> probe_steps() {
  std::vector<std::string> steps;
  for (std::int64_t v : {-1, 0, 1, 2, 4, 3, 64, 1 << 20}) {
    const std::string n = std::to_string(v);
    steps.push_back("split_local(axis=" + n + ",factor=" + n + ")");
    steps.push_back("split_local(axis=0,factor=" + n + ")");
    steps.push_back("coarsen(axis=0,factor=" + n + ",mode=" + n + ")");
    steps.push_back("coarsen(axis=" + n + ",factor=2,mode=0)");
    steps.push_back("split_loop(loop=" + n + ",factor=2)");
    steps.push_back("split_loop(loop=0,factor=" + n + ")");
    steps.push_back("unroll(loop=" + n + ",factor=0)");
    steps.push_back("unroll(loop=0,factor=" + n + ")");
    steps.push_back("merge_loops(loop=" + n + ")");
    steps.push_back("swap_loops(loop=" + n + ")");
    steps.push_back("swap_axes(a=0,b=" + n + ")");
    steps.push_back("swap_axes(a=" + n + ",b=1)");
    steps.push_back("pad(axis=0,multiple=" + n + ")");
    steps.push_back("pad(axis=" + n + ",multiple=8)");
  }
  steps.push_back("reassociate()");
  steps.push_back("split_local()");
  steps.push_back("unroll(loop=0,factor=2,extra=1)");
  return steps;
}

// Every configs() and every probe step on `kernel`: an error or a kernel that verifies.
void probe(const ir::Kernel& kernel, const std::vector<std::string>& steps) {
  for (const DeviceInfo& device : presets()) {
    for (std::string_view name : kStructural) {
      const Optimization* opt = find_optimization(name);
      for (const OptStep& step : opt->configs(kernel, device)) {
        Result<ir::Kernel> out = opt->apply(kernel, step, device);
        ASSERT_TRUE(out.ok()) << step.to_string() << " is listed but refused: " << out.error().to_string();
        ASSERT_TRUE(ir::verify(*out).ok()) << step.to_string() << "\n" << ir::print(*out);
      }
    }
    for (const std::string& text : steps) {
      Result<ir::Kernel> out = apply_step(kernel, text, device);
      if (out.ok()) ASSERT_TRUE(ir::verify(*out).ok()) << text << "\n" << ir::print(*out);
      else EXPECT_NE(out.error().code, ErrorCode::Internal) << text << ": " << out.error().to_string();
    }
  }
}

}  // namespace

TEST(StructuralRobustness, RandomOpArraysAreRefusedWithoutCrashing) {
  std::mt19937_64 rng(99);
  const std::vector<std::string> steps = probe_steps();
  for (int trial = 0; trial < 40; ++trial) {
    ir::Kernel kernel;
    const std::size_t n = 1 + rng() % 12;
    for (std::size_t i = 0; i < n; ++i) {
      ir::Op op;
      op.kind = static_cast<ir::OpKind>(rng() % 21);
      op.dtype = static_cast<ir::DType>(rng() % 15);
      op.lanes = static_cast<std::uint8_t>(rng() % 3);
      op.code = static_cast<std::uint8_t>(rng() % 21);
      op.attr = static_cast<std::uint32_t>(rng() % 4);
      for (ir::ValueId& v : op.src) v = rng() % 3 == 0 ? ir::kNoValue : static_cast<ir::ValueId>(rng() % (n + 2));
      op.imm = rng() % 2 == 0 ? rng() % 70 : rng();
      kernel.ops.push_back(op);
    }
    SCOPED_TRACE(ir::print(kernel));
    probe(kernel, steps);
  }
}

TEST(StructuralRobustness, MutatedStandardKernelsAreHandledWithoutCrashing) {
  std::mt19937_64 rng(5);
  const std::vector<std::string> steps = probe_steps();
  std::vector<ir::Kernel> kernels = odd_standard_kernels();
  kernels.push_back(parse_valid(kDynamicRowSum));
  for (const ir::Kernel& original : kernels)
    for (int trial = 0; trial < 4; ++trial) {
      ir::Kernel kernel = original;
      ir::Op& op = kernel.ops[rng() % kernel.size()];
      switch (rng() % 5) {
        case 0: op.src[rng() % 3] = static_cast<ir::ValueId>(rng() % (kernel.size() + 3)); break;
        case 1: op.imm = rng() % 3 == 0 ? rng() : rng() % 9; break;
        case 2: op.kind = static_cast<ir::OpKind>(1 + rng() % 19); break;
        case 3: op.attr = static_cast<std::uint32_t>(rng() % 4); break;
        default: op.code = static_cast<std::uint8_t>(rng() % 20); break;
      }
      SCOPED_TRACE(ir::print(kernel));
      probe(kernel, steps);
    }
}
