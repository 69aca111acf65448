// The differential property test: kernels from the standard library and
// from a random generator, each optimized by random sequences of up to 8
// steps (each step drawn from the registered optimizations' configs on the
// current kernel: an optimization uniformly among those that apply, then
// one of its configs) for three devices (c:0's real DeviceInfo, the GPU-shaped
// preset, the small preset), must give the unoptimized kernel's results on
// the reference interpreter and, when they have no LOCAL index, on c:0.
//
// CI: a fixed seed and a bounded count (label `differential`, about a
// minute). Soak: KILN_SOAK_SECONDS=N runs fresh seeds for N seconds. A
// mismatch prints the seed, the kernel, the sequence and the optimized
// kernel; KILN_DIFFERENTIAL_SEED=S replays that random kernel (with random
// sequences, or KILN_DIFFERENTIAL_SEQUENCE="..." on every device).
#include "passes/device_runner.hpp"
#include "passes/pass_test_support.hpp"
#include "passes/random_kernel.hpp"

#include "kiln/ir/hash.hpp"
#include "kiln/passes/optimization.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>

namespace {

using namespace kiln;
using passes::test::RunOutcome;

constexpr std::uint64_t kCiSeed = 20261130;
constexpr int kCiRandomKernels = 40;
constexpr int kMaxSteps = 8;
constexpr int kMaxReportedFailures = 5;

struct Case {
  std::string name;
  ir::Kernel kernel;
  std::vector<kernels::ArgSpec> args;
  double tolerance = 0;
  std::uint64_t seed = 0;  // random kernels: the generator seed
};

// Relative error accepted after optimization: the passes and
// optimizations that change rounding (fused multiply-add on c:0, exp/exp2,
// pow unfolding, reassociation) stay within a few ulps per op.
double tolerance_for(ir::DType dtype, std::int64_t reduction_length) {
  const double floor = dtype == ir::DType::F64 ? 1e-9 : dtype == ir::DType::F32 ? 1e-4
                       : dtype == ir::DType::F16 ? 3e-2 : dtype == ir::DType::BF16 ? 1e-1 : 0.0;
  return std::max(floor, 16 * kernels::tolerance(dtype, reduction_length));
}

bool has_local_index(const ir::Kernel& kernel) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) return true;
  return false;
}

