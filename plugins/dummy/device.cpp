// The dummy's devices: DeviceInfo and model parameters entirely from the
// plugin options (every key is documented in docs/dummy.md).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "dummy.hpp"
#include "kiln/sdk/host_memory.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/device_filter.hpp>
#include "kiln/sdk/op_rules.hpp"
#include "kiln/sdk/plugin_entry.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::dummy {

namespace {

[[noreturn]] void bad_option(const std::string& key, const std::string& what) {
  sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "option '" + key + "' " + what);
}

// An integer option within [lo, hi].
std::uint64_t ranged(const sdk::Options& o, const std::string& path, std::string_view key, std::uint64_t fallback,
                     std::uint64_t lo, std::uint64_t hi) {
  const std::int64_t v = o.get_int(key, static_cast<std::int64_t>(fallback));
  if (v < 0 || static_cast<std::uint64_t>(v) < lo || static_cast<std::uint64_t>(v) > hi)
    bad_option(path + std::string(key), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                            ", got " + std::to_string(v));
  return static_cast<std::uint64_t>(v);
}

double positive_number(const sdk::Options& o, const std::string& path, std::string_view key, double fallback) {
  const double v = o.get_double(key, fallback);
  if (!(v >= 0) || v > 1e18) bad_option(path + std::string(key), "must be a number >= 0, got " + std::to_string(v));
  return v;
}

// A list of exactly three integers within [lo, hi].
std::array<std::uint64_t, 3> triple(const sdk::Options& o, const std::string& path, std::string_view key,
                                    std::array<std::uint64_t, 3> fallback, std::uint64_t lo, std::uint64_t hi) {
  if (!o.has(key)) return fallback;
  const std::vector<std::int64_t> list = o.get_int_list(key);
  if (list.size() != 3) bad_option(path + std::string(key), "must list 3 values (axes 0, 1, 2), got " + std::to_string(list.size()));
  std::array<std::uint64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (list[i] < 0 || static_cast<std::uint64_t>(list[i]) < lo || static_cast<std::uint64_t>(list[i]) > hi)
      bad_option(path + std::string(key), "values must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    out[i] = static_cast<std::uint64_t>(list[i]);
  }
  return out;
}

unsigned dtype_by_name(std::string_view name) {
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (sdk::dtype_name(dt) == name) return dt;
  return KILN_DTYPE_INVALID;
}

// Turns off the unary or binary op named `name` ("exp", "add") on `dt`;
// false when no op has that name.
bool drop_op_by_name(kiln_device_info& info, unsigned dt, std::string_view name) {
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u)
    if (sdk::unary_name(u) == name) return sdk::set_unary(info, dt, u, false), true;
  for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
    if (sdk::binary_name(b) == name) return sdk::set_binary(info, dt, b, false), true;
  return false;
}

std::uint32_t device_kind(const std::string& path, const std::string& name) {
  if (name == "cpu") return KILN_DEVICE_KIND_CPU;
  if (name == "gpu") return KILN_DEVICE_KIND_GPU;
  if (name == "accelerator") return KILN_DEVICE_KIND_ACCELERATOR;
  if (name == "virtual") return KILN_DEVICE_KIND_VIRTUAL;
  if (name == "unknown") return KILN_DEVICE_KIND_UNKNOWN;
  bad_option(path + "kind", "must be cpu, gpu, accelerator, virtual or unknown, got '" + name + "'");
}

void parse_dtypes(const sdk::Options& o, const std::string& path, kiln_device_info& info) {
  std::vector<std::string> names;
  if (o.has("dtypes")) {
    names = o.get_string_list("dtypes");
  } else {
    for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) names.emplace_back(sdk::dtype_name(dt));
  }
  // i64 (the index type) and bool (what comparisons give) are always there.
  names.emplace_back("i64");
  names.emplace_back("bool");
  for (const std::string& name : names) {
    const unsigned dt = dtype_by_name(name);
    if (dt == KILN_DTYPE_INVALID) bad_option(path + "dtypes", "names an unknown dtype '" + name + "'");
    sdk::set_all_ops(info, dt);  // the 1.1 math ops too: the interpreter runs them
  }
  const sdk::Options unsupported = o.get_object("unsupported_ops");
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) {
    const std::string key(sdk::dtype_name(dt));
    for (const std::string& op : unsupported.get_string_list(key)) {
      if (!drop_op_by_name(info, dt, op))
        bad_option(path + "unsupported_ops." + key, "names an unknown op '" + op + "'");
    }
  }
  unsupported.warn_unknown_keys(kPluginName);
}

