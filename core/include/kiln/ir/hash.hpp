// kiln/ir/hash.hpp - the canonical hash of a kernel, the key of compiled-
// program caches and of the on-disk tuning database.
//
// Canonical: a Kernel is its op vector and ops are named by position, so two
// kernels that print the same are the same vector and hash the same, however
// they were built or rewritten. Stable across runs, builds and platforms: the
// hash reads each op's fields in a fixed order and byte order, never memory
// layout or std::hash. Algorithm (version 1), written so that any language
// can recompute it:
//
//   bytes  = "kiln-ir-1" ++ u64le(number of ops)
//            ++ for each op: kind, dtype, lanes, code (one byte each),
//               u32le(attr), u32le(src[0]), u32le(src[1]), u32le(src[2]),
//               u32le(reserved), u64le(imm)                 (32 bytes per op)
//   h      = FNV-1a 64 of bytes (offset basis 0xcbf29ce484222325,
//            prime 0x100000001b3)
//   hash   = splitmix64 finalizer of h:
//            h ^= h >> 30; h *= 0xbf58476d1ce4e5b9; h ^= h >> 27;
//            h *= 0x94d049bb133111eb; h ^= h >> 31
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <string>

namespace kiln::ir {

std::uint64_t hash(const Kernel& kernel);
// The hash as 16 lowercase hex digits.
std::string hash_hex(const Kernel& kernel);

}  // namespace kiln::ir
