#include "glsl_compiler.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <mutex>
#include <sstream>

namespace kiln::vulkan {

namespace {

// glslang needs one InitializeProcess per process; it is never finalised
// (plugins are never unloaded).
void initialise_glslang() {
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
}

std::string numbered(const std::string& source) {
  std::istringstream in(source);
  std::ostringstream out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) out << n << ": " << line << '\n';
  return out.str();
}

[[noreturn]] void compile_failed(const std::string& stage, const std::string& log, const std::string& source) {
  sdk::fail(KILN_STATUS_COMPILE_FAILED,
            "glslang " + stage + " failed:\n" + log + "\ngenerated GLSL:\n" + numbered(source));
}

}  // namespace

std::vector<std::uint32_t> compile_glsl_to_spirv(const std::string& source) {
  initialise_glslang();
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  glslang::TShader shader(EShLangCompute);
  const char* text = source.c_str();
  shader.setStrings(&text, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
  shader.setEntryPoint("main");
  if (!shader.parse(GetDefaultResources(), 450, false, messages))
    compile_failed("parse", shader.getInfoLog(), source);

  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) compile_failed("link", program.getInfoLog(), source);

  std::vector<std::uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.disableOptimizer = true;  // the driver optimises; keeps compile fast
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  if (spirv.empty()) compile_failed("SPIR-V generation", logger.getAllMessages(), source);
  return spirv;
}

std::string glslang_identity() {
  const glslang::Version v = glslang::GetVersion();
  return "glslang " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

}  // namespace kiln::vulkan
