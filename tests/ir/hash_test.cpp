// The canonical hash: equal kernels hash equal however they were built; any
// single field changes it; it follows its documented algorithm and is pinned.
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/rewriter.hpp"
#include "kiln/ir/text.hpp"

#include <bit>
#include <cstring>
#include <set>

using namespace kiln::ir;

namespace {

Kernel add8_built() {
  Builder b;
  const Value a = b.param(ParamKind::Global, DType::F32, 8);
  const Value bb = b.param(ParamKind::Global, DType::F32, 8);
  const Value c = b.param(ParamKind::GlobalMut, DType::F32, 8);
  const Value i = b.group_index(0, 8);
  const Value x = b.load(a, i);
  const Value y = b.load(bb, i);
  b.store(c, i, b.add(x, y));
  return b.finish();
}

// The algorithm as hash.hpp documents it, written independently: on a
// little-endian host the documented op bytes are exactly kiln_op's memory.
std::uint64_t documented_hash(const Kernel& kernel) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto feed = [&](const void* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<const unsigned char*>(data)[i];
      h *= 0x100000001b3ull;
    }
  };
  feed("kiln-ir-1", 9);
  const std::uint64_t count = kernel.size();
  feed(&count, 8);
  const std::vector<kiln_op> wire = kernel.to_wire();
  feed(wire.data(), wire.size() * sizeof(kiln_op));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

TEST(Hash, IsPinnedForAFixedKernel) {
  // These constants key on-disk tuning databases: change them only together
  // with the "kiln-ir-N" version of the algorithm. (Recomputed independently
  // in Python from the documented byte layout.)
  EXPECT_EQ(hash_hex(parse(samples::kAdd8).value()), "5b71b7ba7cb68588");
  EXPECT_EQ(hash_hex(Kernel{}), "edb49b7b2c45ef48");
}

TEST(Hash, FollowsTheDocumentedAlgorithm) {
  if constexpr (std::endian::native != std::endian::little) GTEST_SKIP() << "byte-image check needs little-endian";
  for (std::string_view text : {samples::kAdd8, samples::kEveryOpKind, std::string_view()})
    EXPECT_EQ(hash(parse(text).value()), documented_hash(parse(text).value()));
}

TEST(Hash, KernelsThatPrintTheSameHashTheSameHoweverBuilt) {
  const Kernel parsed = parse(samples::kAdd8).value();
  const Kernel built = add8_built();
  // Built with extra ops that a rewrite then drops, and renamed through it.
  Builder noisy;
  const Value junk = noisy.constant(DType::F64, 3.25);
  noisy.neg(junk);
  Kernel with_junk = noisy.finish();
  for (const Op& op : add8_built().ops) with_junk.ops.push_back(op);
  for (std::size_t i = 2; i < with_junk.size(); ++i)
    for (ValueId& v : with_junk.ops[i].operands()) v += 2;
  const Kernel rewritten = rewrite(with_junk, [](Rewriter& rw, ValueId id) {
    if (id >= 2) return false;
    rw.drop(id);
    return true;
  });
  // From a hand-written text with other names, no types and comments.
  const Kernel hand = parse(R"(
    %a = param global f32[8]
    %b = param global f32[8]   # second input
    %c = param global_mut f32[8]
    %n = const i64 8
    %i = index group 0 %n
    %x = load %a[%i]
    %y = load %b[%i]
    %s = add %x, %y
    store %c[%i], %s)").value();

  for (const Kernel* k : {&built, &rewritten, &hand}) {
    EXPECT_EQ(print(*k), print(parsed));
    EXPECT_EQ(hash(*k), hash(parsed));
  }
}

TEST(Hash, EverySingleFieldChangeChangesIt) {
  const Kernel base = parse(samples::kEveryOpKind).value();
  std::set<std::uint64_t> seen = {hash(base)};
  int variants = 0;
  for (std::size_t i = 0; i < base.size(); ++i)
    for (int field = 0; field < 10; ++field) {
      Kernel k = base;
      Op& op = k.ops[i];
      switch (field) {
        case 0: op.kind = static_cast<OpKind>(static_cast<unsigned>(op.kind) ^ 1u); break;
        case 1: op.dtype = static_cast<DType>(static_cast<unsigned>(op.dtype) ^ 1u); break;
        case 2: op.lanes ^= 2; break;
        case 3: op.code ^= 1; break;
        case 4: op.attr ^= 1u << 20; break;
        case 5: op.src[0] ^= 1; break;
        case 6: op.src[1] ^= 1u << 31; break;
        case 7: op.src[2] ^= 4; break;
        case 8: op.reserved ^= 1; break;
        default: op.imm ^= 1ull << 63; break;
      }
      ++variants;
      EXPECT_TRUE(seen.insert(hash(k)).second) << "op " << i << " field " << field;
    }
  EXPECT_EQ(variants, 10 * static_cast<int>(base.size()));
}

TEST(Hash, OpOrderIsPartOfTheKernel) {
  Builder first;
  first.constant_i64(1);
  first.constant_i64(2);
  Builder second;
  second.constant_i64(2);
  second.constant_i64(1);
  EXPECT_NE(hash(first.finish()), hash(second.finish()));
}

TEST(Hash, HexIsSixteenLowercaseDigits) {
  const std::string hex = hash_hex(parse(samples::kEveryOpKind).value());
  ASSERT_EQ(hex.size(), 16u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(std::stoull(hex, nullptr, 16), hash(parse(samples::kEveryOpKind).value()));
}

// The ABI 1.1 math ops are told apart by the hash (their code is hashed).
TEST(Hash, EachMathOpHashesApart) {
  std::set<std::uint64_t> seen;
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Erf, UnaryOp::Sigmoid, UnaryOp::Rsqrt, UnaryOp::Log1p,
                     UnaryOp::Expm1}) {
    Builder b;
    const Value x = b.param(ParamKind::Global, DType::F32, 8);
    const Value y = b.param(ParamKind::GlobalMut, DType::F32, 8);
    const Value i = b.group_index(0, 8);
    b.store(y, i, b.unary(op, b.load(x, i)));
    seen.insert(hash(b.finish()));
  }
  EXPECT_EQ(seen.size(), 7u);
}