class Differential : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<Runtime> runtime = Runtime::open();
    if (!runtime.ok()) return;
    runtime_ = std::make_unique<Runtime>(std::move(runtime).value());
    Result<Device> c0 = runtime_->device("c:0");
    if (c0.ok()) c0_ = std::move(c0).value();
    else c0_error_ = c0.error().to_string();
  }
  static void TearDownTestSuite() {
    c0_ = Device{};
    runtime_.reset();
  }

  void SetUp() override {
    ASSERT_TRUE(c0_.valid()) << "c:0 is needed for the differential test: " << c0_error_;
    devices_ = {c0_.info(), passes::gpu_preset(), passes::small_preset()};
  }

  // A random sequence, applied step by step; each step must apply (configs
  // only lists what applies).
  // `tuned`: the kernel after the last step (normalized), for the replay check.
  passes::OptSequence random_sequence(const ir::Kernel& normalized, const DeviceInfo& device, std::mt19937_64& rng,
                                      std::string& problem, ir::Kernel& tuned) {
    passes::OptSequence sequence;
    ir::Kernel current = normalized;
    const int steps = std::uniform_int_distribution<int>(0, kMaxSteps)(rng);
    for (int i = 0; i < steps; ++i) {
      // An optimization uniformly among those that apply (the first step:
      // the least used so far, so that rarely applicable ones get tested),
      // then one of its configs.
      std::vector<std::vector<passes::OptStep>> choices;
      for (const passes::Optimization* opt : passes::optimizations())
        if (std::vector<passes::OptStep> configs = opt->configs(current, device); !configs.empty())
          choices.push_back(std::move(configs));
      if (choices.empty()) break;
      std::size_t pick = std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(rng);
      if (i == 0)
        for (std::size_t c = 0; c < choices.size(); ++c)
          if (steps_by_optimization_[choices[c][0].opt] < steps_by_optimization_[choices[pick][0].opt]) pick = c;
      const auto& configs = choices[pick];
      const passes::OptStep step = configs[std::uniform_int_distribution<std::size_t>(0, configs.size() - 1)(rng)];
      ++steps_by_optimization_[step.opt];
      Result<ir::Kernel> next = passes::apply_sequence(current, {step}, device);
      sequence.push_back(step);
      if (!next.ok()) {
        problem = "a listed config does not apply: " + next.error().to_string();
        return sequence;
      }
      current = std::move(next).value();
    }
    tuned = current;
    return sequence;
  }

  void report(const Case& c, const DeviceInfo& device, const passes::OptSequence& sequence, const ir::Kernel* optimized,
              const std::string& what) {
    ++failures_;
    if (failures_ > kMaxReportedFailures) return;
    std::ostringstream out;
    out << "differential mismatch: " << what << "\n  case: " << c.name << "  seed: " << c.seed << "  device: " << device.id
        << "\n  sequence: \"" << passes::to_string(sequence) << "\"\n--- kernel:\n" << ir::print(c.kernel);
    if (optimized != nullptr) out << "--- optimized:\n" << ir::print(*optimized);
    ADD_FAILURE() << out.str();
  }

  // One case on every device with one random sequence each.
  void check(const Case& c, std::mt19937_64& rng, bool always_on_c0) {
    const RunOutcome expected = passes::test::run_on_interpreter(c.kernel, c.args, c.seed + 1);
    if (!expected.error.empty()) {
      ADD_FAILURE() << c.name << " (seed " << c.seed << ") fails unoptimized: " << expected.error << "\n" << ir::print(c.kernel);
      return;
    }
    for (const DeviceInfo& device : devices_) {
      ++variants_;
      std::string problem;
      const ir::Kernel normalized = passes::normalize(c.kernel, device);
      ir::Kernel tuned;
      passes::OptSequence sequence;
      if (forced_sequence_) {  // replaying a report
        sequence = *forced_sequence_;
        Result<ir::Kernel> applied = passes::apply_sequence(normalized, sequence, device);
        if (!applied.ok()) problem = applied.error().to_string();
        else tuned = std::move(applied).value();
      } else {
        sequence = random_sequence(normalized, device, rng, problem, tuned);
      }
      if (!problem.empty()) {
        report(c, device, sequence, nullptr, problem);
        continue;
      }
      Result<ir::Kernel> optimized = passes::optimize(c.kernel, sequence, device);
      if (!optimized.ok()) {
        report(c, device, sequence, nullptr, "optimize failed: " + optimized.error().to_string());
        continue;
      }
      // Replaying the text of the sequence gives the kernel built step by
      // step (what the tuner measured is what it replays), and normalize has
      // reached its fixed point (a second run changes nothing).
      if (ir::hash(*optimized) != ir::hash(passes::finalize(tuned, device)))
        report(c, device, sequence, &*optimized, "optimize(kernel, sequence) differs from the step-by-step kernel");
      if (ir::hash(passes::normalize(*optimized, device)) != ir::hash(*optimized))
        report(c, device, sequence, &*optimized, "normalize did not reach a fixed point");
      const std::string on_interpreter =
          passes::test::compare_outcomes(expected, passes::test::run_on_interpreter(*optimized, c.args, c.seed + 1), c.tolerance);
      if (!on_interpreter.empty()) report(c, device, sequence, &*optimized, "interpreter: " + on_interpreter);
      const bool on_c0 = always_on_c0 || device.id == c0_.id() || std::uniform_int_distribution<int>(0, 2)(rng) == 0;
      if (on_c0 && !has_local_index(*optimized)) {
        ++c0_runs_;
        const std::string on_device = passes::test::compare_outcomes(
            expected, passes::test::run_on_device(c0_, *optimized, c.args, c.seed + 1), c.tolerance);
        if (!on_device.empty()) report(c, device, sequence, &*optimized, "c:0: " + on_device);
      }
    }
  }

  Case random_case(std::uint64_t seed) {
    passes::test::GeneratedKernel g = passes::test::RandomKernelGenerator::generate(seed);
    return Case{"random", std::move(g.kernel), std::move(g.args), tolerance_for(g.dtype, g.reduction_length), seed};
  }

  void summarize() {
    std::printf("[differential] %d variants, %d runs on c:0, %d optimizations registered, %d failures\n", variants_,
                c0_runs_, static_cast<int>(passes::optimizations().size()), failures_);
    std::string steps;
    for (const auto& [name, count] : steps_by_optimization_) steps += " " + name + "=" + std::to_string(count);
    std::printf("[differential] steps applied:%s\n", steps.empty() ? " none" : steps.c_str());
  }

  static std::unique_ptr<Runtime> runtime_;
  static Device c0_;
  static std::string c0_error_;
  std::vector<DeviceInfo> devices_;
  int variants_ = 0, c0_runs_ = 0, failures_ = 0;
  std::map<std::string, int> steps_by_optimization_;
  std::optional<passes::OptSequence> forced_sequence_;  // KILN_DIFFERENTIAL_SEQUENCE
};

