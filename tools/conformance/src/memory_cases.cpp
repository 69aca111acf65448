// The kit's device and memory cases: what plugin.h promises of a device
// beyond its info, and of buffers and copies (errors, device-to-device
// copies). Each reports every problem it finds, not only the first.
#include "cases.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace kiln::conformance::detail {

namespace {

// A buffer of the case's device, freed when the case ends (or throws).
class OwnedBuffer {
 public:
  OwnedBuffer(const Target& t, std::uint64_t bytes) : t_(t), buffer_(t.plugin.alloc(t.device, bytes)) {}
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  ~OwnedBuffer() { t_.plugin.api().buffer_free(t_.device, buffer_); }
  kiln_buffer* get() const { return buffer_; }

 private:
  const Target& t_;
  kiln_buffer* buffer_;
};

std::vector<std::uint8_t> pattern(std::size_t n, unsigned multiplier, unsigned offset) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * multiplier + offset);
  return bytes;
}

std::string cache_key_of(const Target& t) {
  kiln_cache_key_args k{};
  k.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  k.device = t.device;
  check(t.plugin.api().cache_key(&k));
  return k.key != nullptr ? std::string(k.key) : std::string();
}

// event_query (ABI 1.1): NULL refused; a copy's event, waited for, complete.
void check_event_query(const Target& t, kiln_buffer* buffer, std::vector<std::uint8_t>& bytes, Problems& problems) {
  const kiln_plugin_api& api = t.plugin.api();
  kiln_event_query_args q{};
  q.struct_size = KILN_EVENT_QUERY_ARGS_STRUCT_SIZE;
  problems.expect_invalid([&] { check(api.event_query(&q)); }, "event_query of a NULL event");
  kiln_copy_args copy{};
  copy.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  copy.device = t.device;
  copy.device_buffer = buffer;
  copy.host = bytes.data();
  copy.bytes = bytes.size();
  check(api.copy_to_device(&copy));
  if (copy.event == nullptr) return;  // complete already: nothing to query
  kiln_error* waited = api.event_wait(copy.event);
  q.event = copy.event;
  kiln_error* queried = waited == nullptr ? api.event_query(&q) : nullptr;
  api.event_release(copy.event);
  check(waited);
  check(queried);
  problems.expect(q.complete == 1, "event_query after event_wait: complete is " + std::to_string(q.complete));
}

}  // namespace

// What plugin.h promises of a device beyond its info: device_open of an
// open device gives the same handle; memory_info (where present) no more
// free than total (0: unknown); device_synchronize (where present)
// succeeds; the cache key is set and the same each time; a HOST_MEMORY
// buffer's pointer is 64-byte aligned and holds what was copied in;
// event_query (ABI 1.1, where present) refuses NULL and reports a waited
// event complete.
Verdict device_basics(const Target& t) {
  const kiln_plugin_api& api = t.plugin.api();
  Problems problems;
  problems.expect(t.plugin.open(t.index) == t.device, "device_open of the open device gave another handle");
  if (api.memory_info != nullptr) {
    kiln_memory_info_args m{};
    m.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
    m.device = t.device;
    check(api.memory_info(&m));
    problems.expect(m.total_bytes == 0 || m.free_bytes <= m.total_bytes,
                    "memory_info: free_bytes " + std::to_string(m.free_bytes) + " above total_bytes " +
                        std::to_string(m.total_bytes));
  }
  if (api.device_synchronize != nullptr) check(api.device_synchronize(t.device));
  if (api.cache_key != nullptr) {
    const std::string first = cache_key_of(t);
    problems.expect(!first.empty(), "cache_key is empty");
    problems.expect(cache_key_of(t) == first, "cache_key changed between two calls");
  }
  std::vector<std::uint8_t> bytes = pattern(192, 29, 11);
  const OwnedBuffer buffer(t, bytes.size());
  t.plugin.write(t.device, buffer.get(), bytes.data(), bytes.size());
  if (api.struct_size >= KILN_PLUGIN_API_STRUCT_SIZE && api.event_query != nullptr)
    check_event_query(t, buffer.get(), bytes, problems);
  if (t.info.flags & KILN_DEVICE_HOST_MEMORY) {
    const auto* p = static_cast<const std::uint8_t*>(t.plugin.host_pointer(t.device, buffer.get()));
    problems.expect(reinterpret_cast<std::uintptr_t>(p) % 64 == 0, "buffer_host_pointer is not 64-byte aligned");
    problems.expect(p != nullptr && std::memcmp(p, bytes.data(), bytes.size()) == 0,
                    "buffer_host_pointer does not hold the bytes copied in");
  }
  return problems.verdict();
}