DeviceConfig parse_device(const sdk::Options& o, const std::string& path, std::size_t index) {
  DeviceConfig c;
  kiln_device_info& info = c.info;
  std::memset(&info, 0, sizeof(info));  // padding too: the struct is hashed
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  sdk::copy_string(info.name, o.get_string("name", index == 0 ? "dummy-gpu" : "dummy-gpu-" + std::to_string(index)));
  sdk::copy_string(info.vendor, o.get_string("vendor", "kiln"));
  sdk::copy_string(info.driver_version, o.get_string("driver_version", kPluginVersion));
  sdk::copy_string(info.pci_bus_id, o.get_string("pci_bus_id", ""));
  info.kind = device_kind(path, o.get_string("kind", "virtual"));
  info.warp_size = static_cast<std::uint32_t>(ranged(o, path, "warp_size", 32, 1, 1024));
  info.max_local_threads = static_cast<std::uint32_t>(ranged(o, path, "max_local_threads", 1024, 1, 65536));
  const auto local_dims = triple(o, path, "max_local_dims", {1024, 1024, 64}, 1, 65536);
  for (std::size_t i = 0; i < 3; ++i) info.max_local_dims[i] = static_cast<std::uint32_t>(local_dims[i]);
  const auto grid_dims = triple(o, path, "max_grid_dims", {2147483647, 65535, 65535}, 1, 1ull << 62);
  for (std::size_t i = 0; i < 3; ++i) info.max_grid_dims[i] = grid_dims[i];
  info.local_memory_bytes = ranged(o, path, "local_memory_bytes", 48 * 1024, 0, 1ull << 30);
  info.register_bytes = ranged(o, path, "register_bytes", 1024, 0, 1ull << 20);
  info.compute_units = static_cast<std::uint32_t>(ranged(o, path, "compute_units", 32, 1, 1u << 20));
  info.clock_mhz = static_cast<std::uint32_t>(ranged(o, path, "clock_mhz", 1500, 1, 1u << 20));
  info.memory_bytes = ranged(o, path, "memory_bytes", 8ull << 30, 1, 1ull << 50);
  const auto caches = triple(o, path, "cache_bytes", {128 * 1024, 4 << 20, 0}, 0, 1ull << 40);
  for (std::size_t i = 0; i < 3; ++i) info.cache_bytes[i] = caches[i];

  info.vector_widths = 1u << 1;
  std::vector<std::int64_t> widths = {1, 2, 4};
  if (o.has("vector_widths")) widths = o.get_int_list("vector_widths");
  for (std::int64_t w : widths) {
    if (w < 1 || w > KILN_MAX_LANES) bad_option(path + "vector_widths", "lane counts must be 1..16, got " + std::to_string(w));
    info.vector_widths |= 1u << w;
  }
  const bool native_exp2 = o.get_bool("native_exp2", true);
  // "host_memory": false simulates a discrete GPU's memory: the core then
  // copies between it and host-memory devices instead of sharing pointers,
  // and `kiln bench` sets its memory kernels against a device copy.
  const bool host_memory = o.get_bool("host_memory", true);
  info.flags = KILN_DEVICE_CAN_COMPILE | (host_memory ? KILN_DEVICE_HOST_MEMORY : 0u) |
               (native_exp2 ? KILN_DEVICE_NATIVE_EXP2 : 0u);
  parse_dtypes(o, path, info);
  // "math_ops": false makes a device without the ABI 1.1 math ops (tanh,
  // erf, sigmoid, rsqrt, log1p, expm1) on every dtype: the core then lowers
  // them (docs/passes.md, lower_math), which the tests check end to end.
  if (!o.get_bool("math_ops", true))
    for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) sdk::set_unary_after_1_0(info, dt, [](unsigned) { return false; });
  // MMA runs on the interpreter like every op; a device claims it only when
  // asked (the default device is not a tensor-core GPU), with every shape's
  // feature bit and the fragments' vector widths (2, 4, 8 lanes).
  if (o.get_bool("mma", false)) {
    sdk::set_op_kind(info, KILN_DTYPE_F32, KILN_OP_MMA);
    sdk::set_feature(info, KILN_FEATURE_MMA_M16N8K16_F16);
    sdk::set_feature(info, KILN_FEATURE_MMA_M16N8K16_BF16);
    sdk::set_feature(info, KILN_FEATURE_MMA_M16N8K8_TF32);
    info.vector_widths |= (1u << 2) | (1u << 4) | (1u << 8);
  }
  // COPY_ASYNC (with COPY_COMMIT and COPY_WAIT) likewise: the interpreter
  // writes a copy at the wait that covers it, as late as a device may.
  if (o.get_bool("copy_async", false)) sdk::set_copy_async(info);
  // LOAD_MATRIX likewise (the warp's 8 x 8 matrix loads).
  if (o.get_bool("load_matrix", false)) sdk::set_load_matrix(info);
  // WGMMA (with its fence, commit and wait) likewise: the interpreter does a
  // warp group's MMA at the wait that covers it.
  if (o.get_bool("wgmma", false)) sdk::set_wgmma(info);

  // SUBGROUP_REDUCE likewise, when asked (the tests that exercise it and
  // its tiled_reduce form), in subgroups of warp_size (2..64).
  if (o.get_bool("subgroup_reduce", false)) {
    if (info.warp_size < 2 || info.warp_size > sdk::kMaxSubgroupWidth || (info.warp_size & (info.warp_size - 1)) != 0)
      bad_option(path + "subgroup_reduce", "needs a warp_size that is a power of two from 2 to 64, not " +
                                               std::to_string(info.warp_size));
    sdk::set_subgroup_reduce(info);
  }

  // DOT_BF16 and BF16_PAIR likewise, when asked (the tests of pack_tile's
  // bf16 form on a device that claims them), with the CPU feature bit.
  if (o.get_bool("dot_bf16", false)) {
    sdk::set_dot_bf16(info);
    sdk::set_feature(info, KILN_FEATURE_CPU_AVX512_BF16);
  }

  // PREFETCH likewise, when asked (the tests of prefetch_rows on a device
  // that claims it; the interpreter does nothing for it).
  if (o.get_bool("prefetch", false)) sdk::set_prefetch(info);

  // Vector accesses at any element index likewise, when asked (the
  // interpreter runs them; vectorize then groups the loads of rows of odd
  // length, as on a CPU).
  if (o.get_bool("unaligned_vectors", false)) sdk::set_unaligned_vectors(info);
  // Or vector loads of buffers alone, as the CUDA plugin claims them.
  if (o.get_bool("unaligned_vector_loads", false)) sdk::set_unaligned_vector_loads(info);

  // Peak f32 rate: an FMA is two flops; by default each unit issues 4 warp
  // instructions per cycle.
  const double default_peak = 2.0 * info.compute_units * 4 * info.warp_size * info.clock_mhz / 1000.0;
  info.peak_gflops = positive_number(o, path, "peak_gflops", default_peak);
  if (info.peak_gflops == 0) bad_option(path + "peak_gflops", "must be > 0");
  info.memory_bandwidth_gbps = positive_number(o, path, "memory_bandwidth_gbps", 600);
  if (info.memory_bandwidth_gbps == 0) bad_option(path + "memory_bandwidth_gbps", "must be > 0");

  ModelParams& m = c.model;
  m.launch_overhead_ns = positive_number(o, path, "launch_overhead_ns", m.launch_overhead_ns);
  m.max_threads_per_unit = static_cast<std::uint32_t>(ranged(o, path, "max_threads_per_unit", m.max_threads_per_unit, 1, 1u << 20));
  m.max_groups_per_unit = static_cast<std::uint32_t>(ranged(o, path, "max_groups_per_unit", m.max_groups_per_unit, 1, 1u << 20));
  m.local_memory_per_unit = ranged(o, path, "local_memory_per_unit", 2 * info.local_memory_bytes, 0, 1ull << 40);
  m.register_file_bytes = ranged(o, path, "register_file_bytes", m.register_file_bytes, 1, 1ull << 40);
  m.latency_warps = static_cast<std::uint32_t>(ranged(o, path, "latency_warps", m.latency_warps, 1, 1u << 20));
  m.barrier_cycles = static_cast<std::uint32_t>(ranged(o, path, "barrier_cycles", m.barrier_cycles, 0, 1u << 20));
  m.sector_bytes = static_cast<std::uint32_t>(ranged(o, path, "sector_bytes", m.sector_bytes, 1, 4096));
  if ((m.sector_bytes & (m.sector_bytes - 1)) != 0) bad_option(path + "sector_bytes", "must be a power of two");
  m.f64_cost = positive_number(o, path, "f64_cost", m.f64_cost);
  o.warn_unknown_keys(kPluginName);

  std::uint64_t h = hash_bytes(&info, sizeof(info));
  for (double d : {m.launch_overhead_ns, m.f64_cost}) h = hash_bytes(&d, sizeof(d), h);
  for (std::uint64_t v : {std::uint64_t{m.max_threads_per_unit}, std::uint64_t{m.max_groups_per_unit}, m.local_memory_per_unit,
                          m.register_file_bytes, std::uint64_t{m.latency_warps}, std::uint64_t{m.barrier_cycles},
                          std::uint64_t{m.sector_bytes}})
    h = hash_bytes(&v, sizeof(v), h);
  c.options_hash = h;
  return c;
}

}  // namespace

