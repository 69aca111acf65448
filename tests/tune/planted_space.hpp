// A small search space the autotuner tests plant, over elementwise kernels
// (one GROUP index on axis 0 with a constant length, no loops):
//
//   test_split(factor=F)     GROUP(N) -> GROUP(N/F) x LOCAL(F), i = g*F + l.
//                            Correct; the dummy's model rewards full warps.
//   test_coarsen(factor=C)   GROUP(N) -> GROUP(N/C) and a loop of C, i = c*(N/C) + g.
//                            Correct; fewer threads, each doing more.
//   test_wrong(keep=2)       GROUP(N) -> GROUP(N/2): half the work, so faster
//                            and wrong (half the outputs are never written).
//   test_oversize(factor=F)  as test_split but with F past the device's
//                            threads per group: the plugin refuses to compile it.
//
// Real rewrites on real kernels (the dummy runs them on the interpreter), so
// the correctness guard and the timing model see exactly what a real
// optimization would give them.
#pragma once

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace kiln::test {

// The GROUP index on axis 0 with a constant length, when the kernel has one
// and no LOCAL index on axis 0 yet.
struct GroupAxis {
  ir::ValueId index = ir::kNoValue;
  std::int64_t length = 0;
};

inline std::optional<GroupAxis> group_axis(const ir::Kernel& kernel) {
  std::optional<GroupAxis> found;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Index || op.attr != 0) continue;
    if (op.scope() == ir::Scope::Local) return std::nullopt;
    const std::optional<std::int64_t> length = ir::constant_int(kernel, op.src[0]);
    if (!length) return std::nullopt;
    found = GroupAxis{id, *length};
  }
  return found;
}

// Rewrites the axis-0 GROUP index: `emit(builder)` emits what replaces it
// (and may open a loop, which is closed at the end of the kernel).
inline ir::Kernel replace_group_index(const ir::Kernel& kernel, ir::ValueId index,
                                      const std::function<ir::Value(ir::Builder&, std::optional<ir::Value>&)>& emit) {
  ir::Rewriter rw(kernel);
  std::optional<ir::Value> open_loop;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    if (rw.handled(id)) continue;
    if (id == index) {
      rw.replace(id, emit(rw.out(), open_loop));
    } else {
      rw.copy(id);
    }
  }
  if (open_loop) rw.out().end_loop(*open_loop);
  return rw.finish();
}

class TestOptimization : public passes::Optimization {
 public:
  TestOptimization(std::string name, std::vector<std::int64_t> factors, bool check_device = true)
      : name_(std::move(name)), factors_(std::move(factors)), check_device_(check_device) {}

  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "a planted test optimization"; }

  std::vector<passes::OptStep> configs(const ir::Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<passes::OptStep> out;
    const std::optional<GroupAxis> axis = group_axis(kernel);
    if (!axis) return out;
    for (std::int64_t f : factors_) {
      if (axis->length % f != 0 || axis->length / f < 1) continue;
      if (check_device_ && (f > device.max_local_threads || f > device.max_local_dims[0])) continue;
      out.push_back({std::string(name_), {{param_name(), f}}});
    }
    return out;
  }

  Result<ir::Kernel> apply(const ir::Kernel& kernel, const passes::OptStep& step,
                           const DeviceInfo& device) const override {
    ++applied;
    const std::optional<GroupAxis> axis = group_axis(kernel);
    const std::int64_t f = step.param(param_name());
    if (!axis || f < 1 || axis->length % f != 0)
      return make_error(ErrorCode::InvalidArgument, name_ + ": does not fit this kernel");
    (void)device;
    return rewrite(kernel, *axis, f);
  }

  mutable std::atomic<int> applied{0};

 protected:
  virtual std::string param_name() const { return "factor"; }
  virtual ir::Kernel rewrite(const ir::Kernel& kernel, const GroupAxis& axis, std::int64_t f) const = 0;

 private:
  std::string name_;
  std::vector<std::int64_t> factors_;
  bool check_device_;
};

class TestSplit : public TestOptimization {
 public:
  explicit TestSplit(std::string name = "test_split", bool check_device = true,
                     std::vector<std::int64_t> factors = {256, 128, 64, 32, 16, 8, 4, 2})
      : TestOptimization(std::move(name), std::move(factors), check_device) {}

 protected:
  ir::Kernel rewrite(const ir::Kernel& kernel, const GroupAxis& axis, std::int64_t f) const override {
    return replace_group_index(kernel, axis.index, [&](ir::Builder& b, std::optional<ir::Value>&) {
      const ir::Value g = b.group_index(0, axis.length / f);
      const ir::Value l = b.local_index(0, static_cast<std::uint32_t>(f));
      return b.add(b.mul(g, b.constant_i64(f)), l);
    });
  }
};

class TestCoarsen : public TestOptimization {
 public:
  TestCoarsen() : TestOptimization("test_coarsen", {8, 4, 2}) {}

 protected:
  ir::Kernel rewrite(const ir::Kernel& kernel, const GroupAxis& axis, std::int64_t f) const override {
    return replace_group_index(kernel, axis.index, [&](ir::Builder& b, std::optional<ir::Value>& loop) {
      const std::int64_t groups = axis.length / f;
      const ir::Value g = b.group_index(0, groups);
      loop = b.loop(f);
      return b.add(b.mul(*loop, b.constant_i64(groups)), g);
    });
  }
};

class TestWrong : public TestOptimization {
 public:
  TestWrong() : TestOptimization("test_wrong", {2}) {}

 protected:
  std::string param_name() const override { return "keep"; }
  ir::Kernel rewrite(const ir::Kernel& kernel, const GroupAxis& axis, std::int64_t f) const override {
    return replace_group_index(kernel, axis.index, [&](ir::Builder& b, std::optional<ir::Value>&) {
      return b.group_index(0, axis.length / f);
    });
  }
};

// A space of `optimizations` with kiln's always-on passes around them and
// the given cost model.
inline tune::SearchSpace planted_space(std::vector<const passes::Optimization*> optimizations, tune::CostModel cost) {
  return tune::make_search_space(
      std::move(optimizations), [](const ir::Kernel& k, const DeviceInfo& d) { return passes::normalize(k, d); },
      [](const ir::Kernel& k, const DeviceInfo& d) { return passes::finalize(k, d); }, std::move(cost));
}

// A kernel elementwise over `n` f32 elements: y = exp(a) * b + a.
inline std::string elementwise_ir(std::int64_t n) {
  const std::string count = std::to_string(n);
  return "%a = param 0 global f32[" + count + "]\n%b = param 1 global f32[" + count + "]\n%y = param 2 global_mut f32[" +
         count + "]\n%n = const i64 " + count +
         "\n%i = index group 0 %n\n%x = load f32 %a[%i]\n%z = load f32 %b[%i]\n%e = exp f32 %x\n%m = mul f32 %e, %z\n"
         "%s = add f32 %m, %x\nstore f32 %y[%i], %s\n";
}

}  // namespace kiln::test
