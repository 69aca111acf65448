// Helpers for writing tunable optimizations (internal to libkiln): errors
// that name the step, parameter lookup, and the handles steps use to name
// what they act on (grid axes, the n-th LOOP in program order), which
// survive normalization where op indices do not.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/passes/optimization.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::passes::opts {

// ErrorCode::InvalidArgument, "split_local(axis=0,factor=3): <why>".
Error step_error(const OptStep& step, std::string_view why);

// The parameter `key`, or a step_error naming it when it is missing.
Result<std::int64_t> require_param(const OptStep& step, std::string_view key);

// A step_error naming the first parameter of the step that is not in `keys`
// (a misspelt key must not silently take a default); success otherwise.
Result<void> known_params(const OptStep& step, std::initializer_list<std::string_view> keys);

// An optional 0/1 parameter: false when absent, a step_error ("KEY must be
// 0 or 1") for any other value.
Result<bool> flag_param(const OptStep& step, std::string_view key);

OptStep make_step(std::string_view name, std::initializer_list<std::pair<std::string_view, std::int64_t>> params);

// The INDEX op of (scope, axis), if the kernel has one.
std::optional<ir::ValueId> find_index(const ir::Kernel& kernel, ir::Scope scope, std::uint32_t axis);

// Whether `memory` is LOCAL storage (shared by a group's threads: what a
// barrier orders).
bool is_local_storage(const ir::Kernel& kernel, ir::ValueId memory);

// The one LOCAL axis of a group (the threads tiled_reduce made): its INDEX
// op and constant length; nullopt when the kernel has none, several, or one
// of another axis or of a length that is not constant.
std::optional<std::pair<ir::ValueId, std::int64_t>> single_local_axis(const ir::Kernel& kernel);

// Whether `op` is a LOAD of a read-only (GLOBAL) param: no op of the launch
// writes what it reads, so it may be repeated, moved or cached.
bool read_only_load(const ir::Kernel& kernel, const ir::Op& op);

// Bytes of the kernel's STORAGE of `scope`: what a thread keeps (REGISTER)
// or a group shares (LOCAL).
std::uint64_t storage_bytes(const ir::Kernel& kernel, ir::Scope scope);

// Why `added` bytes of LOCAL storage (`what`: "the cache") do not fit beside
// the LOCAL storage the kernel has on `device`, or nullopt when they do.
std::optional<std::string> local_memory_refusal(const ir::Kernel& kernel, std::uint64_t added, const DeviceInfo& device,
                                                std::string_view what);

// The REGISTER bytes a thread may keep on `device` (kDefaultMaxRegisterBytes
// where the device does not say).
std::uint64_t max_register_bytes(const DeviceInfo& device);

// Every LOOP op in program order: step parameters name loops by position here.
std::vector<ir::ValueId> loops_in_order(const ir::Kernel& kernel);

// Divisors d of n with lo <= d <= hi, descending (empty when n < 1).
std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t lo, std::int64_t hi);

}  // namespace kiln::passes::opts