std::unique_ptr<PluginState> parse_options(const sdk::Options& options) {
  auto result = std::make_unique<PluginState>();
  result->noise = options.get_double("noise", 0.0);
  if (!(result->noise >= 0 && result->noise <= 10)) bad_option("noise", "must be between 0 and 10");
  result->seed = static_cast<std::uint64_t>(options.get_int("seed", 0));
  result->max_ops = ranged(options, "", "max_ops", sdk::RunOptions{}.max_ops, 0, 1ull << 62);
  std::vector<sdk::Options> devices = options.get_object_list("simulate");
  if (options.has("simulate") && devices.empty()) bad_option("simulate", "lists no device");
  if (devices.empty()) devices.push_back(sdk::Options::parse("{}"));
  // "devices" is the filter every plugin reads (docs/config.md), here over
  // the simulated devices "simulate" makes.
  const sdk::DeviceFilter filter = sdk::DeviceFilter::read(options);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    auto device = std::make_unique<Device>();
    device->config = parse_device(devices[i], options.has("simulate") ? "simulate[" + std::to_string(i) + "]." : "", i);
    if (!filter.keeps(i, device->config.info.name)) continue;
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(device->config.options_hash));
    device->cache_key = std::string(kPluginName) + " " + kPluginVersion + " device-options " + hex;
    result->devices.push_back(std::move(device));
  }
  if (result->devices.empty()) sdk::fail(KILN_STATUS_UNAVAILABLE, "dummy: option 'devices' keeps none of the simulated devices");
  options.warn_unknown_keys(kPluginName);
  return result;
}

namespace {

std::size_t device_total() { return state().devices.size(); }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, device_total); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, device_total, [](std::uint32_t index) -> const kiln_device_info& {
    return state().devices[index]->config.info;
  });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, device_total, [](std::uint32_t index) {
    return reinterpret_cast<kiln_device*>(state().devices[index].get());
  });
}

// Nothing to release: a device is its configuration.
void device_close(kiln_device*) {}

}  // namespace

const sdk::DeviceFunctions kDeviceFunctions = {device_count, device_info, device_open, device_close,
                                                sdk::host_device_synchronize};

}  // namespace kiln::dummy
