// Launch: a descriptor set with one storage buffer per buffer param (slot
// order), push constants for the scalars, and the grid dispatched with
// vkCmdDispatchBase in pieces of at most maxComputeWorkGroupCount groups per
// axis (gl_WorkGroupID includes the base, so the shader sees one grid).
// Timed launch: timestamps around the dispatches, or the host clock when the
// device has no timestamps.
#include "launch.hpp"

#include "pipeline.hpp"
#include "vulkan.hpp"
#include "vk_check.hpp"
#include "vk_struct.hpp"

#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/timing.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace kiln::vulkan {

namespace {

constexpr std::uint64_t kCacheFlushBytes = 256ull << 20;

// A descriptor pool holding the one set of a launch; lives until the
// submission completes.
class DescriptorSet {
 public:
  DescriptorSet(Device& device, const Program& program) : device_(device) {
    const std::uint32_t n = program.interface().buffer_count;
    if (n == 0) return;
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n};
    auto pool_info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    vk_check(device.vk().vkCreateDescriptorPool(device.handle(), &pool_info, nullptr, &pool_), "vkCreateDescriptorPool");
    auto allocate = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocate.descriptorPool = pool_;
    allocate.descriptorSetCount = 1;
    const VkDescriptorSetLayout layout = program.set_layout();
    allocate.pSetLayouts = &layout;
    const VkResult result = device.vk().vkAllocateDescriptorSets(device.handle(), &allocate, &set_);
    if (result != VK_SUCCESS) {
      device.vk().vkDestroyDescriptorPool(device.handle(), pool_, nullptr);
      vk_check(result, "vkAllocateDescriptorSets");
    }
  }
  ~DescriptorSet() {
    if (pool_ != VK_NULL_HANDLE) device_.vk().vkDestroyDescriptorPool(device_.handle(), pool_, nullptr);
  }
  DescriptorSet(const DescriptorSet&) = delete;
  DescriptorSet& operator=(const DescriptorSet&) = delete;
  VkDescriptorSet handle() const { return set_; }

 private:
  Device& device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
};

// A checked launch: arguments bound to the program's interface.
struct BoundLaunch {
  Program* program = nullptr;
  std::shared_ptr<DescriptorSet> descriptors;
  std::vector<std::uint8_t> push_constants;
  std::array<std::uint64_t, 3> groups{};
};

BoundLaunch bind(const kiln_launch_args& args, const char* fn) {
  Device& device = to_device(args.device, fn);
  if (args.program == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": program is NULL");
  BoundLaunch bound;
  bound.program = reinterpret_cast<Program*>(args.program);
  Program& program = *bound.program;
  if (&program.device() != &device)
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": the program was compiled for another device");
  const KernelInterface& iface = program.interface();
  if (args.n_args > 0 && args.args == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": args is NULL");
  sdk::check_launch_args(iface.slots, {args.args, args.n_args});
  const auto& limits = device.caps().limits;
  for (int axis = 0; axis < 3; ++axis) {
    if (args.groups[axis] < 1 || args.groups[axis] > UINT32_MAX)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": " + std::to_string(args.groups[axis]) +
                                                  " groups on axis " + std::to_string(axis) + " (1 .. 2^32-1)");
    if (args.local[axis] != iface.local_size[axis])
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": local size " + std::to_string(args.local[axis]) +
                                                  " on axis " + std::to_string(axis) + ", the kernel's is " +
                                                  std::to_string(iface.local_size[axis]));
    bound.groups[axis] = args.groups[axis];
  }

  bound.descriptors = std::make_shared<DescriptorSet>(device, program);
  bound.push_constants.resize(iface.push_constant_bytes);
  std::vector<VkDescriptorBufferInfo> infos(iface.buffer_count);
  for (std::uint32_t slot = 0; slot < iface.params.size(); ++slot) {
    const ParamBinding& p = iface.params[slot];
    const kiln_arg& arg = args.args[slot];
    const std::string where = std::string(fn) + ": argument " + std::to_string(slot);
    if (p.kind == KILN_PARAM_VARIABLE) {
      std::memcpy(bound.push_constants.data() + p.push_offset, &arg.scalar_bits, p.push_bytes);  // little endian
      continue;
    }
    const Allocation& buffer = *reinterpret_cast<Allocation*>(arg.buffer);
    if (&buffer.device() != &device) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, where + " is a buffer of another device");
    const std::uint64_t bytes = arg.bytes != 0 ? arg.bytes : buffer.bytes();
    if (bytes > buffer.bytes())
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, where + " binds " + std::to_string(bytes) + " bytes of a buffer of " +
                                                  std::to_string(buffer.bytes()));
    if (bytes > limits.maxStorageBufferRange)
      sdk::fail(KILN_STATUS_UNSUPPORTED, where + " binds " + std::to_string(bytes) +
                                             " bytes; this device binds at most maxStorageBufferRange = " +
                                             std::to_string(limits.maxStorageBufferRange) + " bytes per buffer");
    infos[p.binding] = {buffer.buffer(), 0, bytes};
  }
  if (iface.buffer_count > 0) {
    std::vector<VkWriteDescriptorSet> writes(iface.buffer_count);
    for (std::uint32_t i = 0; i < iface.buffer_count; ++i) {
      writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[i].dstSet = bound.descriptors->handle();
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    device.vk().vkUpdateDescriptorSets(device.handle(), iface.buffer_count, writes.data(), 0, nullptr);
  }
  return bound;
}

