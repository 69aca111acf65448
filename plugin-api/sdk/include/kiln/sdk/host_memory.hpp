// kiln/sdk/host_memory.hpp - ready-made pool functions for plugins whose
// device memory is plain host memory (KILN_DEVICE_HOST_MEMORY): the C, CBLAS
// and dummy plugins. Buffers are 64-byte aligned host allocations; copies are
// memcpy and complete before returning (events are always NULL); free bytes
// come from the system (MemAvailable).
//
// Because every such plugin allocates the same way, the host can hand a
// buffer of one host-memory plugin to another by host pointer, without a copy
// (kiln_arg.host_pointer).
//
// Put them straight into the plugin table:
//   .memory_info = kiln::sdk::host_memory_info,
//   .buffer_alloc = kiln::sdk::host_buffer_alloc, ...
#pragma once

#include <kiln/plugin.h>

#include <cstdint>

namespace kiln::sdk {

// Bytes of host memory the system reports available / installed.
std::uint64_t host_available_bytes();
std::uint64_t host_total_bytes();

kiln_error* host_memory_info(kiln_memory_info_args* args);
kiln_error* host_buffer_alloc(kiln_buffer_alloc_args* args);
void host_buffer_free(kiln_device* device, kiln_buffer* buffer);
kiln_error* host_buffer_host_pointer(kiln_buffer_host_pointer_args* args);
kiln_error* host_copy_to_device(kiln_copy_args* args);
kiln_error* host_copy_to_host(kiln_copy_args* args);
kiln_error* host_copy_device_to_device(kiln_copy_args* args);
// Events of host-memory plugins are always NULL (work completes in the call).
kiln_error* host_event_wait(kiln_event* event);
void host_event_release(kiln_event* event);
// Host-memory work completes within the call: every event is complete.
kiln_error* host_event_query(kiln_event_query_args* args);
kiln_error* host_device_synchronize(kiln_device* device);

// The address of a buffer made by host_buffer_alloc, and its size.
void* host_buffer_data(kiln_buffer* buffer);
std::uint64_t host_buffer_size(kiln_buffer* buffer);

}  // namespace kiln::sdk
