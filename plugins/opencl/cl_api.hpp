// The OpenCL entry points this plugin uses, loaded at init from the ICD
// loader (libOpenCL.so.1) with dlopen. Not linking the loader keeps the
// plugin loadable everywhere: where there is no loader, init reports
// UNAVAILABLE with dlerror's text instead of the dlopen of the plugin failing.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <kiln/plugin.h>

#include <string>
#include <string_view>

namespace kiln::opencl {

// X(name) for every function used; the pointer has the header's type.
#define KILN_CL_FUNCTIONS(X)                                                                          \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)    \
  X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clCreateBuffer)              \
  X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clEnqueueCopyBuffer)         \
  X(clEnqueueFillBuffer) X(clWaitForEvents) X(clGetEventInfo) X(clGetEventProfilingInfo)              \
  X(clReleaseEvent) X(clFinish) X(clFlush) X(clCreateProgramWithSource) X(clBuildProgram)             \
  X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) \
  X(clEnqueueNDRangeKernel) X(clGetKernelWorkGroupInfo)

struct ClApi {
#define KILN_CL_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CL_FUNCTIONS(KILN_CL_MEMBER)
#undef KILN_CL_MEMBER
};

// Loads the ICD loader from `library` (a path or a soname) and resolves every
// function. Throws PluginError(UNAVAILABLE) naming the library or symbol.
void load_cl_api(ClApi& api, const std::string& library);

// The loaded entry points; valid after a successful load_cl_api in init.
const ClApi& cl();
ClApi& cl_mutable();

// "CL_INVALID_VALUE" for -30, "CL_<unknown -1234>" otherwise.
std::string cl_error_name(cl_int code);

// Throws PluginError when `code` is not CL_SUCCESS: "<call>: CL_... (code)".
// The status follows the code (CL_OUT_OF_RESOURCES etc. -> OUT_OF_MEMORY,
// otherwise `status`).
void check_cl(cl_int code, std::string_view call, kiln_status status = KILN_STATUS_INTERNAL);

}  // namespace kiln::opencl
