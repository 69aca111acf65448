// NVRTC, loaded at init with dlopen (never linked): the CUDA C++ compiler
// that works without a GPU, so code generation is testable anywhere the
// toolkit is.
#pragma once

#include <nvrtc.h>

#include <span>
#include <string>
#include <vector>

namespace kiln::cuda {

#define KILN_NVRTC_FUNCTIONS(X)                                                                             \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetPTXSize)   \
  X(nvrtcGetPTX) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define KILN_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_MEMBER)
#undef KILN_NVRTC_MEMBER
  int major = 0;
  int minor = 0;
  std::string library;     // the candidate that loaded
  std::vector<int> archs;  // sm_XY it can generate machine code for, as XY

  std::string version() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// Where NVRTC is looked for, in order: `configured` (the "nvrtc_library"
// option) when not empty, then the sonames of CUDA 13 and 12, then the
// toolkit's library folder found at configure time.
std::vector<std::string> nvrtc_candidates(const std::string& configured);

// Loads the first candidate that opens and has every symbol. Throws
// PluginError(UNAVAILABLE) listing each candidate with its dlerror.
NvrtcApi load_nvrtc(std::span<const std::string> candidates);

}  // namespace kiln::cuda
