#include "instance.hpp"

#include "vk_check.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace kiln::vulkan {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::string version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

bool has_layer(const GlobalFunctions& global, const char* name) {
  std::uint32_t count = 0;
  if (global.vkEnumerateInstanceLayerProperties == nullptr ||
      global.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS)
    return false;
  std::vector<VkLayerProperties> layers(count);
  global.vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& layer : layers)
    if (std::strcmp(layer.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const GlobalFunctions& global, const char* name, const char* layer = nullptr) {
  std::uint32_t count = 0;
  if (global.vkEnumerateInstanceExtensionProperties(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  global.vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data());
  for (const auto& extension : extensions)
    if (std::strcmp(extension.extensionName, name) == 0) return true;
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL forward_to_host_log(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const kiln_log_level level =
      (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? KILN_LOG_ERROR : KILN_LOG_WARNING;
  sdk::Host::log(level, std::string("validation: ") + (data->pMessage != nullptr ? data->pMessage : ""));
  return VK_FALSE;
}

}  // namespace

Instance::Instance(bool validation) {
  const GlobalFunctions& global = load_global_functions();
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (global.vkEnumerateInstanceVersion != nullptr) global.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1)
    sdk::fail(KILN_STATUS_UNAVAILABLE,
              "the Vulkan loader supports Vulkan " + version_string(loader_version) + "; 1.1 or newer is required");
  api_version_ = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "kiln";
  app.pEngineName = "kiln";
  app.apiVersion = api_version_;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation) {
    if (has_layer(global, kValidationLayer)) {
      layers.push_back(kValidationLayer);
      if (has_instance_extension(global, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      if (has_instance_extension(global, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME, kValidationLayer))
        extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    } else {
      sdk::Host::log(KILN_LOG_WARNING, std::string("option 'validation': layer ") + kValidationLayer +
                                           " is not installed; running without it");
    }
  }

  // With validation, synchronisation validation too (hazards inside a
  // command buffer; this layer version does not check across submissions).
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  VkInstanceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  for (const char* e : extensions)
    if (std::strcmp(e, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME) == 0) create.pNext = &features;
  create.pApplicationInfo = &app;
  create.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  create.ppEnabledLayerNames = layers.data();
  create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  vk_check(global.vkCreateInstance(&create, nullptr, &instance_), "vkCreateInstance", KILN_STATUS_UNAVAILABLE);
  try {
    functions_ = load_instance_functions(global, instance_);
  } catch (...) {
    auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(global.vkGetInstanceProcAddr(instance_, "vkDestroyInstance"));
    if (destroy != nullptr) destroy(instance_, nullptr);
    throw;
  }

  if (!extensions.empty() && std::strcmp(extensions[0], VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        global.vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT messenger{};
    messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = forward_to_host_log;
    if (create_messenger != nullptr) create_messenger(instance_, &messenger, nullptr, &messenger_);
  }
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        load_global_functions().vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy_messenger != nullptr) destroy_messenger(instance_, messenger_, nullptr);
  }
  functions_.vkDestroyInstance(instance_, nullptr);
}

}  // namespace kiln::vulkan
