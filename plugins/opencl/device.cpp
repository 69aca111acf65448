// Discovery: every platform and device the ICD loader offers (after the
// "platforms"/"devices" filters), described as kiln_device_info; open/close.
#include "opencl.hpp"

#include <kiln/sdk/handles.hpp>

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_entry.hpp>

#include <CL/cl_ext.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace kiln::opencl {

namespace {

// cl_nv_device_attribute_query ids missing from older cl_ext.h.
constexpr cl_device_info kPciBusIdNv = 0x4008;
constexpr cl_device_info kPciSlotIdNv = 0x4009;
constexpr cl_device_info kPciDomainIdNv = 0x400A;

template <class T>
T device_value(cl_device_id device, cl_device_info param, const char* what) {
  T value{};
  check_cl(cl().clGetDeviceInfo(device, param, sizeof(T), &value, nullptr), std::string("clGetDeviceInfo(") + what + ")");
  return value;
}

// Like device_value, but 0 when the device does not answer (vendor queries).
template <class T>
T optional_device_value(cl_device_id device, cl_device_info param) {
  T value{};
  if (cl().clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string device_string(cl_device_id device, cl_device_info param, const char* what) {
  std::size_t size = 0;
  check_cl(cl().clGetDeviceInfo(device, param, 0, nullptr, &size), std::string("clGetDeviceInfo(") + what + ")");
  std::string text(size, '\0');
  check_cl(cl().clGetDeviceInfo(device, param, size, text.data(), nullptr), std::string("clGetDeviceInfo(") + what + ")");
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  std::size_t size = 0;
  check_cl(cl().clGetPlatformInfo(platform, param, 0, nullptr, &size), "clGetPlatformInfo");
  std::string text(size, '\0');
  check_cl(cl().clGetPlatformInfo(platform, param, size, text.data(), nullptr), "clGetPlatformInfo");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// An empty filter keeps everything; otherwise one entry must be a
// case-insensitive substring of one of the names.
bool passes(const std::vector<std::string>& filter, std::initializer_list<std::string_view> names) {
  if (filter.empty()) return true;
  for (const std::string& wanted : filter)
    for (std::string_view name : names)
      if (lower(std::string(name)).find(lower(wanted)) != std::string::npos) return true;
  return false;
}

bool has_extension(const std::string& extensions, std::string_view name) {
  std::size_t pos = 0;
  while ((pos = extensions.find(name, pos)) != std::string::npos) {
    const std::size_t end = pos + name.size();
    const bool starts = pos == 0 || extensions[pos - 1] == ' ';
    const bool ends = end == extensions.size() || extensions[end] == ' ';
    if (starts && ends) return true;
    pos = end;
  }
  return false;
}

std::string pci_bus_id(cl_device_id device, const std::string& extensions) {
  char text[32] = {};
  if (has_extension(extensions, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr bus{};
    if (cl().clGetDeviceInfo(device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(bus), &bus, nullptr) == CL_SUCCESS) {
      std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", bus.pci_domain, bus.pci_bus, bus.pci_device,
                    bus.pci_function);
      return text;
    }
  }
  if (has_extension(extensions, "cl_nv_device_attribute_query")) {
    const auto bus = optional_device_value<cl_uint>(device, kPciBusIdNv);
    const auto slot = optional_device_value<cl_uint>(device, kPciSlotIdNv);
    const auto domain = optional_device_value<cl_uint>(device, kPciDomainIdNv);
    // The NV slot id packs device (bits 3..7) and function (bits 0..2).
    std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, bus, slot >> 3, slot & 7u);
    return text;
  }
  return {};
}

// The work-group size multiple a compiled kernel prefers: the SIMD width on
// GPUs whose vendor offers no direct query. Builds a one-line probe kernel.
std::uint32_t probe_simd_width(Device& d) {
  cl_int err = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.platform), 0};
  cl_context context = cl().clCreateContext(props, 1, &d.id, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return 1;
  const char* source = "kernel void kiln_probe(global float* x) { x[get_global_id(0)] = 0.0f; }";
  std::uint32_t width = 1;
  cl_program program = cl().clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  if (err == CL_SUCCESS && cl().clBuildProgram(program, 1, &d.id, "", nullptr, nullptr) == CL_SUCCESS) {
    cl_kernel kernel = cl().clCreateKernel(program, "kiln_probe", &err);
    if (err == CL_SUCCESS) {
      std::size_t multiple = 1;
      if (cl().clGetKernelWorkGroupInfo(kernel, d.id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof(multiple),
                                        &multiple, nullptr) == CL_SUCCESS)
        width = static_cast<std::uint32_t>(std::max<std::size_t>(multiple, 1));
      cl().clReleaseKernel(kernel);
    }
  }
  if (program != nullptr) cl().clReleaseProgram(program);
  cl().clReleaseContext(context);
  return width;
}

// Vector widths to offer: those the OpenCL dialect can write (OpenCL C has
// 2..16-lane vectors everywhere), up to the widest the device calls
// preferred or native, and at least 4 (a 128-bit access pays on every GPU).
std::uint32_t vector_widths(cl_device_id device) {
  cl_uint widest = 4;
  for (cl_device_info param : {CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
                               CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, CL_DEVICE_NATIVE_VECTOR_WIDTH_INT})
    widest = std::max(widest, optional_device_value<cl_uint>(device, param));
  const std::uint32_t up_to_widest = (2u << std::min<cl_uint>(widest, 16)) - 1;
  return sdk::c_family_vector_widths(sdk::opencl_dialect()) & (up_to_widest | (1u << 1));
}

void describe(Device& d) {
  kiln_device_info& info = d.info;
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  const std::string name = device_string(d.id, CL_DEVICE_NAME, "CL_DEVICE_NAME");
  const std::string vendor = device_string(d.id, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
  const std::string extensions = device_string(d.id, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
  sdk::copy_string(info.name, name);
  sdk::copy_string(info.vendor, vendor);
  sdk::copy_string(info.driver_version, device_string(d.id, CL_DRIVER_VERSION, "CL_DRIVER_VERSION"));
  sdk::copy_string(info.pci_bus_id, pci_bus_id(d.id, extensions));
  d.nvidia = has_extension(extensions, "cl_nv_device_attribute_query") || lower(vendor).find("nvidia") != std::string::npos;
  d.has_fp16 = has_extension(extensions, "cl_khr_fp16");
  d.has_fp64 = has_extension(extensions, "cl_khr_fp64") ||
               optional_device_value<cl_device_fp_config>(d.id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;

  const auto type = device_value<cl_device_type>(d.id, CL_DEVICE_TYPE, "CL_DEVICE_TYPE");
  const bool gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  const bool cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  info.kind = gpu ? KILN_DEVICE_KIND_GPU
              : cpu ? KILN_DEVICE_KIND_CPU
              : (type & CL_DEVICE_TYPE_ACCELERATOR) != 0 ? KILN_DEVICE_KIND_ACCELERATOR
                                                         : KILN_DEVICE_KIND_UNKNOWN;
  // exp2/log2 are the hardware's on GPUs; CPUs build both from polynomials.
  info.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_DEVICE_TIMER | (gpu ? KILN_DEVICE_NATIVE_EXP2 : 0u);

  info.memory_bytes = device_value<cl_ulong>(d.id, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
  info.local_memory_bytes = device_value<cl_ulong>(d.id, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");
  const auto max_group = device_value<std::size_t>(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  info.max_local_threads = static_cast<std::uint32_t>(std::min<std::size_t>(max_group, UINT32_MAX));
  std::array<std::size_t, 3> item_sizes{};
  check_cl(cl().clGetDeviceInfo(d.id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(item_sizes), item_sizes.data(), nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  for (int axis = 0; axis < 3; ++axis)
    info.max_local_dims[axis] = static_cast<std::uint32_t>(std::min<std::size_t>(item_sizes[axis], UINT32_MAX));
  // OpenCL bounds the global size (groups * local), not the group count; NVIDIA's
  // OpenCL runs on CUDA grids, whose y and z axes stop at 65535 groups.
  const std::uint64_t big = 0x7fffffffu;
  info.max_grid_dims[0] = big;
  info.max_grid_dims[1] = d.nvidia ? 65535u : big;
  info.max_grid_dims[2] = d.nvidia ? 65535u : big;
  info.compute_units = device_value<cl_uint>(d.id, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS");
  info.clock_mhz = device_value<cl_uint>(d.id, CL_DEVICE_MAX_CLOCK_FREQUENCY, "CL_DEVICE_MAX_CLOCK_FREQUENCY");

  if (d.nvidia) {
    info.warp_size = std::max<cl_uint>(optional_device_value<cl_uint>(d.id, CL_DEVICE_WARP_SIZE_NV), 1);
    const auto registers = optional_device_value<cl_uint>(d.id, CL_DEVICE_REGISTERS_PER_BLOCK_NV);
    // Registers per thread when a full block runs: 32-bit registers.
    if (registers != 0 && max_group != 0) info.register_bytes = std::uint64_t{registers} * 4 / max_group;
  } else if (cpu) {
    info.warp_size = 1;
  } else {
    info.warp_size = probe_simd_width(d);
  }

  info.vector_widths = vector_widths(d.id);
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) {
    // The emitter stores f16/bf16 as 16 bits and computes in f32 (the IR's
    // meaning), so they need no cl_khr_fp16; f64 needs the device's doubles.
    if (dt == KILN_DTYPE_F64 && !d.has_fp64) continue;
    sdk::set_c_family_caps(info, sdk::opencl_dialect(), dt);
  }

  // Vector accesses at any element index on a CPU device (PoCL): the
  // dialect's vloadn/vstoren take element-aligned addresses, and a CPU's
  // vector loads any address, so rows of odd length vectorize. Not claimed
  // on GPUs, whose vector loads need aligned addresses (vloadn would be split).
  if (cpu) sdk::set_unaligned_vectors(info);

  d.last_level_cache_bytes = device_value<cl_ulong>(d.id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE");
  // The global memory cache is the L2 of a GPU and the last level (L3) of a CPU.
  info.cache_bytes[gpu ? 1 : 2] = d.last_level_cache_bytes;

  // f32 peak for the cost model: an estimate, as OpenCL does not say how many
  // lanes a compute unit has (NVIDIA SM: 128; other GPUs: 64; a CPU core:
  // its preferred float vector width times two FMA pipes).
  const double lanes = d.nvidia ? 128.0
                       : gpu    ? 64.0
                                : 2.0 * std::max<cl_uint>(optional_device_value<cl_uint>(d.id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT), 1);
  info.peak_gflops = info.compute_units * lanes * 2.0 * info.clock_mhz / 1000.0;
  info.memory_bandwidth_gbps = 0;  // OpenCL has no query for it: unknown
}

}  // namespace

void discover_devices(PluginState& st) {
  cl_uint n_platforms = 0;
  const cl_int err = cl().clGetPlatformIDs(0, nullptr, &n_platforms);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && n_platforms == 0))
    sdk::fail(KILN_STATUS_UNAVAILABLE, "no OpenCL platform: the ICD loader found no driver (see /etc/OpenCL/vendors)");
  check_cl(err, "clGetPlatformIDs", KILN_STATUS_UNAVAILABLE);
  std::vector<cl_platform_id> platforms(n_platforms);
  check_cl(cl().clGetPlatformIDs(n_platforms, platforms.data(), nullptr), "clGetPlatformIDs", KILN_STATUS_UNAVAILABLE);

  std::vector<std::string> skipped;
  std::size_t ordinal = 0;  // among the devices of the platforms kept, for option 'devices'
  for (cl_platform_id platform : platforms) {
    const std::string name = platform_string(platform, CL_PLATFORM_NAME);
    const std::string vendor = platform_string(platform, CL_PLATFORM_VENDOR);
    if (!passes(st.settings.platforms, {name, vendor})) {
      skipped.push_back("platform '" + name + "' (not in option 'platforms')");
      continue;
    }
    cl_uint n_devices = 0;
    const cl_int derr = cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n_devices);
    if (derr != CL_SUCCESS || n_devices == 0) {
      skipped.push_back("platform '" + name + "': " + (derr != CL_SUCCESS ? cl_error_name(derr) : "no device"));
      continue;
    }
    std::vector<cl_device_id> ids(n_devices);
    check_cl(cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n_devices, ids.data(), nullptr), "clGetDeviceIDs");
    for (cl_device_id id : ids) {
      auto device = std::make_unique<Device>();
      device->platform = platform;
      device->id = id;
      device->platform_name = name;
      device->pocl = name == "Portable Computing Language";
      describe(*device);
      if (!st.settings.devices.keeps(ordinal++, device->info.name)) {
        skipped.push_back("device '" + std::string(device->info.name) + "' (not in option 'devices')");
        continue;
      }
      device->cache_key = std::string("opencl ") + kPluginVersion + "; " + name + "; " + device->info.name + "; " +
                          device->info.driver_version + "; options: " + st.settings.build_options;
      st.devices.push_back(std::move(device));
    }
  }
  if (st.devices.empty()) {
    std::string why = "no OpenCL device";
    for (std::size_t i = 0; i < skipped.size(); ++i) why += (i == 0 ? ": " : "; ") + skipped[i];
    sdk::fail(KILN_STATUS_UNAVAILABLE, why);
  }
}

void close_device(Device& d) {
  std::lock_guard lock(d.mutex);
  if (!d.open) return;
  if (d.lost) return;  // a kernel still runs on it: leak the queue rather than wait (plugin.h, timeout_ns)
  if (d.queue != nullptr) {
    cl().clFinish(d.queue);
    cl().clReleaseCommandQueue(d.queue);
  }
  if (d.flush_buffer != nullptr) cl().clReleaseMemObject(d.flush_buffer);
  if (d.context != nullptr) cl().clReleaseContext(d.context);
  d.queue = nullptr;
  d.flush_buffer = nullptr;
  d.context = nullptr;
  d.open = false;
}

Device& checked_device(kiln_device* device, const char* function) {
  Device& d = sdk::checked_device(device, state().devices, function);
  if (d.lost)
    sdk::fail(KILN_STATUS_DEVICE_LOST, std::string(function) + ": the device is lost: a timed kernel passed its time "
                                                               "limit and OpenCL cannot cancel it");
  return d;
}

std::size_t device_total() { return state().devices.size(); }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, device_total); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, device_total, [](std::uint32_t index) -> const kiln_device_info& {
    return state().devices[index]->info;
  });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, device_total, [](std::uint32_t index) {
    Device& d = *state().devices[index];
    std::lock_guard lock(d.mutex);
    if (!d.open) {
      cl_int err = CL_SUCCESS;
      const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.platform), 0};
      d.context = cl().clCreateContext(props, 1, &d.id, nullptr, nullptr, &err);
      check_cl(err, "clCreateContext", KILN_STATUS_UNAVAILABLE);
      d.queue = cl().clCreateCommandQueue(d.context, d.id, CL_QUEUE_PROFILING_ENABLE, &err);
      if (err != CL_SUCCESS) {
        cl().clReleaseContext(d.context);
        d.context = nullptr;
        check_cl(err, "clCreateCommandQueue", KILN_STATUS_UNAVAILABLE);
      }
      d.open = true;
    }
    return reinterpret_cast<kiln_device*>(&d);
  });
}

void device_close(kiln_device* device) {
  if (device == nullptr || !state_ready()) return;
  for (const auto& known : state().devices)
    if (known.get() == as_device(device)) close_device(*known);
}

kiln_error* device_synchronize(kiln_device* device) {
  return sdk::guard([&] {
    Device& d = checked_device(device, "device_synchronize");
    check_cl(cl().clFinish(d.queue), "clFinish", KILN_STATUS_LAUNCH_FAILED);
  });
}

const sdk::DeviceFunctions kDeviceFunctions = {device_count, device_info, device_open, device_close,
                                                device_synchronize};

}  // namespace kiln::opencl
