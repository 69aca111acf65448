// The ABI 1.1 math ops (tanh erf sigmoid rsqrt log1p expm1) end to end on
// every CPU device: the dummy (which runs the interpreter, so exact), the
// dummy with "math_ops": false (each op lowered by Device::compile, and by
// optimize's finalize), c (gcc, libm), cblas, opencl (PoCL) and vulkan
// (lavapipe). One kernel per dtype computes all six ops over 2048 inputs of
// mixed magnitudes each; the results must be within the per-op tolerance of
// the interpreter's (docs/ir.md, "Math ops: accuracy"). A dtype a device does
// not run, a plugin that is not built or has no device are visible skips.
#include <gtest/gtest.h>

#include "passes/math_ops_support.hpp"

#include "kiln/passes/optimization.hpp"

#include <map>
#include <memory>

using namespace kiln;
using namespace kiln::passes::test;

namespace {

const char* const kPlugins[] = {"dummy", "c", "cblas", "opencl", "vulkan"};

const Runtime* runtime_for(const std::string& plugin) {
  static std::map<std::string, std::unique_ptr<Runtime>> runtimes;
  auto& slot = runtimes[plugin];
  if (slot == nullptr) {
    std::string entries;
    for (const char* name : kPlugins) {
      std::string entry = std::string("\"") + name + "\": {\"enabled\": " + (plugin == name ? "true" : "false");
      if (std::string(name) == "dummy")
        entry += R"(, "options": {"simulate": [{"name": "math-native"}, {"name": "math-lowered", "math_ops": false}]})";
      entries += (entries.empty() ? "" : ", ") + entry + "}";
    }
    Result<Config> config = parse_config("{\"plugins\": {" + entries + "}}", "math-devices-config.json");
    if (!config) return nullptr;
    Result<Runtime> runtime = Runtime::create(std::move(config).value());
    if (!runtime) return nullptr;
    slot = std::make_unique<Runtime>(std::move(runtime).value());
  }
  return slot.get();
}

// The documented tolerance (docs/ir.md) in ulp of the dtype: what the
// device's libm or builtins promise for the op (OpenCL C's full-profile
// table: tanh 5, erf 16, log1p 2, expm1 3, rsqrt 2; glibc within a few), or
// what the lowered forms keep given the device's exp and ln, with a margin.
// f16/bf16 compute in f32 and round once: one ulp of the half type.
double tolerance(ir::DType dt, ir::UnaryOp op) {
  if (dt == ir::DType::F16 || dt == ir::DType::BF16) return 1;
  switch (op) {
    case ir::UnaryOp::Erf: return 16;
    case ir::UnaryOp::Rsqrt: return 2;
    case ir::UnaryOp::Log1p: return 4;
    default: return 8;
  }
}

constexpr std::int64_t kN = 2048;

// Whether the core can lower `op` on `dt` for this device (docs/passes.md,
// lower_math): the forms need exp and ln (f16/bf16: in f32); erf has an f32
// form only; rsqrt needs sqrt and recip.
bool lowerable(const DeviceInfo& info, ir::UnaryOp op, ir::DType dt) {
  const unsigned t = dt == ir::DType::F16 || dt == ir::DType::BF16 ? unsigned{KILN_DTYPE_F32} : static_cast<unsigned>(dt);
  if (op == ir::UnaryOp::Rsqrt) return info.supports_unary(KILN_UNARY_SQRT, t) && info.supports_unary(KILN_UNARY_RECIP, t);
  if (op == ir::UnaryOp::Erf && t != KILN_DTYPE_F32) return false;
  return info.supports_unary(KILN_UNARY_EXP, t) && info.supports_unary(KILN_UNARY_LN, t);
}

// Checks the six ops of one dtype on `device`; "" or why it was skipped.
std::string check_device(const Device& device, ir::DType dt, bool optimize_first) {
  const DeviceInfo& info = device.info();
  if (!info.supports_op_kind(KILN_OP_LOAD, static_cast<unsigned>(dt))) return "no " + std::string(ir::dtype_name(dt));
  std::vector<ir::UnaryOp> ops;
  std::string refused;
  for (ir::UnaryOp op : kMathOps) {
    if (info.supports_unary(static_cast<unsigned>(op), static_cast<unsigned>(dt)) || lowerable(info, op, dt)) {
      ops.push_back(op);
      continue;
    }
    // Neither claimed nor lowerable: refused by name, never sent.
    const ir::UnaryOp alone[] = {op};
    Result<Program> program = device.compile(math_kernel(dt, 16, alone), {.mode = CompileMode::Frozen});
    EXPECT_FALSE(program.ok()) << device.id() << " " << op_name(op);
    if (!program.ok() && !info.fixed_function()) {
      EXPECT_EQ(program.error().code, ErrorCode::Unsupported) << program.error().to_string();
      EXPECT_NE(program.error().message.find(op_name(op) + " " + std::string(ir::dtype_name(dt))), std::string::npos)
          << program.error().to_string();
    }
    refused += " " + op_name(op);
  }
  if (ops.empty()) return "none of the ops runs or lowers here (refused by name:" + refused + ")";
  ir::Kernel kernel = math_kernel(dt, kN, ops);
  Columns in;
  for (ir::UnaryOp op : ops) in.push_back(math_inputs(op, kN, 5));
  const Columns want = run_interpreter(kernel, dt, in);
  if (optimize_first) {  // the tuned path: lowered in finalize, before exp_base and fuse_mad
    Result<ir::Kernel> optimized = passes::optimize(kernel, {}, info);
    EXPECT_TRUE(optimized.ok()) << optimized.error().to_string();
    if (!optimized.ok()) return "";
    kernel = std::move(optimized).value();
  }
  Result<Columns> got = run_device(device, kernel, dt, in);
  if (!got.ok() && info.fixed_function()) return "fixed-function (" + got.error().to_string() + ")";
  EXPECT_TRUE(got.ok()) << device.id() << " " << ir::dtype_name(dt) << ": " << got.error().to_string();
  if (!got.ok()) return "";
  for (std::size_t k = 0; k < ops.size(); ++k) {
    // sigmoid and expm1 are an exp of x: 2|x| ulp more, as Vulkan allows exp
    // (3 + 2|x|) and exp_base's exp2(x log2 e) costs (f32/f64 only).
    const bool exp_of_x = ops[k] == ir::UnaryOp::Sigmoid || ops[k] == ir::UnaryOp::Expm1;
    const bool wide = dt == ir::DType::F32 || dt == ir::DType::F64;
    const Worst w = worst_error(dt, in[k], (*got)[k], want[k],
                                [&](double x) { return exp_of_x && wide ? 2 * std::fabs(x) : 0.0; });
    const bool claimed = info.supports_unary(static_cast<unsigned>(ops[k]), static_cast<unsigned>(dt));
    EXPECT_LE(w.ulps, tolerance(dt, ops[k]))
        << device.id() << " (" << info.name << ") " << ir::dtype_name(dt) << (claimed ? " native " : " lowered ")
        << describe(ops[k], w);
    if (!optimize_first)
      std::printf("  %-9s %-22.22s %-5s %-8s %-8s worst %7.2f ulp\n", device.id().c_str(), info.name.c_str(),
                  std::string(ir::dtype_name(dt)).c_str(), op_name(ops[k]).c_str(), claimed ? "native" : "lowered",
                  w.ulps);
  }
  return refused.empty() ? "" : "refused by name:" + refused;
}

void check_plugin(const std::string& plugin, std::span<const ir::DType> dtypes) {
  const Runtime* runtime = runtime_for(plugin);
  if (runtime == nullptr) GTEST_SKIP() << "no runtime with the " << plugin << " plugin";
  const std::vector<DeviceInfo> devices = runtime->devices();
  if (devices.empty()) GTEST_SKIP() << "the " << plugin << " plugin has no device here";
  std::string skipped;
  int ran = 0;
  for (const DeviceInfo& listed : devices) {
    Result<Device> opened = runtime->device(listed.id);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    const Device& device = *opened;
    for (ir::DType dt : dtypes)
      for (bool optimize_first : {false, true}) {
        const std::string why = check_device(device, dt, optimize_first);
        if (!why.empty() && !optimize_first) skipped += " " + device.id() + " " + std::string(ir::dtype_name(dt)) + ": " + why + ";";
        if (why.empty() || why.starts_with("refused by name")) ++ran;
      }
  }
  // Nothing computed on any device (cblas: fixed-function): a visible skip,
  // after the refusals above were checked.
  if (ran == 0) GTEST_SKIP() << "no math op runs on " << plugin << ":" << skipped;
  if (!skipped.empty()) std::printf("skipped:%s\n", skipped.c_str());
}

constexpr ir::DType kAll[] = {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::F64};

}  // namespace