void record_dispatches(Device& device, VkCommandBuffer cmd, const BoundLaunch& bound) {
  const DeviceFunctions& vk = device.vk();
  const Program& program = *bound.program;
  vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program.pipeline());
  if (program.interface().buffer_count > 0) {
    const VkDescriptorSet set = bound.descriptors->handle();
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program.layout(), 0, 1, &set, 0, nullptr);
  }
  if (!bound.push_constants.empty())
    vk.vkCmdPushConstants(cmd, program.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<std::uint32_t>(bound.push_constants.size()), bound.push_constants.data());
  const auto& max = device.caps().limits.maxComputeWorkGroupCount;
  const auto& g = bound.groups;
  for (std::uint64_t z = 0; z < g[2]; z += max[2])
    for (std::uint64_t y = 0; y < g[1]; y += max[1])
      for (std::uint64_t x = 0; x < g[0]; x += max[0])
        vk.vkCmdDispatchBase(cmd, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y),
                             static_cast<std::uint32_t>(z), static_cast<std::uint32_t>(std::min<std::uint64_t>(max[0], g[0] - x)),
                             static_cast<std::uint32_t>(std::min<std::uint64_t>(max[1], g[1] - y)),
                             static_cast<std::uint32_t>(std::min<std::uint64_t>(max[2], g[2] - z)));
}

class QueryPool {
 public:
  explicit QueryPool(Device& device) : device_(device) {
    auto info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    vk_check(device.vk().vkCreateQueryPool(device.handle(), &info, nullptr, &pool_), "vkCreateQueryPool");
  }
  ~QueryPool() { device_.vk().vkDestroyQueryPool(device_.handle(), pool_, nullptr); }
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;
  VkQueryPool handle() const { return pool_; }

  // Nanoseconds between the two timestamps of the last completed run.
  std::uint64_t elapsed_ns() const {
    std::uint64_t ticks[2] = {0, 0};
    vk_check(device_.vk().vkGetQueryPoolResults(device_.handle(), pool_, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    const std::uint32_t bits = device_.caps().timestamp_valid_bits;
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    const std::uint64_t delta = (ticks[1] - ticks[0]) & mask;
    return static_cast<std::uint64_t>(static_cast<double>(delta) * device_.caps().timestamp_period_ns + 0.5);
  }

 private:
  Device& device_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace

kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    BoundLaunch bound = bind(args, "launch");
    Device& device = bound.program->device();
    auto submission = device.begin();
    record_dispatches(device, submission->command_buffer(), bound);
    submission->keep_alive(bound.descriptors);
    device.submit(submission);
    args.event = make_event(device, std::move(submission));
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    BoundLaunch bound = bind(sdk::timed_launch_of(args), "launch_timed");
    Device& device = bound.program->device();
    const bool device_timer = (device.physical().info.flags & KILN_DEVICE_DEVICE_TIMER) != 0;
    std::unique_ptr<QueryPool> queries;
    if (device_timer) queries = std::make_unique<QueryPool>(device);

    // One command buffer, recorded once and submitted for every run.
    auto submission = device.begin(/*reusable=*/true);
    const VkCommandBuffer cmd = submission->command_buffer();
    std::unique_ptr<Allocation> flusher;
    if (args.flags & KILN_TIMED_FLUSH_CACHE) {
      // Writing a buffer larger than any GPU's last-level cache (Vulkan does
      // not tell its size) evicts the kernel's data; outside the timestamps.
      flusher = std::make_unique<Allocation>(device, kCacheFlushBytes, MemoryUse::Device);
      device.vk().vkCmdFillBuffer(cmd, flusher->buffer(), 0, VK_WHOLE_SIZE, 0);
      auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      // ALL_COMMANDS, not just the shader stage: the start timestamp must wait too.
      device.vk().vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                                       &barrier, 0, nullptr, 0, nullptr);
    }
    if (queries) {
      device.vk().vkCmdResetQueryPool(cmd, queries->handle(), 0, 2);
      device.vk().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries->handle(), 0);
    }
    record_dispatches(device, cmd, bound);
    if (queries) device.vk().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries->handle(), 1);
    bool submitted = false;
    const auto run_once = [&]() -> std::uint64_t {
      const std::uint64_t host_ns = sdk::steady_ns([&] {
        if (!submitted) device.submit(submission);
        else device.resubmit(submission);
        submitted = true;
        if (args.timeout_ns != 0) {
          try {
            device.wait_or_lose(submission, args.timeout_ns);
          } catch (...) {
            if (device.lost()) {  // what the runaway dispatch uses must outlive it: leak it
              submission->keep_alive(bound.descriptors);
              (void)queries.release();
              (void)flusher.release();
            }
            throw;
          }
        } else {
          device.wait(submission);
        }
      });
      return queries ? queries->elapsed_ns() : host_ns;
    };
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, run_once);
    sdk::store_timing(args, result, queries ? KILN_TIMER_DEVICE : KILN_TIMER_HOST);
    sdk::write_args(raw, args);
  });
}

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::vulkan
