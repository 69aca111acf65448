// compile: wire kernel -> C source -> cached shared object -> entry point.
//
// The disk cache is keyed by SHA-1 of (source + plugin version + compiler
// identity + flags): a changed compiler or flag never reuses an old object.
// Writers race safely: each compiles to a unique temporary and renames it
// into place atomically; equal keys always hold equal objects.
// Objects are never dlclosed (an -fopenmp object crashes the process when
// unloaded under libgomp's threads, PLATFORM.md); a program_release only
// frees the Program.
#include "c.hpp"

#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <boost/uuid/detail/sha1.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>

namespace kiln::cplugin {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEntry = "kiln_kernel";

}  // namespace

std::string sha1_hex(const std::string& text) {
  boost::uuids::detail::sha1 sha;
  sha.process_bytes(text.data(), text.size());
  boost::uuids::detail::sha1::digest_type digest;
  sha.get_digest(digest);
  std::string hex;
  for (const auto word : digest) {  // unsigned int[5] before Boost 1.86, unsigned char[20] after
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%0*x", static_cast<int>(2 * sizeof word), static_cast<unsigned>(word));
    hex += buffer;
  }
  return hex;
}

namespace {

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) sdk::fail(KILN_STATUS_INTERNAL, "c: cannot write " + path.string());
}

// A name no other thread or process uses: <key>.<pid>.<n>
std::string unique_stem(const std::string& key) {
  static std::atomic<unsigned> counter{0};
  return key + "." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

void build(const fs::path& object, const std::string& key, const std::string& source) {
  const Settings& s = state().settings;
  const std::string stem = unique_stem(key);
  const fs::path source_tmp = s.cache_dir / (stem + ".c");
  const fs::path object_tmp = s.cache_dir / (stem + ".so.tmp");
  const fs::path kept_source = s.cache_dir / (key + ".c");
  write_file(source_tmp, source);
  const auto begin = std::chrono::steady_clock::now();
  try {
    if (!s.compiler.flags_error.empty())
      sdk::fail(KILN_STATUS_COMPILE_FAILED, "c: the compiler rejects the flags (option 'flags'); source kept at " +
                                                kept_source.string() + ":\n" + s.compiler.flags_error);
    compile_shared_object(s.compiler, s.vector_math, source_tmp, object_tmp);
  } catch (const sdk::PluginError& e) {
    std::error_code ec;
    fs::rename(source_tmp, kept_source, ec);  // where the message's path points the user
    fs::remove(object_tmp, ec);
    std::string message = e.what();
    for (auto at = message.find(source_tmp.string()); at != std::string::npos; at = message.find(source_tmp.string()))
      message.replace(at, source_tmp.string().size(), kept_source.string());
    sdk::fail(e.status(), message);
  }
  std::error_code ec;
  fs::rename(object_tmp, object, ec);
  if (ec) sdk::fail(KILN_STATUS_INTERNAL, "c: cannot move " + object_tmp.string() + " into the cache: " + ec.message());
  if (s.keep_source) fs::rename(source_tmp, kept_source, ec);
  else fs::remove(source_tmp, ec);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count();
  sdk::Host::log(KILN_LOG_DEBUG, "c: compiled " + object.string() + " in " + std::to_string(ms) + " ms");
}

void* open_object(const fs::path& object) { return ::dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL); }

// Test only (Settings::plant_fault): the entry point of every plant_every-th
// program crashes or hangs before it does its work. The planted source
// differs, so its cache entry does too.
void plant_fault(std::string& source, const Settings& s) {
  if (s.plant_every <= 0 || s.plant_fault.empty() || ++state().compiled % s.plant_every != 0) return;
  const std::string entry = "void " + std::string(kEntry) + "(";
  const std::size_t at = source.find(entry);
  if (at == std::string::npos) return;
  source.replace(at, entry.size(), "static void " + std::string(kEntry) + "_unplanted(");
  const std::string fault = s.plant_fault == "segv" ? "*(volatile int*)0 = 0;" : "for (volatile int spin = 1; spin;) {}";
  source += "\n/* planted: test_plant_fault */\nvoid " + std::string(kEntry) +
            "(void* const* args, const int64_t* groups) {\n  " + fault + "\n  " + std::string(kEntry) +
            "_unplanted(args, groups);\n}\n";
}

}  // namespace

namespace {

kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    const std::span<const kiln_op> ops = sdk::kernel_ops(args.kernel);
    if (ops.empty()) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: compile: the kernel is empty");
    const Settings& s = state().settings;
    sdk::EmitOptions options;
    options.entry = kEntry;
    options.parallel = s.compiler.openmp;
    options.threads = s.threads;
    options.vector_math = s.vector_math;
    auto program = std::make_unique<Program>();
    sdk::EmittedKernel emitted = sdk::emit_c_family(ops, sdk::c_dialect(), options);
    program->source = std::move(emitted.source);
    plant_fault(program->source, s);
    program->params = std::move(emitted.shape.params);

    const std::string key = sha1_hex(program->source + '\n' + state().cache_key);
    const fs::path object = s.cache_dir / (key + ".so");
    void* handle = nullptr;
    if (fs::exists(object)) {
      handle = open_object(object);
      if (handle != nullptr) sdk::Host::log(KILN_LOG_DEBUG, "c: cache hit " + object.string());
      else {  // a damaged object (disk full, killed writer): build it again
        sdk::Host::log(KILN_LOG_WARNING, "c: rebuilding unloadable cache entry " + object.string() + ": " + ::dlerror());
        std::error_code ec;
        fs::remove(object, ec);
      }
    }
    if (handle == nullptr) {
      build(object, key, program->source);
      handle = open_object(object);
      if (handle == nullptr) sdk::fail(KILN_STATUS_COMPILE_FAILED, "c: cannot load " + object.string() + ": " + ::dlerror());
    }
    program->entry = reinterpret_cast<Program::Entry>(::dlsym(handle, kEntry));
    program->object = object;
    if (program->entry == nullptr)
      sdk::fail(KILN_STATUS_COMPILE_FAILED, "c: " + object.string() + " has no symbol " + kEntry);
    args.program = reinterpret_cast<kiln_program*>(program.release());
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::answer_program_source(raw, "c: program_source", [](kiln_program* program) {
    return sdk::ProgramText{"c", reinterpret_cast<const Program*>(program)->source};
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

}  // namespace

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::cplugin