// math-native claims the ops (the interpreter runs them: exact); math-lowered
// ("math_ops": false) gets every op lowered, f64 erf excepted: refused.
TEST(MathDevices, Dummy) {
  const Runtime* runtime = runtime_for("dummy");
  ASSERT_NE(runtime, nullptr);
  const std::vector<ir::DType> dtypes = {ir::DType::F32, ir::DType::F16, ir::DType::BF16};
  check_plugin("dummy", dtypes);
  for (const DeviceInfo& listed : runtime->devices()) {
    const Device device = runtime->device(listed.id).value();
    const bool lowered = device.info().name == "math-lowered";
    for (ir::UnaryOp op : kMathOps)
      EXPECT_EQ(device.info().supports_unary(static_cast<unsigned>(op), KILN_DTYPE_F32), !lowered) << op_name(op);
    const ir::UnaryOp erf[] = {ir::UnaryOp::Erf};
    Result<Program> program = device.compile(math_kernel(ir::DType::F64, 16, erf), {.mode = CompileMode::Frozen});
    EXPECT_EQ(program.ok(), !lowered);
    if (lowered && !program.ok()) {
      EXPECT_EQ(program.error().code, ErrorCode::Unsupported);
      EXPECT_NE(program.error().message.find("erf f64"), std::string::npos) << program.error().to_string();
    }
  }
}

TEST(MathDevices, C) { check_plugin("c", kAll); }
TEST(MathDevices, Cblas) { check_plugin("cblas", kAll); }
TEST(MathDevices, OpenclPocl) { check_plugin("opencl", kAll); }
TEST(MathDevices, VulkanLavapipe) { check_plugin("vulkan", kAll); }
