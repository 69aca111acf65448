// Discovery: physical devices with a compute queue, their capabilities and
// the kiln_device_info the core sees; the ABI's device functions (count,
// info, open, close) over the discovered devices.
#include "device.hpp"

#include "pool.hpp"
#include "vulkan.hpp"

#include "vk_check.hpp"
#include "vk_struct.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace kiln::vulkan {

namespace {

std::string vendor_name(std::uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case VK_VENDOR_ID_MESA: return "Mesa";
    case VK_VENDOR_ID_POCL: return "PoCL";
    default: {
      char text[32];
      std::snprintf(text, sizeof text, "vendor 0x%04x", id);
      return text;
    }
  }
}

// Driver version numbers are vendor-encoded; used only when the device has
// no VkPhysicalDeviceDriverProperties.
std::string driver_version_number(std::uint32_t vendor, std::uint32_t v) {
  char text[48];
  if (vendor == 0x10DE)
    std::snprintf(text, sizeof text, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
  else
    std::snprintf(text, sizeof text, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                  VK_API_VERSION_PATCH(v));
  return text;
}

kiln_device_kind kind_of(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return KILN_DEVICE_KIND_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return KILN_DEVICE_KIND_CPU;
    default:
      return KILN_DEVICE_KIND_UNKNOWN;
  }
}

std::set<std::string, std::less<>> device_extensions(const Instance& instance, VkPhysicalDevice device) {
  std::uint32_t count = 0;
  instance.functions().vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> list(count);
  instance.functions().vkEnumerateDeviceExtensionProperties(device, nullptr, &count, list.data());
  std::set<std::string, std::less<>> names;
  for (const auto& e : list) names.insert(e.extensionName);
  return names;
}

// The compute queue family to use: a compute-only family (NVIDIA's async
// compute queues) when it has timestamps, else the first with compute.
// Returns false when there is none.
bool pick_queue_family(const Instance& instance, VkPhysicalDevice device, DeviceCaps& caps) {
  std::uint32_t count = 0;
  instance.functions().vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  instance.functions().vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  int best = -1;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& f = families[i];
    if (!(f.queueFlags & VK_QUEUE_COMPUTE_BIT) || f.queueCount == 0) continue;
    const bool dedicated = !(f.queueFlags & VK_QUEUE_GRAPHICS_BIT) && f.timestampValidBits > 0;
    if (best < 0 || dedicated) best = static_cast<int>(i);
    if (dedicated) break;
  }
  if (best < 0) return false;
  caps.queue_family = static_cast<std::uint32_t>(best);
  caps.timestamp_valid_bits = families[best].timestampValidBits;
  return true;
}


void fill_info(const VkPhysicalDeviceProperties& p, const VkPhysicalDeviceSubgroupProperties& subgroup,
               const VkPhysicalDeviceDriverProperties* driver, const VkPhysicalDevicePCIBusInfoPropertiesEXT* pci,
               std::uint32_t sm_count, const DeviceCaps& caps, kiln_device_info& info) {
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  sdk::copy_string(info.name, p.deviceName);
  sdk::copy_string(info.vendor, vendor_name(p.vendorID));
  if (driver != nullptr)
    sdk::copy_string(info.driver_version, std::string(driver->driverName) + " " + driver->driverInfo);
  else
    sdk::copy_string(info.driver_version, driver_version_number(p.vendorID, p.driverVersion));
  if (pci != nullptr) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.%x", pci->pciDomain, pci->pciBus, pci->pciDevice,
                  pci->pciFunction);
    sdk::copy_string(info.pci_bus_id, bus);
  }
  info.kind = kind_of(p.deviceType);
  info.flags = KILN_DEVICE_CAN_COMPILE;
  if (p.limits.timestampComputeAndGraphics && p.limits.timestampPeriod > 0 && caps.timestamp_valid_bits > 0)
    info.flags |= KILN_DEVICE_DEVICE_TIMER;
  if (info.kind == KILN_DEVICE_KIND_GPU) info.flags |= KILN_DEVICE_NATIVE_EXP2;
  for (std::uint32_t h = 0; h < caps.memory.memoryHeapCount; ++h)
    if (caps.memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.memory_bytes += caps.memory.memoryHeaps[h].size;
  info.local_memory_bytes = p.limits.maxComputeSharedMemorySize;
  // gl_WorkGroupID is 32-bit; larger grids than maxComputeWorkGroupCount are
  // split into several vkCmdDispatchBase calls (launch.cpp).
  for (int axis = 0; axis < 3; ++axis) {
    info.max_grid_dims[axis] = UINT32_MAX;
    info.max_local_dims[axis] = p.limits.maxComputeWorkGroupSize[axis];
  }
  info.max_local_threads = p.limits.maxComputeWorkGroupInvocations;
  info.compute_units = sm_count;
  info.warp_size = std::max<std::uint32_t>(subgroup.subgroupSize, 1);
  info.vector_widths = sdk::c_family_vector_widths(sdk::glsl_dialect());  // vec2..vec4
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (dtype_supported(caps, dt)) sdk::set_c_family_caps(info, sdk::glsl_dialect(), dt);
  // SUBGROUP_REDUCE on the types subgroupShuffleXor takes (the GLSL
  // dialect), where the subgroup size is fixed. Vulkan promises no order of
  // invocations in subgroups; kiln relies on the linear one (consecutive
  // gl_LocalInvocationIndex), which the drivers with one fixed size use
  // (lavapipe: tests/passes/opt_tiled_reduce_subgroup_devices_test.cpp).
  if (caps.fixed_subgroup_shuffles)
    for (unsigned dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F64, KILN_DTYPE_I32, KILN_DTYPE_U32})
      if (dtype_supported(caps, dt)) sdk::set_op_kind(info, dt, KILN_OP_SUBGROUP_REDUCE);
}

}  // namespace


