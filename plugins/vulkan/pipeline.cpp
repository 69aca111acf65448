#include "pipeline.hpp"

#include "vk_check.hpp"
#include "vk_struct.hpp"

#include <vector>

namespace kiln::vulkan {

Program::Program(Device& device, std::string glsl, KernelInterface iface, std::span<const std::uint32_t> spirv)
    : device_(device), glsl_(std::move(glsl)), iface_(std::move(iface)) {
  const DeviceFunctions& vk = device.vk();
  try {
    auto module_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module_info.codeSize = spirv.size_bytes();
    module_info.pCode = spirv.data();
    vk_check(vk.vkCreateShaderModule(device.handle(), &module_info, nullptr, &module_), "vkCreateShaderModule",
             KILN_STATUS_COMPILE_FAILED);

    std::vector<VkDescriptorSetLayoutBinding> bindings(iface_.buffer_count);
    for (std::uint32_t i = 0; i < iface_.buffer_count; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    auto set_info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set_info.bindingCount = iface_.buffer_count;
    set_info.pBindings = bindings.data();
    vk_check(vk.vkCreateDescriptorSetLayout(device.handle(), &set_info, nullptr, &set_layout_),
             "vkCreateDescriptorSetLayout");

    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, iface_.push_constant_bytes};
    auto layout_info = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout_;
    layout_info.pushConstantRangeCount = iface_.push_constant_bytes > 0 ? 1 : 0;
    layout_info.pPushConstantRanges = &push;
    vk_check(vk.vkCreatePipelineLayout(device.handle(), &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");

    auto pipeline_info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    pipeline_info.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
    pipeline_info.stage = vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module_;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = layout_;
    vk_check(vk.vkCreateComputePipelines(device.handle(), VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline_),
             "vkCreateComputePipelines", KILN_STATUS_COMPILE_FAILED);
  } catch (...) {
    destroy();
    throw;
  }
}

Program::~Program() {
  if (!device_.lost()) destroy();  // else a runaway dispatch may still use the pipeline: leak it
}

void Program::destroy() {
  const DeviceFunctions& vk = device_.vk();
  if (pipeline_ != VK_NULL_HANDLE) vk.vkDestroyPipeline(device_.handle(), pipeline_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vk.vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vk.vkDestroyDescriptorSetLayout(device_.handle(), set_layout_, nullptr);
  if (module_ != VK_NULL_HANDLE) vk.vkDestroyShaderModule(device_.handle(), module_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

}  // namespace kiln::vulkan
