// Compile: OpenCL C from the SDK's C-family emitter (OpenCL dialect), built
// with clBuildProgram for the one device. A kernel the emitter cannot
// express is UNSUPPORTED naming the op; a build error is COMPILE_FAILED with
// the build log and the path where the source was kept.
#include "opencl.hpp"

#include <kiln/sdk/plugin_entry.hpp>

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

namespace kiln::opencl {

namespace {

constexpr const char* kKernelName = "kiln_kernel";

std::string build_log(const Device& d, cl_program program) {
  std::size_t size = 0;
  if (cl().clGetProgramBuildInfo(program, d.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  if (cl().clGetProgramBuildInfo(program, d.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Keeps the source of a failed build where a user can look at it; returns
// the path, or "" when it could not be written.
std::string keep_failed_source(const std::string& source) {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    dir = std::filesystem::path(xdg) / "kiln" / "opencl";
  else
    dir = std::filesystem::temp_directory_path() / "kiln-opencl";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "";
  const std::filesystem::path path = dir / ("failed-" + std::to_string(std::hash<std::string>{}(source)) + ".cl");
  std::ofstream out(path);
  out << source;
  return out ? path.string() : "";
}

void release(Program* p) {
  if (p == nullptr) return;
  if (p->kernel != nullptr) cl().clReleaseKernel(p->kernel);
  if (p->program != nullptr) cl().clReleaseProgram(p->program);
  delete p;
}

using ProgramPtr = std::unique_ptr<Program, decltype(&release)>;

}  // namespace

kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "compile");
    const std::span<const kiln_op> ops = sdk::kernel_ops(args.kernel);
    ProgramPtr p(new Program(&d), &release);
    p->params = sdk::collect_params(ops);
    sdk::EmitOptions emit;
    emit.entry = kKernelName;
    p->source = sdk::emit_c_family(ops, sdk::opencl_dialect(), emit).source;

    const char* text = p->source.c_str();
    cl_int err = CL_SUCCESS;
    p->program = cl().clCreateProgramWithSource(d.context, 1, &text, nullptr, &err);
    check_cl(err, "clCreateProgramWithSource");
    const std::string options = "-cl-std=CL1.2 " + state().settings.build_options;
    err = cl().clBuildProgram(p->program, 1, &d.id, options.c_str(), nullptr, nullptr);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS) {
      const std::string kept = keep_failed_source(p->source);
      sdk::fail(KILN_STATUS_COMPILE_FAILED, "clBuildProgram failed: " + cl_error_name(err) + " (options '" + options +
                                                "')\n" + build_log(d, p->program) +
                                                (kept.empty() ? "" : "\nsource kept in " + kept));
    }
    check_cl(err, "clBuildProgram", KILN_STATUS_COMPILE_FAILED);
    p->kernel = cl().clCreateKernel(p->program, kKernelName, &err);
    check_cl(err, "clCreateKernel", KILN_STATUS_COMPILE_FAILED);
    args.program = reinterpret_cast<kiln_program*>(p.release());
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::answer_program_source(raw, "program_source", [](kiln_program* program) {
    return sdk::ProgramText{"opencl-c", as_program(program)->source};
  });
}

void program_release(kiln_program* program) { release(as_program(program)); }

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::opencl
