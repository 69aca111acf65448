// The kit's ABI cases: what a device says of itself, buffers, and small
// kernels the core's standard library does not build (f16/bf16 rounding
// after each op, integer wrap and shifts, vectors, a minimal add that any
// device that compiles at all can run), each compared with the interpreter.
#include "cases.hpp"

#include <kiln/conformance/capabilities.hpp>
#include <kiln/conformance/wire_builder.hpp>

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>

namespace kiln::conformance::detail {

namespace {

HostArg random_floats(std::uint8_t dt, std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  return random_arg(dt, n, rng, lo, hi);
}

// Every rule of kiln_device_info the kit can check, all problems at once.
Verdict device_info(const Target& t) {
  const kiln_device_info& info = t.info;
  std::string problems;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) problems += (problems.empty() ? "" : "; ") + what;
  };
  expect(std::strlen(info.name) > 0, "name is empty");
  expect(info.max_local_threads >= 1, "max_local_threads is 0");
  expect(info.warp_size >= 1, "warp_size is 0");
  expect((info.vector_widths & (1u << 1)) != 0, "vector_widths lacks bit 1 (scalars)");
  expect(info.dtype_ops[KILN_DTYPE_INVALID] == 0, "dtype_ops[INVALID] is not 0");
  if (info.flags & KILN_DEVICE_HOST_MEMORY)
    expect(t.plugin.api().buffer_host_pointer != nullptr, "HOST_MEMORY device without buffer_host_pointer");
  if (info.flags & KILN_DEVICE_CAN_COMPILE) {
    const std::string missing = missing_kernel_functions(t.plugin.api());
    expect(missing.empty(), "CAN_COMPILE device, but the table has no " + missing);
  }
  return problems.empty() ? Verdict::pass() : Verdict::fail(problems);
}

Verdict buffers_round_trip(const Target& t) {
  std::vector<std::uint8_t> in(1000), out(1000, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 3);
  kiln_buffer* b = t.plugin.alloc(t.device, in.size());
  try {
    t.plugin.write(t.device, b, in.data(), in.size());
    t.plugin.read(t.device, b, out.data(), out.size());
  } catch (...) {
    t.plugin.api().buffer_free(t.device, b);
    throw;
  }
  t.plugin.api().buffer_free(t.device, b);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i] != out[i])
      return Verdict::fail("byte " + std::to_string(i) + " of 1000 read back as " + std::to_string(out[i]) +
                           ", written as " + std::to_string(in[i]));
  return Verdict::pass();
}

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

// c[i] = a[i] + b[i] over one group axis, no IF, no local threads: the
// smallest kernel a compiling device must get right.
Verdict elementwise_add(const Target& t) {
  if (!has_binary(t.info, KILN_DTYPE_F32, KILN_BINARY_ADD)) return Verdict::unsupported("the device has no f32 add");
  const std::int64_t n = 256;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, n);
  auto i = w.group_index(0, w.const_i64(n));
  w.store(KILN_DTYPE_F32, c, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i), w.load(KILN_DTYPE_F32, b, i)));
  return matches_interpreter(t, w.ops,
                             {random_floats(KILN_DTYPE_F32, n, 1), random_floats(KILN_DTYPE_F32, n, 2),
                              HostArg::poisoned(KILN_DTYPE_F32, n)},
                             2, Tolerance{});
}

// f16 and bf16 add and multiply, rounded to nearest even after each op: exact.
Verdict half_precision(const Target& t) {
  bool ran = false;
  for (std::uint8_t dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    if (!has_binary(t.info, dt, KILN_BINARY_ADD) || !has_binary(t.info, dt, KILN_BINARY_MUL)) continue;
    const std::int64_t n = 512;
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
    auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, n);
    auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, n);
    auto i = w.group_index(0, w.const_i64(n));
    auto x = w.load(dt, a, i), y = w.load(dt, b, i);
    w.store(dt, c, i, w.binary(KILN_BINARY_MUL, dt, w.binary(KILN_BINARY_ADD, dt, x, y), y));
    Verdict v = matches_interpreter(t, w.ops, {random_floats(dt, n, 7, -8, 8), random_floats(dt, n, 8, -8, 8), HostArg::poisoned(dt, n)},
                                    2, Tolerance{});
    if (v.status != CaseStatus::passed) {
      v.reason = std::string(sdk::dtype_name(dt)) + ": " + v.reason;
      return v;
    }
    ran = true;
  }
  return ran ? Verdict::pass() : Verdict::unsupported("the device has no f16 or bf16 add and mul");
}

