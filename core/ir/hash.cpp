#include "kiln/ir/hash.hpp"

#include <string_view>

namespace kiln::ir {

namespace {

class Fnv1a64 {
 public:
  void byte(std::uint8_t b) {
    state_ ^= b;
    state_ *= 0x100000001b3ull;
  }
  // Little-endian, whatever the host's byte order.
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void text(std::string_view s) {
    for (char c : s) byte(static_cast<std::uint8_t>(c));
  }
  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
};

std::uint64_t splitmix64_finalize(std::uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

std::uint64_t hash(const Kernel& kernel) {
  Fnv1a64 f;
  f.text("kiln-ir-1");
  f.u64(kernel.size());
  for (const Op& op : kernel.ops) {
    f.byte(static_cast<std::uint8_t>(op.kind));
    f.byte(static_cast<std::uint8_t>(op.dtype));
    f.byte(op.lanes);
    f.byte(op.code);
    f.u32(op.attr);
    for (ValueId v : op.src) f.u32(v);
    f.u32(op.reserved);
    f.u64(op.imm);
  }
  return splitmix64_finalize(f.state());
}

std::string hash_hex(const Kernel& kernel) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::uint64_t h = hash(kernel);
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) out[15 - i] = kDigits[(h >> (4 * i)) & 0xf];
  return out;
}

}  // namespace kiln::ir
