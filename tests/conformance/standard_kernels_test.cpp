// Conformance through the runtime: every standard kernel, at several sizes
// (odd ones included) and in every dtype it allows, on every device of every
// in-tree plugin, as a host app runs it: libkiln's loader, Device::compile,
// buffers, launch, read back, the C++ reference (kiln/kernels/run.hpp).
//
// What this checks that the ABI-level tests (tests/plugins/abi_conformance_test.cpp)
// cannot: the core's verifier, lowering and launch-grid computation in front
// of each plugin; DeviceInfo read by the loader and honoured (a device that
// claims every op and dtype a kernel uses must run it; one that does not may
// refuse it, but only with Unsupported naming the op); FIXED_FUNCTION
// devices (cblas) pass matmul and matmul-bt (f32/f64, k > 1) and refuse the
// rest cleanly; the
// timed-launch contract (runs, min <= median, timer kind as the flags say).
//
// One test per (plugin, kernel), so that ctest runs each in its own process
// with only that plugin loaded. A plugin that is not built, fails to load or
// has no device is a visible skip naming the runtime's reason. The dummy is
// enabled here with two devices: a GPU-shaped one that supports everything,
// and a narrow one (f32 and i64 only, no exp or exp2) whose refusals are checked.
#include <gtest/gtest.h>

#include "kiln/ir/dtype.hpp"
#include "kiln/kernels/run.hpp"
#include "kiln/runtime.hpp"

#include <kiln/sdk/wire.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kiln::test {
namespace {

using kernels::KernelSize;
using kernels::StandardKernel;

const char* const kPlugins[] = {"c", "cblas", "opencl", "vulkan", "cuda", "dummy"};

constexpr const char* kDummyOptions = R"({"simulate": [
    {"name": "conformance-gpu"},
    {"name": "conformance-narrow", "kind": "cpu", "warp_size": 1, "dtypes": ["f32"],
     "unsupported_ops": {"f32": ["exp", "exp2"]}}]})";

// A runtime with only `plugin` enabled (the dummy with its test devices), one
// per plugin for the life of the process: plugins are initialised once.
const Runtime& runtime_for(const std::string& plugin) {
  static std::map<std::string, std::unique_ptr<Runtime>> runtimes;
  auto& slot = runtimes[plugin];
  if (slot == nullptr) {
    std::string entries;
    for (const char* name : kPlugins) {
      const bool on = name == plugin;
      std::string entry = on ? R"({"enabled": true)" : R"({"enabled": false)";
      if (on && plugin == "dummy") entry += std::string(R"(, "options": )") + kDummyOptions;
      entries += (entries.empty() ? "" : ", ") + std::string("\"") + name + "\": " + entry + "}";
    }
    Result<Config> config = parse_config("{\"plugins\": {" + entries + "}}", "conformance-config.json");
    if (!config) throw ErrorException(config.error());
    Result<Runtime> runtime = Runtime::create(std::move(config).value());
    if (!runtime) throw ErrorException(runtime.error());
    slot = std::make_unique<Runtime>(std::move(runtime).value());
  }
  return *slot;
}

std::vector<KernelSize> sizes_for(const StandardKernel& probe) {
  const kernels::KernelDims dims = kernels::kernel_dims(probe);
  if (dims.k) return {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {2, 257, 9}};
  if (dims.m) return {{1, 1, 1}, {7, 257, 1}, {257, 7, 1}, {3, 1000, 1}};
  return {{1, 1, 1}, {1, 7, 1}, {1, 257, 1}, {1, 1000, 1}};
}

// Why the device does not claim what `kernel` uses (an empty string when it
// claims everything): each op kind on its dtype, each UNARY/BINARY op on its
// operand dtype (MAD: MUL and ADD), the source dtype of a CAST, vector widths.
std::string unclaimed(const DeviceInfo& device, const ir::Kernel& kernel) {
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    const std::string where = "op " + std::to_string(id) + " (" + std::string(sdk::op_kind_name(
                                                                       static_cast<unsigned>(op.kind))) + ")";
    const unsigned kind = static_cast<unsigned>(op.kind);
    const unsigned dt = static_cast<unsigned>(op.dtype);
    if (op.dtype != ir::DType::Invalid && !device.supports_op_kind(kind, dt))
      return where + ": dtype " + std::string(ir::dtype_name(op.dtype));
    if (op.lanes > 1 && (device.vector_width_mask & (1u << op.lanes)) == 0)
      return where + ": " + std::to_string(op.lanes) + " lanes";
    const unsigned operand = op.kind == ir::OpKind::Binary || op.kind == ir::OpKind::Cast
                                 ? static_cast<unsigned>(kernel[op.src[0]].dtype)
                                 : dt;
    bool claimed = true;
    if (op.kind == ir::OpKind::Unary) claimed = device.supports_unary(op.code, operand);
    if (op.kind == ir::OpKind::Binary) claimed = device.supports_binary(op.code, operand);
    if (op.kind == ir::OpKind::Mad)
      claimed = device.supports_binary(KILN_BINARY_MUL, operand) && device.supports_binary(KILN_BINARY_ADD, operand);
    if (op.kind == ir::OpKind::Cast) claimed = device.supports_op_kind(kind, operand);
    if (!claimed) return where + ": op code " + std::to_string(op.code) + " on " + std::string(sdk::dtype_name(operand));
  }
  return "";
}