// Integer arithmetic wraps; shifts take the count mod the width.
Verdict integer_wrap(const Target& t) {
  for (unsigned op : {KILN_BINARY_MUL, KILN_BINARY_BIT_XOR, KILN_BINARY_SHR})
    if (!has_binary(t.info, KILN_DTYPE_I32, op))
      return Verdict::unsupported("the device has no i32 " + std::string(sdk::binary_name(op)));
  const std::int64_t n = 256;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, n);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 1, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 2, n);
  auto i = w.group_index(0, w.const_i64(n));
  auto x = w.load(KILN_DTYPE_I32, a, i), y = w.load(KILN_DTYPE_I32, b, i);
  auto prod = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I32, x, y);
  w.store(KILN_DTYPE_I32, c, i,
          w.binary(KILN_BINARY_BIT_XOR, KILN_DTYPE_I32, prod, w.binary(KILN_BINARY_SHR, KILN_DTYPE_I32, x, y)));
  std::mt19937_64 rng(9);
  return matches_interpreter(t, w.ops,
                             {random_arg(KILN_DTYPE_I32, n, rng), random_arg(KILN_DTYPE_I32, n, rng),
                              HostArg::poisoned(KILN_DTYPE_I32, n)},
                             2, Tolerance{});
}

// Vector loads, MAD and stores, at the widest width the device offers (up to 8).
Verdict vector_mad(const Target& t) {
  std::uint8_t lanes = 1;
  for (std::uint8_t l : {2, 4, 8})
    if (t.info.vector_widths & (1u << l)) lanes = l;
  if (lanes == 1) return Verdict::unsupported("the device has no vector widths");
  if (!has_dtype(t.info, KILN_DTYPE_F32)) return Verdict::unsupported("the device has no f32");
  const std::int64_t n = 1024;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  auto g = w.group_index(0, w.const_i64(n / lanes));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  auto x = w.load(KILN_DTYPE_F32, a, i, lanes);
  auto half = w.broadcast(KILN_DTYPE_F32, w.const_f32(0.5f), lanes);
  w.store(KILN_DTYPE_F32, c, i, w.mad(KILN_DTYPE_F32, x, half, x, lanes), lanes);
  Verdict v = matches_interpreter(t, w.ops, {random_floats(KILN_DTYPE_F32, n, 10), HostArg::poisoned(KILN_DTYPE_F32, n)},
                                  1, Tolerance{1e-6, 0, 0});
  if (v.status != CaseStatus::passed) v.reason = "x" + std::to_string(lanes) + ": " + v.reason;
  return v;
}

}  // namespace

std::optional<Verdict> cannot_run_kernels(const Target& target) {
  const std::string missing = missing_kernel_functions(target.plugin.api());
  if (missing.empty()) return std::nullopt;
  return Verdict::unsupported("the plugin table has no " + missing);
}

Verdict matches_interpreter(const Target& target, const std::vector<kiln_op>& ops, std::vector<HostArg> args,
                            std::size_t out_slot, const Tolerance& tolerance) {
  if (auto v = cannot_run_kernels(target)) return *v;
  const std::vector<HostArg> want = interpreted(ops, args);
  run_kernel(target.plugin, target.device, ops, args);
  if (auto problem = difference("output", args[out_slot], want[out_slot], tolerance)) return Verdict::fail(*problem);
  return Verdict::pass();
}

std::vector<Case> abi_cases(const kiln_device_info&) {
  return {
      {"device info", device_info},
      {"device basics", device_basics},
      {"buffers round trip", buffers_round_trip},
      {"buffer and copy errors", buffer_errors},
      {"device-to-device copies", device_copies},
      {"elementwise add f32", elementwise_add},
      {"half precision arithmetic is exact", half_precision},
      {"integer wrap and shifts", integer_wrap},
      {"vector mad f32", vector_mad},
  };
}

}  // namespace kiln::conformance::detail
