// Device: memory, compile and cache key. Launches are in launch.cpp.
#include "kiln/runtime/device.hpp"

#include "device_limits.hpp"
#include "device_state.hpp"
#include "plugin_probe.hpp"
#include "passes/always_on.hpp"
#include "plugin_text.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/wire.hpp>
#include "kiln/ir/verify.hpp"

namespace kiln {

const DeviceInfo& Device::info() const {
  static const DeviceInfo none{};
  return state_ != nullptr ? state_->info() : none;
}

Result<MemoryInfo> Device::memory_info() const {
  if (state_->api().memory_info == nullptr) return state_->missing("memory_info");
  kiln_memory_info_args args{};
  args.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
  args.device = state_->handle();
  if (kiln_error* err = state_->api().memory_info(&args)) return state_->error(err, "memory_info");
  return MemoryInfo{args.free_bytes, args.total_bytes};
}

Result<Buffer> Device::allocate(std::uint64_t bytes) const {
  if (bytes == 0) {
    Error e = make_error(ErrorCode::InvalidArgument, id() + ": cannot allocate 0 bytes");
    e.function = "buffer_alloc";
    return e;
  }
  const kiln_plugin_api& api = state_->api();
  if (api.buffer_alloc == nullptr) return state_->missing("buffer_alloc");
  // A large request is checked against the free memory first: a host-memory
  // plugin may "succeed" lazily and the process die when the pages are touched.
  constexpr std::uint64_t kCheckedFrom = std::uint64_t{256} << 20;
  if (bytes >= kCheckedFrom && api.memory_info != nullptr) {
    if (Result<MemoryInfo> memory = memory_info(); memory.ok() && memory->free_bytes != 0 && bytes > memory->free_bytes) {
      Error e = make_error(ErrorCode::OutOfMemory, id() + ": " + std::to_string(bytes) + " bytes (" +
                                                       std::to_string(bytes >> 20) + " MiB) requested, " +
                                                       std::to_string(memory->free_bytes >> 20) + " MiB free of " +
                                                       std::to_string(memory->total_bytes >> 20) + " MiB");
      e.plugin = state_->plugin();
      e.device = id();
      e.function = "buffer_alloc";
      return e;
    }
  }
  kiln_buffer_alloc_args args{};
  args.struct_size = KILN_BUFFER_ALLOC_ARGS_STRUCT_SIZE;
  args.device = state_->handle();
  args.bytes = bytes;
  if (kiln_error* err = api.buffer_alloc(&args)) return state_->error(err, "buffer_alloc");
  Buffer buffer;
  buffer.device_ = state_;
  buffer.buffer_ = args.buffer;
  buffer.bytes_ = bytes;
  if (info().host_memory()) {
    // Kept so a launch on another host-memory device can use it without a copy.
    if (api.buffer_host_pointer == nullptr) return state_->missing("buffer_host_pointer");
    kiln_buffer_host_pointer_args pointer{};
    pointer.struct_size = KILN_BUFFER_HOST_POINTER_ARGS_STRUCT_SIZE;
    pointer.device = state_->handle();
    pointer.buffer = args.buffer;
    if (kiln_error* err = api.buffer_host_pointer(&pointer)) return state_->error(err, "buffer_host_pointer");
    buffer.host_pointer_ = pointer.pointer;
  }
  return buffer;
}

Result<void> Device::synchronize() const {
  if (state_->api().device_synchronize == nullptr) return state_->missing("device_synchronize");
  std::lock_guard lock(state_->queue_mutex());
  if (kiln_error* err = state_->api().device_synchronize(state_->handle()))
    return state_->error(err, "device_synchronize");
  return {};
}

namespace {

// A math op of ABI 1.1 (TANH ... EXPM1) on a dtype the device does not claim.
bool unclaimed_math(const ir::Op& op, const DeviceInfo& info) {
  return op.kind == ir::OpKind::Unary && op.code >= sdk::kUnaryOps1_0 &&
         !info.supports_unary(op.code, static_cast<unsigned>(op.dtype));
}

// Why `op` may not reach the device ("KIND DTYPE): reason"), or "" when it
// may: what the ABI sends only to devices that claim it.
std::string unclaimed(const ir::Kernel& kernel, const ir::Op& op, const DeviceInfo& info) {
  const unsigned kind = static_cast<unsigned>(op.kind);
  const unsigned dtype = static_cast<unsigned>(op.dtype);
  const std::string type(sdk::dtype_name(dtype));
  // plugin.h: an op kind appended after ABI 1.0 reaches only a device that
  // claims it (a 1.0 plugin has never heard of it). COPY_COMMIT and
  // COPY_WAIT have no dtype: they come with COPY_ASYNC; WGMMA_FENCE, _COMMIT
  // and _WAIT likewise with WGMMA.
  const bool typeless_copy = kind == KILN_OP_COPY_COMMIT || kind == KILN_OP_COPY_WAIT;
  const bool typeless_wgmma = kind == KILN_OP_WGMMA_FENCE || kind == KILN_OP_WGMMA_COMMIT || kind == KILN_OP_WGMMA_WAIT;
  const bool claimed = typeless_copy    ? info.op_kind_dtypes[KILN_OP_COPY_ASYNC] != 0
                       : typeless_wgmma ? info.op_kind_dtypes[KILN_OP_WGMMA] != 0
                                        : info.supports_op_kind(kind, dtype);
  if (kind >= sdk::kOpKinds1_0 && !claimed)
    return std::string(sdk::op_kind_name(kind)) + " " + type + "): the device does not claim this op kind";
  // kernel_ir.h: a vector access at any element index reaches only a device
  // that claims it (a LOAD also one that claims such loads alone).
  const bool load = op.kind == ir::OpKind::Load, of_buffer = load && kernel[op.src[0]].kind == ir::OpKind::Param;
  if ((load || op.kind == ir::OpKind::Store) && op.attr == KILN_ACCESS_UNALIGNED &&
      !info.has_feature(KILN_FEATURE_UNALIGNED_VECTORS) && !(of_buffer && info.has_feature(KILN_FEATURE_UNALIGNED_VECTOR_LOADS)))
    return std::string(sdk::op_kind_name(kind)) + " unaligned " + type + "x" + std::to_string(op.lanes) +
           "): the device does not claim vector " + (load ? "loads" : "stores") +
           " at any element index (KILN_FEATURE_UNALIGNED_VECTORS" +
           (load ? " or, from a buffer, KILN_FEATURE_UNALIGNED_VECTOR_LOADS)" : ")");
  // plugin.h: a device runs subgroups up to its warp_size wide.
  if (op.kind == ir::OpKind::SubgroupReduce && op.attr > info.warp_size)
    return "subgroup_reduce " + type + "): subgroups of " + std::to_string(op.attr) + " threads, wider than the device's " +
           std::to_string(info.warp_size) + " (warp_size)";
  // kernel_ir.h: a unary op appended after 1.0 reaches only a device that
  // claims it; what lower_math could not rewrite (its form needs an op the
  // device lacks, or f64 erf) is refused here by name.
  if (unclaimed_math(op, info))
    return std::string(sdk::unary_name(op.code)) + " " + type +
           "): the device does not claim this op, and kiln cannot lower it to ops the device has "
           "(docs/passes.md, lower_math)";
  return {};
}

}  // namespace

Result<Program> Device::compile_exactly(const ir::Kernel& source, passes::BoundsPolicy bounds) const {
  // The ABI promises plugins only verified kernels.
  if (auto verified = ir::verify(source); !verified.ok()) {
    Error error = std::move(verified).error();
    error.function = "compile";
    return error;
  }
  // A math op the device does not claim is lowered to ops it has
  // (passes/lower_math.cpp). optimize's finalize did it already for tuned
  // kernels; this is for every other way in. Untouched kernels keep their op
  // numbers for the plugin's failed_op.
  // Likewise a PREFETCH it does not claim is dropped (a hint: no result
  // depends on it).
  bool lowers = passes::detail::has_unclaimed_prefetch(source, state_->info());
  for (const ir::Op& op : source.ops) lowers = lowers || unclaimed_math(op, state_->info());
  const ir::Kernel lowered =
      lowers ? passes::detail::lower_math(passes::detail::drop_unclaimed_prefetch(source, state_->info()), state_->info())
             : ir::Kernel{};
  const ir::Kernel& given = lowers ? lowered : source;
  // The one place below which plugins are called: every path (run, tune and
  // its candidates, host applications) passes the bounds policy here.
  Result<passes::BoundedKernel> bounded = passes::apply_bounds_policy(given, bounds);
  if (!bounded.ok()) {
    Error error = std::move(bounded).error();
    error.device = id();
    error.function = "compile";
    return error;
  }
  const ir::Kernel& kernel = bounded->kernel;
  KILN_TRY(detail::check_device_limits(kernel, info()));
  if (state_->api().compile == nullptr) return state_->missing("compile");
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (const std::string why = unclaimed(kernel, kernel[id], state_->info()); !why.empty()) {
      Error e = make_error(ErrorCode::Unsupported, "op " + std::to_string(id) + " (" + why);
      e.plugin = state_->plugin();
      e.device = state_->info().id;
      e.function = "compile";
      e.op = id;
      return e;
    }
  Program program;
  program.wire_ = kernel.to_wire();
  program.bounds_checks_.assign(bounded->launch_checks.begin(), bounded->launch_checks.end());
  kiln_kernel wire{};
  wire.struct_size = KILN_KERNEL_STRUCT_SIZE;
  wire.ops = program.wire_.data();
  wire.n_ops = program.wire_.size();
  wire.op_size = sizeof(kiln_op);
  KILN_TRY(compile_in_probe(program.wire_));
  kiln_compile_args args{};
  args.struct_size = KILN_COMPILE_ARGS_STRUCT_SIZE;
  args.device = state_->handle();
  args.kernel = &wire;
  args.failed_op = -1;
  // [any thread]: no queue lock, compiles may run side by side.
  if (kiln_error* err = state_->api().compile(&args)) return state_->error(err, "compile", args.failed_op);
  program.device_ = state_;
  program.program_ = args.program;
  return program;
}

Result<void> Device::compile_in_probe(const std::vector<kiln_op>& wire) const {
  auto refused = [&](const std::string& why) {
    Error e = make_error(ErrorCode::Unavailable, why);
    e.plugin = state_->plugin();
    e.device = id();
    e.function = "compile";
    return e;
  };
  if (std::optional<std::string> reason = state_->library().quarantine_reason())
    return refused("plugin '" + state_->plugin() + "' is quarantined for this process: its compile " + *reason);
  if (!isolate_compile_) return {};
  std::string problem;
  const detail::ProbeSettings settings = detail::probe_settings(problem);
  if (settings.executable.empty())
    return refused("isolate_compile is set, but the probe executable (kiln/kiln-plugin-probe next to libkiln) is "
                   "not installed: nothing was compiled");
  const detail::CompileProbeRequest request{state_->info().index, &wire};
  detail::PluginProbe probe = detail::PluginProbe::start(settings, state_->library().path(),
                                                         state_->library().init_options(), KILN_ABI_MINOR, &request);
  if (detail::ProbeVerdict verdict = probe.verdict()) {
    state_->library().quarantine(*verdict);
    Error e = refused("compile " + *verdict + "; plugin '" + state_->plugin() +
                      "' is quarantined for this process: later compiles on it are refused");
    e.code = ErrorCode::Internal;
    return e;
  }
  return {};
}

Result<std::string> Device::cache_key() const {
  if (state_->api().cache_key == nullptr) return state_->missing("cache_key");
  kiln_cache_key_args args{};
  args.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  args.device = state_->handle();
  if (kiln_error* err = state_->api().cache_key(&args)) return state_->error(err, "cache_key");
  return args.key != nullptr ? detail::sanitize_plugin_text(args.key, detail::TextKind::Line) : std::string();
}

}  // namespace kiln