// What cblas must run: matrix products in f32 and f64. Not k = 1: the
// always-on passes remove the unit reduction loop, and the plugin's matcher
// recognises products by their loop (a refusal there is still checked to be
// a clean Unsupported).
bool must_pass_on_fixed_function(const StandardKernel& kernel) {
  return (kernel.name == "matmul" || kernel.name == "matmul-bt") &&
         (kernel.dtype == ir::DType::F32 || kernel.dtype == ir::DType::F64) && kernel.size.k > 1;
}

class StandardKernels : public ::testing::TestWithParam<std::tuple<const char*, std::string_view>> {};

TEST_P(StandardKernels, MatchTheReferenceOrAreRefusedCleanly) {
  const std::string plugin = std::get<0>(GetParam());
  const std::string kernel_name(std::get<1>(GetParam()));
  const Runtime& runtime = runtime_for(plugin);
  const PluginRecord* record = runtime.plugin(plugin);
  ASSERT_NE(record, nullptr);
  if (record->status != PluginStatus::Loaded)
    GTEST_SKIP() << "plugin '" << plugin << "' " << plugin_status_name(record->status) << ": " << record->reason;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' loaded, but has no device";

  const StandardKernel probe = kernels::make_standard_kernel(kernel_name, {}).value();
  int passed = 0, refused = 0;
  for (const DeviceInfo& info : record->devices) {
    if (!info.can_compile()) continue;
    const Device device = runtime.device(info.id).value();
    bool timed = false;
    for (const KernelSize& size : sizes_for(probe)) {
      for (ir::DType dtype : probe.dtypes) {
        const StandardKernel kernel = kernels::make_standard_kernel(kernel_name, size, dtype).value();
        const std::string what = info.id + " " + kernel_name + " " + std::string(ir::dtype_name(dtype)) + " " +
                                 kernels::size_text(kernel);
        SCOPED_TRACE(what);
        const std::string not_claimed = unclaimed(info, kernel.kernel);
        const bool must_pass =
            info.fixed_function() ? must_pass_on_fixed_function(kernel) : not_claimed.empty();
        kernels::RunOptions options;
        options.seed = static_cast<std::uint64_t>(size.m * 1000003 + size.n * 1009 + size.k);
        options.time = !timed;  // the timing contract, once per device
        options.timing.warmups = 1;
        options.timing.repeats = 3;
        Result<kernels::RunReport> report = kernels::run_standard_kernel(device, kernel, options);
        if (!report) {
          const Error& e = report.error();
          if (must_pass) {
            ADD_FAILURE() << "must pass, failed: " << e.to_string();
          } else {
            // A refusal is legal only as Unsupported, naming the op at fault.
            EXPECT_EQ(e.code, ErrorCode::Unsupported) << e.to_string();
            EXPECT_GE(e.op, 0) << "a refusal names no op: " << e.to_string();
            EXPECT_LT(e.op, static_cast<std::int64_t>(kernel.kernel.size())) << e.to_string();
            EXPECT_EQ(e.function, "compile") << e.to_string();
            ++refused;
          }
          continue;
        }
        EXPECT_TRUE(report->ok) << "max relative error " << report->max_rel_err << " in output "
                                << report->worst_output << " > tolerance " << report->tolerance
                                << (must_pass ? "" : " (the device does not claim: " + not_claimed + ")");
        ++passed;
        if (report->timing) {
          timed = true;
          const Timing& t = *report->timing;
          EXPECT_TRUE(t.runs == 3 || (t.aborted && t.runs >= 1)) << t.runs << " runs";
          EXPECT_EQ(t.samples_ns.size(), t.runs);
          EXPECT_LE(t.min_ns, t.median_ns);
          // A device timer where the flags promise one; else the host clock
          // or, for simulated devices, the model.
          if (info.device_timer()) EXPECT_EQ(t.timer, TimerKind::Device) << timer_kind_name(t.timer);
          else EXPECT_NE(t.timer, TimerKind::Device) << "no KILN_DEVICE_DEVICE_TIMER flag";
        }
      }
    }
  }
  RecordProperty("passed", passed);
  RecordProperty("refused", refused);
  if (passed == 0 && refused == 0) GTEST_SKIP() << "no device of '" << plugin << "' can compile";
}

std::string test_name(const ::testing::TestParamInfo<StandardKernels::ParamType>& info) {
  std::string name = std::string(std::get<0>(info.param)) + "_" + std::string(std::get<1>(info.param));
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Plugins, StandardKernels,
                         ::testing::Combine(::testing::ValuesIn(kPlugins),
                                            ::testing::ValuesIn(kernels::standard_kernel_names().begin(),
                                                                kernels::standard_kernel_names().end())),
                         test_name);

}  // namespace
}  // namespace kiln::test
