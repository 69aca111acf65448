// The system C compiler: found and probed once at init, run per kernel.
#include "c.hpp"
#include "subprocess.hpp"

#include <kiln/sdk/plugin_support.hpp>

namespace kiln::cplugin {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string clipped(const std::string& text, std::size_t limit = 8000) {
  return text.size() <= limit ? text : text.substr(0, limit) + "\n... (" + std::to_string(text.size() - limit) + " more bytes)";
}

// Predefined macros of the target, with or without the user's flags.
ProcessResult predefined_macros(const Compiler& c, bool with_flags, bool openmp) {
  std::vector<std::string> argv{c.path};
  if (with_flags) argv.insert(argv.end(), c.flags.begin(), c.flags.end());
  if (openmp) argv.push_back("-fopenmp");
  argv.insert(argv.end(), {"-dM", "-E", "-x", "c", "/dev/null"});
  return run_process(argv, c.timeout);
}

bool defines(const std::string& macros, const std::string& name) {
  return macros.find("#define " + name + " ") != std::string::npos;
}

void read_target(Compiler& c, const std::string& macros) {
  if (defines(macros, "__AVX512F__")) {
    c.vector_bytes = 64;
    c.vector_registers = 32;
  } else if (defines(macros, "__AVX__")) {
    c.vector_bytes = 32;
    c.vector_registers = 16;
  } else if (defines(macros, "__SSE2__")) {
    c.vector_bytes = 16;
    c.vector_registers = 16;
  } else if (defines(macros, "__ARM_NEON")) {
    c.vector_bytes = 16;
    c.vector_registers = 32;
  }
  c.fma = defines(macros, "__FMA__") || defines(macros, "__ARM_FEATURE_FMA");
  c.avx512_bf16 = defines(macros, "__AVX512BF16__") && defines(macros, "__AVX512VL__");
}

// kiln's 16-lane f32 vectors are whole AVX-512 registers, but GCC tuned for
// an Intel server core (-march=native on a Xeon) prefers 256-bit vectors:
// each `omp simd` helper loop then runs in two halves that meet again
// through the stack, a 64-byte load of two 32-byte stores, which the core
// cannot forward (a stall of about 20 cycles a vector). On a 2-core Xeon
// softmax's max loop took 24 cycles a vector that way, 12 with
// -mprefer-vector-width=512 (docs/passes.md, "CPU figures"). The flag is
// added where the target has AVX-512, the user's flags do not choose a
// width, and the compiler takes it.
void prefer_whole_vectors(Compiler& c) {
  if (c.vector_bytes != 64 || !c.flags_error.empty()) return;
  for (const std::string& flag : c.flags)
    if (flag.starts_with("-mprefer-vector-width=")) return;
  Compiler with = c;
  with.flags.push_back(std::string(kPreferWholeVectors));
  if (predefined_macros(with, true, false).exit_code == 0) c.flags = std::move(with.flags);
}

}  // namespace

Compiler probe_compiler(const std::string& name, std::vector<std::string> flags, bool want_openmp,
                        std::chrono::milliseconds timeout) {
  Compiler c;
  c.timeout = timeout;
  c.path = find_program(name);
  if (c.path.empty())
    sdk::fail(KILN_STATUS_UNAVAILABLE, "c: compiler '" + name + "' not found (option 'compiler'; searched $PATH)");
  const ProcessResult version = run_process({c.path, "--version"}, c.timeout);
  if (version.exit_code != 0)
    sdk::fail(KILN_STATUS_UNAVAILABLE, "c: '" + c.path + " --version' failed (" + version.how_it_ended() + "): " + clipped(version.output, 2000));
  c.version = first_line(version.output);
  c.flags = std::move(flags);

  ProcessResult macros;
  if (want_openmp) {
    macros = predefined_macros(c, true, true);
    c.openmp = macros.exit_code == 0 && defines(macros.output, "_OPENMP");
  }
  if (!c.openmp) {
    macros = predefined_macros(c, true, false);
    if (macros.exit_code != 0) {
      // Kept, not fatal: every compile reports it as COMPILE_FAILED, and the
      // device still lists (with this reason in the log).
      c.flags_error = clipped(macros.output, 2000);
      sdk::Host::log(KILN_LOG_WARNING, "c: the compiler rejects the flags (option 'flags'); kernels will not compile: " +
                                           c.flags_error);
      macros = predefined_macros(c, false, false);
    } else if (want_openmp) {
      sdk::Host::log(KILN_LOG_WARNING, "c: " + c.path + " does not accept -fopenmp; kernels run on one thread");
    }
  }
  if (macros.exit_code == 0) {
    read_target(c, macros.output);
    c.target_digest = sha1_hex(macros.output).substr(0, 16);
  }
  prefer_whole_vectors(c);
  // -print-file-name answers the bare name when it finds nothing.
  const ProcessResult mvec = run_process({c.path, "-print-file-name=libmvec.so"}, c.timeout);
  c.libmvec = mvec.exit_code == 0 && first_line(mvec.output).find('/') != std::string::npos;
  return c;
}

void compile_shared_object(const Compiler& c, bool vector_math, const std::filesystem::path& source,
                           const std::filesystem::path& output) {
  std::vector<std::string> argv{c.path};
  argv.insert(argv.end(), c.flags.begin(), c.flags.end());
  if (c.openmp) argv.push_back("-fopenmp");
  else if (vector_math) argv.push_back("-fopenmp-simd");
  argv.insert(argv.end(), {"-fPIC", "-shared", "-o", output.string(), source.string()});
  if (vector_math) argv.push_back("-lmvec");
  argv.push_back("-lm");
  ProcessResult result = run_process(argv, c.timeout);
  // GCC 12's loop vectorizer crashes on some generated reductions (internal
  // compiler error in info_for_reduction). The source is valid C: build it
  // once more without that pass rather than lose the candidate.
  if (result.exit_code != 0 && result.output.find("internal compiler error") != std::string::npos) {
    sdk::Host::log(KILN_LOG_WARNING, "c: " + c.path + " crashed on " + source.string() +
                                         "; retrying with -fno-tree-vectorize");
    argv.insert(argv.begin() + 1, "-fno-tree-vectorize");
    result = run_process(argv, c.timeout);
  }
  if (result.exit_code != 0)
    sdk::fail(KILN_STATUS_COMPILE_FAILED, "c: " + c.path + " failed on " + source.string() + " (" +
                                              result.how_it_ended() + "):\n" + clipped(result.output));
}

}  // namespace kiln::cplugin