// The errors plugin.h gives buffer_alloc and the host copies: a size of 0,
// a range past the end and a NULL host pointer are INVALID_ARGUMENT; a copy
// of no bytes needs no host pointer; buffer_free(NULL) is a no-op.
Verdict buffer_errors(const Target& t) {
  const kiln_plugin_api& api = t.plugin.api();
  Problems problems;
  problems.expect_invalid([&] { api.buffer_free(t.device, t.plugin.alloc(t.device, 0)); }, "buffer_alloc of 0 bytes");
  api.buffer_free(t.device, nullptr);
  const OwnedBuffer buffer(t, 64);
  kiln_buffer* b = buffer.get();
  std::vector<std::uint8_t> bytes(128, 1);
  problems.expect_invalid([&] { t.plugin.write(t.device, b, bytes.data(), 65); }, "copy_to_device of 65 bytes into 64");
  problems.expect_invalid([&] { t.plugin.read(t.device, b, bytes.data(), 65); }, "copy_to_host of 65 bytes from 64");
  problems.expect_invalid([&] { t.plugin.write(t.device, b, nullptr, 8); }, "copy_to_device from a NULL host pointer");
  problems.expect_invalid([&] { t.plugin.read(t.device, b, nullptr, 8); }, "copy_to_host into a NULL host pointer");
  t.plugin.write(t.device, b, nullptr, 0);
  t.plugin.read(t.device, b, nullptr, 0);
  return problems.verdict();
}

// copy_device_to_device (plugin.h): between two buffers and between
// disjoint ranges of one, the bytes asked for and no others; ranges of one
// buffer that overlap, and a range past the end, INVALID_ARGUMENT with
// nothing written.
Verdict device_copies(const Target& t) {
  if (t.plugin.api().copy_device_to_device == nullptr) return Verdict::unsupported("copy_device_to_device is NULL");
  constexpr std::size_t n = 256;
  const OwnedBuffer buffer_a(t, n), buffer_b(t, n);
  kiln_buffer* const a = buffer_a.get();
  kiln_buffer* const b = buffer_b.get();
  std::vector<std::uint8_t> in_a = pattern(n, 13, 5), in_b(n, 0xee);
  t.plugin.write(t.device, a, in_a.data(), n);
  t.plugin.write(t.device, b, in_b.data(), n);

  Problems problems;
  t.plugin.copy(t.device, b, 16, a, 40, 100);
  std::copy(in_a.begin() + 40, in_a.begin() + 140, in_b.begin() + 16);
  problems.expect_bytes(t, b, in_b, "a to b, [40, 140) to [16, 116)");
  t.plugin.copy(t.device, a, 200, a, 0, 56);
  std::copy(in_a.begin(), in_a.begin() + 56, in_a.begin() + 200);
  problems.expect_bytes(t, a, in_a, "within a, [0, 56) to [200, 256)");
  t.plugin.copy(t.device, a, n, a, 0, 0);
  problems.expect_invalid([&] { t.plugin.copy(t.device, a, 10, a, 0, 100); },
                          "within a, [0, 100) to [10, 110) (overlapping)");
  problems.expect_invalid([&] { t.plugin.copy(t.device, a, 0, a, 10, 100); },
                          "within a, [10, 110) to [0, 100) (overlapping)");
  problems.expect_invalid([&] { t.plugin.copy(t.device, b, 200, a, 0, 100); },
                          "a to b, [0, 100) to [200, 300) (past the end)");
  problems.expect_bytes(t, a, in_a, "after the refused copies, a");
  problems.expect_bytes(t, b, in_b, "after the refused copies, b");
  return problems.verdict();
}

}  // namespace kiln::conformance::detail
