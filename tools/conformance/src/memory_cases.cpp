// The kit's device and memory cases: what plugin.h promises of a device
// beyond its info, and of buffers and copies (errors, device-to-device
// copies). Each reports every problem it finds, not only the first.
#include "cases.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace kiln::conformance::detail {

// What plugin.h promises of a device beyond its info: device_open of an
// open device gives the same handle; memory_info (where present) no more
// free than total (0: unknown); device_synchronize (where present)
// succeeds; the cache key is set and the same each time; a HOST_MEMORY
// buffer's pointer is 64-byte aligned and holds what was copied in;
// event_query (ABI 1.1, where present) refuses NULL and reports a waited
// event complete.
Verdict device_basics(const Target& t) {
  const kiln_plugin_api& api = t.plugin.api();
  std::string problems;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) problems += (problems.empty() ? "" : "; ") + what;
  };
  expect(t.plugin.open(t.index) == t.device, "device_open of the open device gave another handle");
  if (api.memory_info != nullptr) {
    kiln_memory_info_args m{};
    m.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
    m.device = t.device;
    check(api.memory_info(&m));
    expect(m.total_bytes == 0 || m.free_bytes <= m.total_bytes,
           "memory_info: free_bytes " + std::to_string(m.free_bytes) + " above total_bytes " +
               std::to_string(m.total_bytes));
  }
  if (api.device_synchronize != nullptr) check(api.device_synchronize(t.device));
  auto key = [&] {
    kiln_cache_key_args k{};
    k.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
    k.device = t.device;
    check(api.cache_key(&k));
    return k.key != nullptr ? std::string(k.key) : std::string();
  };
  if (api.cache_key != nullptr) {
    const std::string first = key();
    expect(!first.empty(), "cache_key is empty");
    expect(key() == first, "cache_key changed between two calls");
  }
  constexpr std::size_t n = 192;
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * 29 + 11);
  kiln_buffer* b = t.plugin.alloc(t.device, n);
  try {
    kiln_copy_args copy{};
    copy.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
    copy.device = t.device;
    copy.device_buffer = b;
    copy.host = bytes.data();
    copy.bytes = n;
    check(api.copy_to_device(&copy));
    const bool has_query = api.struct_size >= KILN_PLUGIN_API_STRUCT_SIZE && api.event_query != nullptr;
    if (copy.event != nullptr) {
      t.plugin.wait(copy.event);  // waits and releases
    }
    if (has_query) {
      kiln_event_query_args q{};
      q.struct_size = KILN_EVENT_QUERY_ARGS_STRUCT_SIZE;
      kiln_error* e = api.event_query(&q);
      expect(e != nullptr, "event_query of a NULL event succeeded");
      try {
        check(e);
      } catch (const AbiError& refused) {
        expect(refused.status == KILN_STATUS_INVALID_ARGUMENT,
               "event_query of a NULL event failed with status " + std::to_string(refused.status));
      }
      // A fresh copy's event, waited for, then queried.
      check(api.copy_to_device(&copy));
      if (copy.event != nullptr) {
        check(api.event_wait(copy.event));
        q.event = copy.event;
        kiln_error* after = api.event_query(&q);
        api.event_release(copy.event);
        check(after);
        expect(q.complete == 1, "event_query after event_wait: complete is " + std::to_string(q.complete));
      }
    }
    if (t.info.flags & KILN_DEVICE_HOST_MEMORY) {
      const auto* p = static_cast<const std::uint8_t*>(t.plugin.host_pointer(t.device, b));
      expect(reinterpret_cast<std::uintptr_t>(p) % 64 == 0, "buffer_host_pointer is not 64-byte aligned");
      expect(p != nullptr && std::memcmp(p, bytes.data(), n) == 0,
             "buffer_host_pointer does not hold the bytes copied in");
    }
  } catch (...) {
    api.buffer_free(t.device, b);
    throw;
  }
  api.buffer_free(t.device, b);
  return problems.empty() ? Verdict::pass() : Verdict::fail(problems);
}