bool dtype_supported(const DeviceCaps& caps, unsigned dtype) {
  switch (dtype) {
    case KILN_DTYPE_F32: case KILN_DTYPE_U32: case KILN_DTYPE_I32:
      return true;
    case KILN_DTYPE_BOOL:  // a uint8_t in memory
      return caps.storage8 && caps.int8;
    case KILN_DTYPE_U8: case KILN_DTYPE_I8:
      return caps.storage8 && caps.int8;
    case KILN_DTYPE_U16: case KILN_DTYPE_I16:
      return caps.storage16 && caps.int16;
    case KILN_DTYPE_F16: case KILN_DTYPE_BF16:  // uint16_t in memory, computed as f32
      return caps.storage16 && caps.int16;
    case KILN_DTYPE_F64:
      return caps.float64;
    case KILN_DTYPE_U64: case KILN_DTYPE_I64:
      return caps.int64;
    default:
      return false;
  }
}

std::uint32_t supported_ops(const DeviceCaps& caps, unsigned dtype) {
  return dtype_supported(caps, dtype) ? sdk::c_family_dtype_ops(sdk::glsl_dialect(), dtype) : 0;
}

std::vector<PhysicalDevice> discover_devices(const Instance& instance, const sdk::DeviceFilter& filter) {
  const InstanceFunctions& vk = instance.functions();
  std::uint32_t count = 0;
  vk_check(vk.vkEnumeratePhysicalDevices(instance.handle(), &count, nullptr), "vkEnumeratePhysicalDevices",
           KILN_STATUS_UNAVAILABLE);
  std::vector<VkPhysicalDevice> handles(count);
  vk_check(vk.vkEnumeratePhysicalDevices(instance.handle(), &count, handles.data()), "vkEnumeratePhysicalDevices",
           KILN_STATUS_UNAVAILABLE);

  std::vector<PhysicalDevice> devices;
  std::uint32_t compute_index = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    PhysicalDevice d;
    d.handle = handles[i];
    d.vulkan_index = i;
    VkPhysicalDeviceProperties basic{};
    vk.vkGetPhysicalDeviceProperties(d.handle, &basic);
    if (basic.apiVersion < VK_API_VERSION_1_1) {
      sdk::Host::log(KILN_LOG_INFO, std::string("skipping ") + basic.deviceName + ": Vulkan 1.0 device (1.1 needed)");
      continue;
    }
    if (!pick_queue_family(instance, d.handle, d.caps)) continue;
    const std::uint32_t my_index = compute_index++;
    if (!filter.keeps(my_index, basic.deviceName)) continue;

    DeviceCaps& caps = d.caps;
    caps.api_version = std::min(basic.apiVersion, instance.api_version());
    const bool v12 = caps.api_version >= VK_API_VERSION_1_2;
    const auto extensions = device_extensions(instance, d.handle);
    auto has = [&](const char* name) { return extensions.count(name) != 0; };

    // Properties, chained as far as the device supports them.
    auto props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    auto subgroup = vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    auto driver = vk_struct<VkPhysicalDeviceDriverProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
    auto pci = vk_struct<VkPhysicalDevicePCIBusInfoPropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT);
    auto sm = vk_struct<VkPhysicalDeviceShaderSMBuiltinsPropertiesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV);
    auto sizes = vk_struct<VkPhysicalDeviceSubgroupSizeControlPropertiesEXT>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT);
    props.pNext = &subgroup;
    void** tail = &subgroup.pNext;
    const bool have_driver = v12 || has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    const bool have_pci = has(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    const bool have_sm = has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    if (have_driver) { *tail = &driver; tail = &driver.pNext; }
    if (have_pci) { *tail = &pci; tail = &pci.pNext; }
    if (have_sm) { *tail = &sm; tail = &sm.pNext; }
    const bool have_sizes = caps.api_version >= VK_API_VERSION_1_3 || has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (have_sizes) { *tail = &sizes; tail = &sizes.pNext; }
    vk.vkGetPhysicalDeviceProperties2(d.handle, &props);
    caps.fixed_subgroup_shuffles = have_sizes && (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                                   (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0 &&
                                   sizes.minSubgroupSize == sizes.maxSubgroupSize &&
                                   sizes.minSubgroupSize == subgroup.subgroupSize && subgroup.subgroupSize >= 2 &&
                                   subgroup.subgroupSize <= sdk::kMaxSubgroupWidth &&
                                   (subgroup.subgroupSize & (subgroup.subgroupSize - 1)) == 0;

    // Features for the dtypes kiln uses.
    auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    auto storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto storage8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
    auto f16i8 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    features.pNext = &storage16;
    tail = &storage16.pNext;
    const bool have_storage8 = v12 || has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
    const bool have_f16i8 = v12 || has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    if (have_storage8) { *tail = &storage8; tail = &storage8.pNext; }
    if (have_f16i8) { *tail = &f16i8; tail = &f16i8.pNext; }
    vk.vkGetPhysicalDeviceFeatures2(d.handle, &features);

    caps.float64 = features.features.shaderFloat64;
    caps.int64 = features.features.shaderInt64;
    caps.int16 = features.features.shaderInt16;
    caps.storage16 = storage16.storageBuffer16BitAccess;
    caps.storage8 = have_storage8 && storage8.storageBuffer8BitAccess;
    caps.int8 = have_f16i8 && f16i8.shaderInt8;
    caps.float16 = have_f16i8 && f16i8.shaderFloat16;
    if (!v12) {
      if (caps.storage8) caps.extensions.emplace_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
      if (caps.int8 || caps.float16) caps.extensions.emplace_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    }
    caps.limits = basic.limits;
    caps.timestamp_period_ns = basic.limits.timestampPeriod;
    vk.vkGetPhysicalDeviceMemoryProperties(d.handle, &caps.memory);

    fill_info(basic, subgroup, have_driver ? &driver : nullptr, have_pci ? &pci : nullptr,
              have_sm ? sm.shaderSMCount : 0, caps, d.info);
    devices.push_back(std::move(d));
  }
  return devices;
}

namespace {

// Microseconds a wait spins on a GPU when option "wait_spin_us" is absent.
constexpr std::uint32_t kGpuWaitSpinUs = 100;

std::size_t device_total() { return plugin_state().devices.size(); }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, device_total); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, device_total, [](std::uint32_t index) -> const kiln_device_info& {
    return plugin_state().devices[index].info;
  });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, device_total, [](std::uint32_t index) {
    PluginState& state = plugin_state();
    const PhysicalDevice& physical = state.devices[index];
    std::lock_guard lock(state.open_mutex);
    auto& slot = state.opened[index];
    if (slot == nullptr) slot = std::make_unique<Device>(
          *state.instance, physical,
          state.wait_spin_us >= 0 ? static_cast<std::uint32_t>(state.wait_spin_us)
                                  : (physical.info.kind == KILN_DEVICE_KIND_GPU ? kGpuWaitSpinUs : 0));
    return to_handle(slot.get());
  });
}

void device_close(kiln_device* handle) {
  if (handle == nullptr || !plugin_ready()) return;
  PluginState& state = plugin_state();
  std::lock_guard lock(state.open_mutex);
  for (auto& slot : state.opened)
    if (to_handle(slot.get()) == handle) slot.reset();
}

}  // namespace

const sdk::DeviceFunctions kDeviceFunctions = {device_count, device_info, device_open, device_close,
                                                device_synchronize};

}  // namespace kiln::vulkan
