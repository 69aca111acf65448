// pool.hpp - the ABI's memory functions: buffers, copies (through staging
// buffers, in order on the device's queue), events.
#pragma once

#include <kiln/plugin.h>

namespace kiln::vulkan {

kiln_error* memory_info(kiln_memory_info_args* args);
kiln_error* buffer_alloc(kiln_buffer_alloc_args* args);
void buffer_free(kiln_device* device, kiln_buffer* buffer);
kiln_error* copy_to_device(kiln_copy_args* args);
kiln_error* copy_to_host(kiln_copy_args* args);
kiln_error* copy_device_to_device(kiln_copy_args* args);
kiln_error* event_wait(kiln_event* event);
void event_release(kiln_event* event);
kiln_error* device_synchronize(kiln_device* device);

}  // namespace kiln::vulkan
