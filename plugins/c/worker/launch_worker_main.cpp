// kiln-c-worker: runs one timed launch of a compiled C kernel in a process
// of its own, for launches the host marks KILN_TIMED_ISOLATE (autotuning
// candidates). A candidate that crashes or hangs here costs this process;
// the plugin reports it and the host's buffers stay as they were
// (plugins/c/isolated_launch.cpp; the format: worker_protocol.hpp).
#include "../worker_protocol.hpp"

#include <kiln/sdk/timing.hpp>

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace kiln::cplugin::worker;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "kiln-c-worker: %s\n", message.c_str());
  std::_Exit(2);
}

bool read_exact(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_exact(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

void flush_caches(const std::vector<std::pair<const char*, std::uint64_t>>& buffers) {
#if defined(__x86_64__)
  for (const auto& [p, bytes] : buffers)
    for (std::uint64_t offset = 0; offset < bytes; offset += 64) __builtin_ia32_clflush(p + offset);
  __builtin_ia32_mfence();
#else
  (void)buffers;
#endif
}

}  // namespace

int main() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the host
  Request request;
  if (!read_exact(0, &request, sizeof request) || request.magic != kRequestMagic) die("bad request");
  std::string object(request.path_bytes, '\0');
  std::vector<Slot> slots(request.n_slots);
  if (!read_exact(0, object.data(), object.size()) || !read_exact(0, slots.data(), slots.size() * sizeof(Slot)))
    die("short request");

  char* memory = nullptr;
  if (request.buffer_bytes > 0) {
    // MAP_POPULATE: the host has written every page; mapping them all now
    // keeps their first-touch faults (tens of ms for 200 MB of 4 KiB pages)
    // out of the first timed run, which a short budget may take as the
    // measurement (runs that fit the allowance: sometimes one).
    void* mapped =
        ::mmap(nullptr, request.buffer_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, kBuffersFd, 0);
    if (mapped == MAP_FAILED) die(std::string("mmap: ") + std::strerror(errno));
    memory = static_cast<char*>(mapped);
  }
  void* handle = ::dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) die(std::string("dlopen: ") + ::dlerror());
  using Entry = void (*)(void* const* args, const std::int64_t* groups);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "kiln_kernel"));
  if (entry == nullptr) die("no kiln_kernel in " + object);

  std::vector<void*> pointers(slots.size());
  std::vector<std::uint64_t> scalars(slots.size());
  std::vector<std::pair<const char*, std::uint64_t>> buffers;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].is_buffer) {
      if (slots[i].offset_or_bits + slots[i].bytes > request.buffer_bytes) die("slot past the shared memory");
      pointers[i] = memory + slots[i].offset_or_bits;
      buffers.emplace_back(memory + slots[i].offset_or_bits, slots[i].bytes);
    } else {
      scalars[i] = slots[i].offset_or_bits;
      pointers[i] = &scalars[i];
    }
  }
  const kiln::sdk::TimingResult result =
      kiln::sdk::time_runs(request.warmups, request.repeats, request.abort_ns, [&] {
        if (request.flush) flush_caches(buffers);
        return kiln::sdk::steady_ns([&] { entry(pointers.data(), request.groups); });
      });
  Response response;
  response.runs = static_cast<std::uint32_t>(result.samples_ns.size());
  response.aborted = result.aborted ? 1u : 0u;
  response.min_ns = result.min_ns;
  response.median_ns = result.median_ns;
  if (!write_exact(kResponseFd, &response, sizeof response) ||
      !write_exact(kResponseFd, result.samples_ns.data(), result.samples_ns.size() * sizeof(std::uint64_t)))
    die("cannot write the response");
  std::_Exit(0);  // no exit handlers: libgomp's threads may still be winding down
}
