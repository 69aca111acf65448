#include "cl_api.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

namespace kiln::opencl {

namespace {

ClApi g_api;

}  // namespace

const ClApi& cl() { return g_api; }
ClApi& cl_mutable() { return g_api; }

void load_cl_api(ClApi& api, const std::string& library) {
  // RTLD_NODELETE: the ICD loader and its drivers start threads (PoCL does);
  // they must outlive any handle we might drop.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    sdk::fail(KILN_STATUS_UNAVAILABLE,
              "OpenCL ICD loader " + library + " not found: " + std::string(why != nullptr ? why : "dlopen failed"));
  }
#define KILN_CL_RESOLVE(name)                                                                          \
  api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                                \
  if (api.name == nullptr)                                                                             \
    sdk::fail(KILN_STATUS_UNAVAILABLE, "OpenCL ICD loader " + library + " lacks " #name " (OpenCL 1.2 needed)");
  KILN_CL_FUNCTIONS(KILN_CL_RESOLVE)
#undef KILN_CL_RESOLVE
}

std::string cl_error_name(cl_int code) {
  switch (code) {
#define KILN_CL_CODE(c) \
  case c:               \
    return #c;
    KILN_CL_CODE(CL_SUCCESS)
    KILN_CL_CODE(CL_DEVICE_NOT_FOUND)
    KILN_CL_CODE(CL_DEVICE_NOT_AVAILABLE)
    KILN_CL_CODE(CL_COMPILER_NOT_AVAILABLE)
    KILN_CL_CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KILN_CL_CODE(CL_OUT_OF_RESOURCES)
    KILN_CL_CODE(CL_OUT_OF_HOST_MEMORY)
    KILN_CL_CODE(CL_PROFILING_INFO_NOT_AVAILABLE)
    KILN_CL_CODE(CL_MEM_COPY_OVERLAP)
    KILN_CL_CODE(CL_IMAGE_FORMAT_MISMATCH)
    KILN_CL_CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    KILN_CL_CODE(CL_BUILD_PROGRAM_FAILURE)
    KILN_CL_CODE(CL_MAP_FAILURE)
    KILN_CL_CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    KILN_CL_CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    KILN_CL_CODE(CL_COMPILE_PROGRAM_FAILURE)
    KILN_CL_CODE(CL_LINKER_NOT_AVAILABLE)
    KILN_CL_CODE(CL_LINK_PROGRAM_FAILURE)
    KILN_CL_CODE(CL_DEVICE_PARTITION_FAILED)
    KILN_CL_CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    KILN_CL_CODE(CL_INVALID_VALUE)
    KILN_CL_CODE(CL_INVALID_DEVICE_TYPE)
    KILN_CL_CODE(CL_INVALID_PLATFORM)
    KILN_CL_CODE(CL_INVALID_DEVICE)
    KILN_CL_CODE(CL_INVALID_CONTEXT)
    KILN_CL_CODE(CL_INVALID_QUEUE_PROPERTIES)
    KILN_CL_CODE(CL_INVALID_COMMAND_QUEUE)
    KILN_CL_CODE(CL_INVALID_HOST_PTR)
    KILN_CL_CODE(CL_INVALID_MEM_OBJECT)
    KILN_CL_CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    KILN_CL_CODE(CL_INVALID_IMAGE_SIZE)
    KILN_CL_CODE(CL_INVALID_SAMPLER)
    KILN_CL_CODE(CL_INVALID_BINARY)
    KILN_CL_CODE(CL_INVALID_BUILD_OPTIONS)
    KILN_CL_CODE(CL_INVALID_PROGRAM)
    KILN_CL_CODE(CL_INVALID_PROGRAM_EXECUTABLE)
    KILN_CL_CODE(CL_INVALID_KERNEL_NAME)
    KILN_CL_CODE(CL_INVALID_KERNEL_DEFINITION)
    KILN_CL_CODE(CL_INVALID_KERNEL)
    KILN_CL_CODE(CL_INVALID_ARG_INDEX)
    KILN_CL_CODE(CL_INVALID_ARG_VALUE)
    KILN_CL_CODE(CL_INVALID_ARG_SIZE)
    KILN_CL_CODE(CL_INVALID_KERNEL_ARGS)
    KILN_CL_CODE(CL_INVALID_WORK_DIMENSION)
    KILN_CL_CODE(CL_INVALID_WORK_GROUP_SIZE)
    KILN_CL_CODE(CL_INVALID_WORK_ITEM_SIZE)
    KILN_CL_CODE(CL_INVALID_GLOBAL_OFFSET)
    KILN_CL_CODE(CL_INVALID_EVENT_WAIT_LIST)
    KILN_CL_CODE(CL_INVALID_EVENT)
    KILN_CL_CODE(CL_INVALID_OPERATION)
    KILN_CL_CODE(CL_INVALID_GL_OBJECT)
    KILN_CL_CODE(CL_INVALID_BUFFER_SIZE)
    KILN_CL_CODE(CL_INVALID_MIP_LEVEL)
    KILN_CL_CODE(CL_INVALID_GLOBAL_WORK_SIZE)
    KILN_CL_CODE(CL_INVALID_PROPERTY)
    KILN_CL_CODE(CL_INVALID_IMAGE_DESCRIPTOR)
    KILN_CL_CODE(CL_INVALID_COMPILER_OPTIONS)
    KILN_CL_CODE(CL_INVALID_LINKER_OPTIONS)
    KILN_CL_CODE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef KILN_CL_CODE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_<unknown " + std::to_string(code) + ">";
  }
}

void check_cl(cl_int code, std::string_view call, kiln_status status) {
  if (code == CL_SUCCESS) return;
  if (code == CL_OUT_OF_RESOURCES || code == CL_OUT_OF_HOST_MEMORY || code == CL_MEM_OBJECT_ALLOCATION_FAILURE)
    status = KILN_STATUS_OUT_OF_MEMORY;
  sdk::fail(status, std::string(call) + " failed: " + cl_error_name(code) + " (" + std::to_string(code) + ")");
}

}  // namespace kiln::opencl
