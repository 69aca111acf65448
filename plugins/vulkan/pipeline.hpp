// pipeline.hpp - a compiled program: its GLSL, the interface codegen and
// launch share, and the Vulkan compute pipeline (shader module, descriptor
// set layout with one storage buffer per buffer param, push-constant range).
#pragma once

#include "kernel_interface.hpp"
#include "logical_device.hpp"

#include <kiln/plugin.h>

#include <span>
#include <string>

namespace kiln::vulkan {

class Program {
 public:
  // Creates the pipeline (created with VK_PIPELINE_CREATE_DISPATCH_BASE_BIT
  // so large grids can be split). Throws PluginError(COMPILE_FAILED) when the
  // driver rejects it.
  Program(Device& device, std::string glsl, KernelInterface iface, std::span<const std::uint32_t> spirv);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Device& device() const { return device_; }
  const std::string& glsl() const { return glsl_; }
  const KernelInterface& interface() const { return iface_; }
  VkPipeline pipeline() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }

 private:
  void destroy();
  Device& device_;
  std::string glsl_;
  KernelInterface iface_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

inline kiln_program* to_handle(Program* program) { return reinterpret_cast<kiln_program*>(program); }

}  // namespace kiln::vulkan
