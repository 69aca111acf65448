#include "nvrtc_compiler.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <memory>

namespace kiln::cuda {

namespace {

void check_nvrtc(const NvrtcApi& nvrtc, nvrtcResult result, const char* call) {
  if (result == NVRTC_SUCCESS) return;
  sdk::fail(result == NVRTC_ERROR_OUT_OF_MEMORY ? KILN_STATUS_OUT_OF_MEMORY : KILN_STATUS_INTERNAL,
            std::string(call) + " failed: " + nvrtc.nvrtcGetErrorString(result));
}

std::string program_log(const NvrtcApi& nvrtc, nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtc.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> default_include_dirs() {
#ifdef KILN_CUDA_INCLUDE_DIR
  return {KILN_CUDA_INCLUDE_DIR, "/usr/local/cuda/include"};
#else
  return {"/usr/local/cuda/include"};
#endif
}

std::vector<std::string> nvrtc_flags(const std::string& target, const NvrtcOptions& options) {
  // No fast-math: results must match the reference interpreter. -default-device
  // lets the emitted helpers be plain functions.
  std::vector<std::string> flags = {"--gpu-architecture=" + target, "-default-device", "--std=c++17"};
  for (const std::string& dir : options.include_dirs) flags.push_back("-I" + dir);
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

std::string nvrtc_target(const NvrtcApi& nvrtc, int major, int minor, bool force_ptx) {
  const int wanted = major * 10 + minor;
  if (!force_ptx && std::find(nvrtc.archs.begin(), nvrtc.archs.end(), wanted) != nvrtc.archs.end())
    return "sm_" + std::to_string(wanted);
  // A device newer than this NVRTC: PTX of the newest older architecture,
  // which the driver compiles for the device when the module loads.
  int best = 0;
  for (int arch : nvrtc.archs)
    if (arch <= wanted) best = std::max(best, arch);
  if (best == 0)
    sdk::fail(KILN_STATUS_UNSUPPORTED, "NVRTC " + nvrtc.version() + " cannot generate code for compute capability " +
                                           std::to_string(major) + "." + std::to_string(minor));
  return "compute_" + std::to_string(best);
}

DeviceCode compile_cuda(const NvrtcApi& nvrtc, std::string_view source, int major, int minor,
                        const NvrtcOptions& options, bool arch_specific) {
  DeviceCode code;
  code.target = nvrtc_target(nvrtc, major, minor, options.force_ptx);
  if (arch_specific) code.target += "a";
  code.is_cubin = code.target.starts_with("sm_");
  const std::vector<std::string> flags = nvrtc_flags(code.target, options);
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());

  const std::string text(source);
  nvrtcProgram raw = nullptr;
  check_nvrtc(nvrtc, nvrtc.nvrtcCreateProgram(&raw, text.c_str(), "kiln_kernel.cu", 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  const auto destroy = [&nvrtc](nvrtcProgram* p) { nvrtc.nvrtcDestroyProgram(p); };
  std::unique_ptr<nvrtcProgram, decltype(destroy)> program(&raw, destroy);

  const nvrtcResult result = nvrtc.nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
  code.log = program_log(nvrtc, raw);
  if (result == NVRTC_ERROR_COMPILATION || result == NVRTC_ERROR_INVALID_OPTION) {
    std::string joined;
    for (const std::string& f : flags) joined += " " + f;
    sdk::fail(KILN_STATUS_COMPILE_FAILED, "nvrtcCompileProgram failed: " + std::string(nvrtc.nvrtcGetErrorString(result)) +
                                              " (NVRTC " + nvrtc.version() + ", flags:" + joined + ")\n" + code.log);
  }
  check_nvrtc(nvrtc, result, "nvrtcCompileProgram");

  std::size_t size = 0;
  if (code.is_cubin) {
    check_nvrtc(nvrtc, nvrtc.nvrtcGetCUBINSize(raw, &size), "nvrtcGetCUBINSize");
    code.image.resize(size);
    check_nvrtc(nvrtc, nvrtc.nvrtcGetCUBIN(raw, code.image.data()), "nvrtcGetCUBIN");
  } else {
    check_nvrtc(nvrtc, nvrtc.nvrtcGetPTXSize(raw, &size), "nvrtcGetPTXSize");  // includes the NUL
    code.image.resize(size);
    check_nvrtc(nvrtc, nvrtc.nvrtcGetPTX(raw, code.image.data()), "nvrtcGetPTX");
  }
  return code;
}

}  // namespace kiln::cuda