std::unique_ptr<Runtime> Differential::runtime_;
Device Differential::c0_;
std::string Differential::c0_error_;

}  // namespace

TEST_F(Differential, StandardKernels) {
  std::mt19937_64 rng(kCiSeed);
  // Odd sizes (nothing divides), and powers of two (tiles and vectors fit).
  const kernels::KernelSize sizes[] = {{.m = 3, .n = 5, .k = 7}, {.m = 17, .n = 33, .k = 9}, {.m = 64, .n = 64, .k = 16}};
  for (std::string_view name : kernels::standard_kernel_names()) {
    for (const kernels::KernelSize& size : sizes) {
      for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::I32}) {
        Result<kernels::StandardKernel> k = kernels::make_standard_kernel(name, size, dtype);
        if (!k.ok()) continue;  // a dtype the kernel does not allow
        const std::int64_t reduction = name.starts_with("matmul") ? size.k : name.ends_with("-rows") ? size.n : 1;
        Case c{std::string(name) + "/" + std::string(ir::dtype_name(dtype)), k->kernel, k->args,
               std::max(k->tolerance, tolerance_for(dtype, reduction)), kCiSeed};
        check(c, rng, false);
      }
    }
  }
  summarize();
}

TEST_F(Differential, RandomKernels) {
  std::mt19937_64 rng(kCiSeed + 1);
  if (const char* replay = std::getenv("KILN_DIFFERENTIAL_SEED")) {
    if (const char* sequence = std::getenv("KILN_DIFFERENTIAL_SEQUENCE"))
      forced_sequence_ = passes::parse_sequence(sequence).value();
    check(random_case(std::strtoull(replay, nullptr, 10)), rng, true);
    summarize();
    return;
  }
  for (int i = 0; i < kCiRandomKernels; ++i) check(random_case(kCiSeed * 1000 + static_cast<std::uint64_t>(i)), rng, false);
  summarize();
}

TEST_F(Differential, Soak) {
  const char* seconds = std::getenv("KILN_SOAK_SECONDS");
  if (seconds == nullptr) GTEST_SKIP() << "set KILN_SOAK_SECONDS=N to run fresh seeds for N seconds";
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoll(seconds));
  std::random_device entropy;
  const std::uint64_t base = (std::uint64_t{entropy()} << 32) | entropy();
  std::printf("[differential] soak base seed %llu\n", static_cast<unsigned long long>(base));
  std::mt19937_64 rng(base);
  for (std::uint64_t i = 0; std::chrono::steady_clock::now() < until; ++i) check(random_case(base + i), rng, false);
  summarize();
}