// The errors plugin.h gives buffer_alloc and the host copies: a size of 0,
// a range past the end and a NULL host pointer are INVALID_ARGUMENT; a copy
// of no bytes needs no host pointer; buffer_free(NULL) is a no-op.
Verdict buffer_errors(const Target& t) {
  const kiln_plugin_api& api = t.plugin.api();
  std::string problems;
  auto expect_invalid = [&](const std::function<void()>& call, const std::string& what) {
    try {
      call();
      problems += (problems.empty() ? "" : "; ") + what + " was accepted";
    } catch (const AbiError& e) {
      if (e.status != KILN_STATUS_INVALID_ARGUMENT)
        problems += (problems.empty() ? "" : "; ") + what + " failed with status " + std::to_string(e.status) +
                    ", not INVALID_ARGUMENT";
    }
  };
  expect_invalid([&] { api.buffer_free(t.device, t.plugin.alloc(t.device, 0)); }, "buffer_alloc of 0 bytes");
  api.buffer_free(t.device, nullptr);
  kiln_buffer* b = t.plugin.alloc(t.device, 64);
  try {
    std::vector<std::uint8_t> bytes(128, 1);
    expect_invalid([&] { t.plugin.write(t.device, b, bytes.data(), 65); }, "copy_to_device of 65 bytes into 64");
    expect_invalid([&] { t.plugin.read(t.device, b, bytes.data(), 65); }, "copy_to_host of 65 bytes from 64");
    expect_invalid([&] { t.plugin.write(t.device, b, nullptr, 8); }, "copy_to_device from a NULL host pointer");
    expect_invalid([&] { t.plugin.read(t.device, b, nullptr, 8); }, "copy_to_host into a NULL host pointer");
    t.plugin.write(t.device, b, nullptr, 0);
    t.plugin.read(t.device, b, nullptr, 0);
  } catch (...) {
    api.buffer_free(t.device, b);
    throw;
  }
  api.buffer_free(t.device, b);
  return problems.empty() ? Verdict::pass() : Verdict::fail(problems);
}

// copy_device_to_device (plugin.h): between two buffers and between
// disjoint ranges of one, the bytes asked for and no others; ranges of one
// buffer that overlap, and a range past the end, INVALID_ARGUMENT with
// nothing written.
Verdict device_copies(const Target& t) {
  if (t.plugin.api().copy_device_to_device == nullptr) return Verdict::unsupported("copy_device_to_device is NULL");
  constexpr std::size_t n = 256;
  struct Buffers {
    const Target& t;
    kiln_buffer* a = nullptr;
    kiln_buffer* b = nullptr;
    ~Buffers() {
      if (a != nullptr) t.plugin.api().buffer_free(t.device, a);
      if (b != nullptr) t.plugin.api().buffer_free(t.device, b);
    }
  } buffers{t};
  buffers.a = t.plugin.alloc(t.device, n);
  buffers.b = t.plugin.alloc(t.device, n);
  std::vector<std::uint8_t> a(n), b(n, 0xee);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint8_t>(i * 13 + 5);
  t.plugin.write(t.device, buffers.a, a.data(), n);
  t.plugin.write(t.device, buffers.b, b.data(), n);

  std::string problems;
  auto expect_bytes = [&](kiln_buffer* buffer, const std::vector<std::uint8_t>& want, const std::string& after) {
    std::vector<std::uint8_t> got(n);
    t.plugin.read(t.device, buffer, got.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != want[i]) {
        problems += (problems.empty() ? "" : "; ") + after + ": byte " + std::to_string(i) + " is " +
                    std::to_string(got[i]) + ", not " + std::to_string(want[i]);
        return;
      }
  };
  auto expect_refused = [&](kiln_buffer* dst, std::uint64_t dst_offset, std::uint64_t src_offset, std::uint64_t bytes,
                            const std::string& what) {
    try {
      t.plugin.copy(t.device, dst, dst_offset, buffers.a, src_offset, bytes);
      problems += (problems.empty() ? "" : "; ") + what + " was accepted";
    } catch (const AbiError& e) {
      if (e.status != KILN_STATUS_INVALID_ARGUMENT)
        problems += (problems.empty() ? "" : "; ") + what + " failed with status " + std::to_string(e.status) +
                    ", not INVALID_ARGUMENT";
    }
  };

  t.plugin.copy(t.device, buffers.b, 16, buffers.a, 40, 100);
  std::copy(a.begin() + 40, a.begin() + 140, b.begin() + 16);
  expect_bytes(buffers.b, b, "a to b, [40, 140) to [16, 116)");
  t.plugin.copy(t.device, buffers.a, 200, buffers.a, 0, 56);
  std::copy(a.begin(), a.begin() + 56, a.begin() + 200);
  expect_bytes(buffers.a, a, "within a, [0, 56) to [200, 256)");
  t.plugin.copy(t.device, buffers.a, n, buffers.a, 0, 0);
  expect_refused(buffers.a, 10, 0, 100, "within a, [0, 100) to [10, 110) (overlapping)");
  expect_refused(buffers.a, 0, 10, 100, "within a, [10, 110) to [0, 100) (overlapping)");
  expect_refused(buffers.b, 200, 0, 100, "a to b, [0, 100) to [200, 300) (past the end)");
  expect_bytes(buffers.a, a, "after the refused copies, a");
  expect_bytes(buffers.b, b, "after the refused copies, b");
  return problems.empty() ? Verdict::pass() : Verdict::fail(problems);
}

}  // namespace kiln::conformance::detail
