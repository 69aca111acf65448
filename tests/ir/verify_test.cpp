// The verifier: one invalid kernel per rule, each error naming its op, its
// rule and showing the op; valid kernels (with the shapes that tempt false
// positives) pass; random garbage never crashes it.
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/op_rules.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <random>

using namespace kiln;
using namespace kiln::ir;

namespace {

Kernel kernel_of(std::string_view text) {
  auto parsed = parse(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message << "\n" << text;
  return parsed.ok() ? *parsed : Kernel{};
}

// The first violation is at op `op`, under `rule`, and its message has `fragment`.
void expect_violation(std::string_view text, std::int64_t op, std::string_view rule, std::string_view fragment = "") {
  SCOPED_TRACE(std::string(text));
  const Kernel kernel = kernel_of(text);
  const auto result = verify(kernel);
  ASSERT_FALSE(result.ok()) << "expected rule " << rule;
  const Error& error = result.error();
  EXPECT_EQ(error.code, ErrorCode::Verify);
  EXPECT_EQ(error.op, op) << error.to_string();
  EXPECT_NE(error.message.find("rule " + std::string(rule) + ":"), std::string::npos) << error.to_string();
  EXPECT_NE(error.message.find(fragment), std::string::npos) << error.to_string();
  // The op itself is shown, as print_op writes it.
  EXPECT_NE(error.message.find("`" + print_op(kernel, static_cast<ValueId>(op)) + "`"), std::string::npos)
      << error.to_string();
  EXPECT_NE(error.to_string().find("verify: op " + std::to_string(op) + ": rule"), std::string::npos);
}

void expect_valid(std::string_view text) {
  const Kernel kernel = kernel_of(text);
  const auto result = verify(kernel);
  EXPECT_TRUE(result.ok()) << result.error().to_string() << "\n" << text;
}

}  // namespace

TEST(Verify, ValidKernelsPass) {
  expect_valid(samples::kEveryOpKind);
  expect_valid(samples::kAdd8);
  for (std::string_view name : kernels::standard_kernel_names())
    for (const kernels::KernelSize size : {kernels::KernelSize{1, 1, 1}, kernels::KernelSize{7, 257, 3}}) {
      const auto made = kernels::make_standard_kernel(name, size).value();
      for (DType dtype : made.dtypes) {
        const auto k = kernels::make_standard_kernel(name, size, dtype).value();
        EXPECT_TRUE(verify(k.kernel).ok()) << name << ": " << verify(k.kernel).error().to_string();
      }
    }
}

TEST(Verify, RuleKind) { expect_violation("raw kind=33\n", 0, "kind", "unknown op kind 33"); }  // KILN_OP_KIND_COUNT

TEST(Verify, RuleUnusedFields) {
  expect_violation("%0 = const f32 1\nraw kind=12 dtype=3 lanes=1 code=1 attr=0 src=@0,@0,_ reserved=0 imm=0x0\n", 1,
                   "unused-fields", "src[1] must be empty");
  expect_violation("raw kind=1 dtype=3 lanes=1 code=0 attr=0 src=_,_,_ reserved=7 imm=0x0\n", 0, "unused-fields",
                   "reserved must be 0");
  expect_violation("%0 = const f32 1\nraw kind=12 dtype=3 lanes=1 code=1 attr=0 src=@0,_,_ reserved=0 imm=0x5\n", 1,
                   "unused-fields", "unary has no imm");
  expect_violation("%0 = const bool true\nraw kind=9 dtype=13 lanes=1 code=0 attr=0 src=@0,_,_ reserved=0 imm=0x0\n"
                   "endif\n", 1, "unused-fields", "if has no type");
}

TEST(Verify, RuleDtypeAndLanes) {
  expect_violation("raw kind=1 dtype=20 lanes=1 code=0 attr=0 src=_,_,_ reserved=0 imm=0x0\n", 0, "dtype",
                   "unknown dtype 20");
  expect_violation("%0 = const f32 1\n%1 = broadcast f32x17 %0\n", 1, "lanes", "lanes must be 1..16, got 17");
}

TEST(Verify, RuleTopLevel) {
  expect_violation("%0 = const i64 2\n%1 = loop %0\n%2 = param 0 global f32[4]\nendloop %1\n", 2, "top-level",
                   "param must appear outside every loop and if");
  expect_violation("%0 = const bool true\nif %0\n%2 = storage register f32[1]\nendif\n", 2, "top-level");
}

TEST(Verify, RuleOperandMissingOrderValueMemory) {
  expect_violation("raw kind=12 dtype=3 lanes=1 code=1 attr=0 src=_,_,_ reserved=0 imm=0x0\n", 0, "operand-missing",
                   "operand 0 of unary is missing");
  expect_violation("%0 = const f32 1\nraw kind=13 dtype=3 lanes=1 code=1 attr=0 src=@0,@2,_ reserved=0 imm=0x0\n"
                   "%2 = const f32 2\n", 1, "operand-order", "names op 2, which does not come before it");
  expect_violation("%0 = param 0 global_mut f32[1]\n%1 = const i64 0\n%2 = const f32 1\nstore f32 %0[%1], %2\n"
                   "raw kind=12 dtype=3 lanes=1 code=1 attr=0 src=@3,_,_ reserved=0 imm=0x0\n", 4, "operand-value",
                   "names op 3 (store), which has no value");
  expect_violation("%0 = const i64 0\n%1 = load i64 %0[%0]\n", 1, "operand-memory",
                   "the memory operand %0 is not a buffer param or storage");
  expect_violation("%0 = param 0 global f32[4]\n%1 = neg f32 %0\n", 1, "operand-memory", "%0 is memory, not a value");
  expect_violation("%0 = param 0 var i64\n%1 = load i64 %0[%0]\n", 1, "operand-memory");
}

TEST(Verify, RuleScope) {
  expect_violation(R"(%0 = const i64 2
%1 = loop %0
  %2 = add i64 %1, %1
endloop %1
%4 = add i64 %2, %0
)", 4, "scope", "%2 is defined inside loop %1 and used outside it");
  expect_violation(R"(%0 = const i64 2
%1 = loop %0
endloop %1
%3 = add i64 %1, %0
)", 3, "scope", "%1 is defined inside loop %1");
}

TEST(Verify, RuleNesting) {
  expect_violation(R"(%0 = const i64 2
%1 = const bool true
%2 = loop %0
  if %1
  endloop %2
endloop %2
)", 4, "nesting", "endloop cannot close the if at op 3");
  expect_violation(R"(%0 = const i64 2
%1 = loop %0
  %2 = loop %0
  endloop %1
endloop %2
)", 3, "nesting", "endloop names op 1 but the innermost open loop is op 2");
  expect_violation("%0 = const i64 2\n%1 = loop %0\n", 1, "nesting", "loop is never closed");
  expect_violation("%0 = const i64 2\nraw kind=8 src=@0,_,_\n", 1, "nesting", "closes nothing");
}

TEST(Verify, RuleParamSlots) {
  expect_violation("%0 = param 0 global f32[4]\n%1 = param 0 global f32[4]\n", 1, "param-slots",
                   "slot 0 is taken by op 0");
  expect_violation("%0 = param 0 global f32[4]\n%1 = param 2 global f32[4]\n", 1, "param-slots",
                   "slot 2 but no param has slot 1");
}

TEST(Verify, RuleParamKindAndType) {
  expect_violation("raw kind=2 dtype=3 lanes=1 code=7 attr=0 src=_,_,_ reserved=0 imm=0x0\n", 0, "param-kind",
                   "unknown param kind 7");
  expect_violation("raw kind=2 dtype=11 lanes=1 code=3 attr=0 src=_,_,_ reserved=0 imm=0x4\n", 0, "param-kind",
                   "a var param has no element count");
  expect_violation("raw kind=2 dtype=3 lanes=4 code=1 attr=0 src=_,_,_ reserved=0 imm=0x4\n", 0, "param-type");
}

// A byte count that would wrap 64 bits (4611686018427387904 f32 is 2^64
// bytes) is refused, with the limit named; the largest allowed one passes.
TEST(Verify, RuleMemorySizeFitsTheLimit) {
  expect_violation("%0 = param 0 global_mut f32[4611686018427387904]\n", 0, "param-size",
                   "4611686018427387904 f32 elements exceed the 281474976710656-byte limit of one memory");
  expect_violation("%0 = param 0 global f64[35184372088833]\n", 0, "param-size");
  expect_violation("%0 = storage local i32[70368744177665]\n", 0, "storage-size");
  expect_valid("%0 = param 0 global f64[35184372088832]\n");
}

// 20000 nested loops took 11.6 s and 2.4 GB in `kiln ir` (the printer's
// indentation is quadratic in depth): nesting past kMaxBlockDepth is refused
// at the block that crosses it, and printing stays linear.
TEST(Verify, RuleNestingDepth) {
  // Built with the builder: the text form refuses this nesting itself
  // (kMaxTextNesting), the verifier is what every other way in meets.
  auto nest = [](std::uint32_t depth) {
    Builder b;
    const Value out = b.param(ParamKind::GlobalMut, DType::F32, 1);
    const Value one = b.constant_i64(1);
    std::vector<Value> loops;
    for (std::uint32_t i = 0; i < depth; ++i) loops.push_back(b.loop(one));
    b.store(out, b.constant_i64(0), b.constant(DType::F32, 1.0f));
    for (std::uint32_t i = depth; i-- > 0;) b.end_loop(loops[i]);
    return b.finish();
  };
  EXPECT_TRUE(verify(nest(kMaxBlockDepth)).ok());
  const auto result = verify(nest(kMaxBlockDepth + 1));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, 2 + kMaxBlockDepth) << result.error().to_string();
  EXPECT_NE(result.error().message.find("rule nesting-depth:"), std::string::npos) << result.error().to_string();
  EXPECT_NE(result.error().message.find("more than 256 nested loops and ifs"), std::string::npos);
  const Kernel deep = nest(20000);
  EXPECT_EQ(verify_all(deep).size(), 1u);
  EXPECT_LT(print(deep).size(), 40005u * 160);  // 40005 lines of at most 64 indents: linear (was 800 MB)
}

TEST(Verify, RuleConst) {
  expect_violation("raw kind=1 dtype=9 lanes=1 code=0 attr=0 src=_,_,_ reserved=0 imm=0x1ff\n", 0, "const-bits",
                   "bits beyond the i8 value");
  expect_violation("raw kind=1 dtype=13 lanes=1 code=0 attr=0 src=_,_,_ reserved=0 imm=0x2\n", 0, "const-bits",
                   "bool is 0 or 1");
  expect_violation("raw kind=1 dtype=3 lanes=2 code=0 attr=0 src=_,_,_ reserved=0 imm=0x0\n", 0, "const-type");
}

TEST(Verify, RuleStorage) {
  expect_violation("raw kind=3 dtype=3 lanes=1 code=1 attr=0 src=_,_,_ reserved=0 imm=0x4\n", 0, "storage-scope",
                   "must be local or register, got group");
  expect_violation("%0 = storage register f32[0]\n", 0, "storage-size");
  expect_violation("raw kind=3 dtype=3 lanes=2 code=3 attr=0 src=_,_,_ reserved=0 imm=0x4\n", 0, "storage-type");
}

TEST(Verify, RuleLoadStoreTypes) {
  expect_violation("%0 = param 0 global f32[4]\n%1 = const f32 0\n%2 = load f32 %0[%1]\n", 2, "index-type",
                   "the element index must be i64, got f32");
  expect_violation("%0 = param 0 global f32[4]\n%1 = const i64 0\n%2 = load f64 %0[%1]\n", 2, "load-type",
                   "load of f64 from f32 memory");
  expect_violation("%0 = param 0 global_mut f32[4]\n%1 = const i64 0\n%2 = const f64 1\nstore f32 %0[%1], %2\n", 3,
                   "store-type", "the stored value is f64, the store says f32");
  expect_violation("%0 = param 0 global_mut f32[4]\n%1 = const i64 0\n%2 = const f64 1\nstore %0[%1], %2\n", 3,
                   "store-type", "store of f64 from f32 memory");
}

TEST(Verify, RuleStoreTarget) {
  expect_violation("%0 = param 0 global f32[4]\n%1 = const i64 0\n%2 = const f32 1\nstore f32 %0[%1], %2\n", 3,
                   "store-target", "%0 is a read-only global param");
}

TEST(Verify, RuleAlignment) {
  expect_violation("%0 = param 0 global f32[16]\n%1 = const i64 2\n%2 = load f32x4 %0[%1]\n", 2, "alignment",
                   "a 4-lane access needs an index that is a multiple of 4; this one is always 2 more than one");
  // i * 8 + 5 with i a group index: misaligned for every i.
  expect_violation(R"(%0 = param 0 global_mut f32[64]
%1 = const i64 4
%2 = index group 0 %1
%3 = const i64 8
%4 = mul i64 %2, %3
%5 = const i64 5
%6 = add i64 %4, %5
%7 = const f32 1
%8 = broadcast f32x2 %7
store f32x2 %0[%6], %8
)", 9, "alignment", "always 1 more");
  // i * 3 + 4: alignment unknown, so no error.
  expect_valid(R"(%0 = param 0 global f32[64]
%1 = const i64 4
%2 = index group 0 %1
%3 = const i64 3
%4 = mul i64 %2, %3
%5 = const i64 4
%6 = add i64 %4, %5
%7 = load f32x4 %0[%6]
)");
}

TEST(Verify, RuleIndexRange) {
  // A register of 4 indexed by a loop counter up to 4.
  expect_violation(R"(%0 = storage register f32[4]
%1 = const i64 5
%2 = const f32 0
%3 = loop %1
  store f32 %0[%3], %2
endloop %3
)", 4, "index-range", "the index reaches [0, 4] but the memory has 4 elements");
  // One thread per element of 9 on a buffer of 8.
  expect_violation(R"(%0 = param 0 global f32[8]
%1 = const i64 9
%2 = index group 0 %1
%3 = load f32 %0[%2]
)", 3, "index-range", "[0, 8] but the memory has 8 elements");
  expect_violation("%0 = param 0 global f32[8]\n%1 = const i64 -1\n%2 = load f32 %0[%1]\n", 2, "index-range",
                   "[-1, -1]");
  // A vector access reaching past the end: [4, 8) with lanes 4 on 6 elements.
  expect_violation("%0 = storage local f32[6]\n%1 = const i64 4\n%2 = load f32x4 %0[%1]\n", 2, "index-range",
                   "[4, 7]");
}

TEST(Verify, IndexRangeIsNotClaimedWhereItIsNotProvable) {
  // Guarded by an if: a padded grid.
  expect_valid(R"(%0 = param 0 global f32[8]
%1 = const i64 16
%2 = index group 0 %1
%3 = const i64 8
%4 = cmplt bool %2, %3
if %4
  %6 = load f32 %0[%2]
endif
)");
  // Inside a loop whose trip count is not a constant (it may be 0).
  expect_valid(R"(%0 = storage register f32[1]
%1 = param 0 var i64
%2 = const i64 5
%3 = const f32 0
%4 = loop %1
  store f32 %0[%2], %3
endloop %4
)");
  // i - i reaches only 0, but not as an affine form of independent atoms.
  expect_valid(R"(%0 = param 0 global f32[1]
%1 = const i64 9
%2 = index group 0 %1
%3 = sub i64 %2, %2
%4 = load f32 %0[%3]
)");
}

TEST(Verify, RuleIndex) {
  expect_violation("%0 = const i64 4\nraw kind=6 dtype=12 lanes=1 code=3 attr=0 src=%0,_,_ reserved=0 imm=0x0\n", 1,
                   "index-scope", "group or local, got register");
  expect_violation("%0 = const i64 4\n%1 = index group 3 %0\n", 1, "index-axis", "axis 3 is not 0, 1 or 2");
  expect_violation("%0 = const i32 4\n%1 = index group 0 %0\n", 1, "index-length", "the length must be i64, got i32");
  expect_violation("%0 = const i64 4\n%1 = index local 0 %0\n%2 = index local 0 %0\n", 2, "index-duplicate",
                   "op 1 already is the local index of axis 0");
  expect_violation("raw kind=6 dtype=3 lanes=1 code=1 attr=0 src=@0,_,_ reserved=0 imm=0x0\n", 0, "operand-order");
}

TEST(Verify, RuleLocalLength) {
  expect_violation("%0 = const i32 4\n%1 = cast i64 %0\n%2 = index local 0 %1\n", 2, "local-length",
                   "a local length must be a const");
  expect_violation("%0 = const i64 0\n%1 = index local 1 %0\n", 1, "local-length", "got 0");
}

TEST(Verify, RuleGroupLength) {
  expect_violation(R"(%0 = param 0 global i64[1]
%1 = const i64 0
%2 = load i64 %0[%1]
%3 = index group 0 %2
)", 3, "group-length", "op 2 is a load");
  expect_violation("%0 = const i64 -3\n%1 = index group 0 %0\n", 1, "group-length", "the group length is -3");
  expect_violation(R"(%0 = param 0 var f32
%1 = cast i64 %0
%2 = index group 0 %1
)", 2, "group-length", "op 0 is f32, not an integer scalar");
}

TEST(Verify, GroupLengthsTheVerifierAcceptsAreTheOnesTheHostCanEvaluate) {
  // Each kernel: (n, m) as var params, a group length expression; the
  // verifier and kiln::sdk::compute_grid must agree on every one.
  const char* expressions[] = {
      "%4 = add i64 %0, %1",       "%4 = div i64 %0, %1",     "%4 = shl i64 %0, %1",  "%4 = bitxor i64 %0, %1",
      "%4 = max i64 %0, %1",       "%4 = neg i64 %0",          "%4 = abs i64 %0",      "%4 = cast i64 %2",
      "%4 = mul i64 %0, %3",       "%4 = pow f64 %5, %5",      "%4 = exp f64 %5",      "%4 = cmplt bool %0, %1",
      "%4 = cast i64 %5",          "%4 = sqrt f64 %5",         "%4 = mod i64 %0, %1",  "%4 = bitnot i64 %0",
  };
  for (const char* expression : expressions) {
    std::string text = "%0 = param 0 var i64\n%1 = param 1 var i64\n%2 = param 2 var i32\n%3 = const i64 3\n"
                       "%5 = const f64 2\n" + std::string(expression) + "\n%6 = abs i64 %4\n%7 = const i64 1\n"
                       "%8 = max i64 %6, %7\n%9 = index group 0 %8\n";
    // Expressions whose result is not i64 get a cast so only host-evaluability differs.
    if (std::string(expression).find(" i64 ") == std::string::npos) {
      text = "%0 = param 0 var i64\n%1 = param 1 var i64\n%2 = param 2 var i32\n%3 = const i64 3\n%5 = const f64 2\n" +
             std::string(expression) + "\n%x = cast i64 %4\n%9 = index group 0 %x\n";
    }
    SCOPED_TRACE(text);
    const Kernel kernel = kernel_of(text);
    const bool verified = verify(kernel).ok();
    const std::vector<kiln_op> wire = kernel.to_wire();
    std::vector<kiln_arg> args(3);
    for (auto& arg : args) {
      arg.kind = KILN_ARG_SCALAR;
      arg.scalar_bits = 5;
    }
    bool evaluated = true;
    try {
      sdk::compute_grid(wire, args);
    } catch (const sdk::PluginError&) {
      evaluated = false;
    }
    EXPECT_EQ(verified, evaluated) << (verified ? "" : verify(kernel).error().to_string());
  }
}

TEST(Verify, RuleLoopCountAndIfCondition) {
  expect_violation("%0 = const f32 2\n%1 = loop %0\nendloop %1\n", 1, "loop-count", "the trip count must be i64, got f32");
  expect_violation("%0 = const i64 1\nif %0\nendif\n", 1, "if-condition", "must be a bool scalar, got i64");
}

TEST(Verify, RuleBarrier) {
  expect_violation("%0 = const i64 4\n%1 = index local 0 %0\nraw kind=11 code=1\n", 2, "barrier-scope");
  expect_violation("barrier\n", 0, "barrier-local", "the kernel has no local index");
  expect_violation(R"(%0 = const i64 4
%1 = index local 0 %0
%2 = const i64 2
%3 = cmplt bool %1, %2
if %3
  barrier
endif
)", 5, "barrier-uniform", "inside the if at op 4, whose condition may differ between the threads of a group");
  // Thread-dependence through memory: a trip count loaded from local
  // storage that each thread wrote at its own index.
  expect_violation(R"(%0 = const i64 4
%1 = index local 0 %0
%2 = storage local i64[4]
store i64 %2[%1], %1
barrier
%5 = const i64 0
%6 = load i64 %2[%5]
%7 = loop %6
  barrier
endloop %7
)", 8, "barrier-uniform", "inside the loop at op 7, whose trip count may differ");
}

TEST(Verify, BarriersUnderUniformControlFlowPass) {
  // A tree reduction: the loop and the if around the barriers depend only on
  // constants; the if *inside* depends on the local index.
  expect_valid(samples::kTreeReduce);
}

TEST(Verify, RuleUnary) {
  expect_violation("%0 = const f32 1\nraw kind=12 dtype=3 lanes=1 code=20 src=@0,_,_\n", 1, "unary-op", "unknown unary op 20");
  expect_violation("%0 = const i32 1\n%1 = exp i32 %0\n", 1, "unary-type", "exp is not defined on i32 (integers allow no pow");
  expect_violation("%0 = const bool true\n%1 = neg bool %0\n", 1, "unary-type", "neg is not defined on bool (bool allows logic");
  expect_violation("%0 = const f32 1\n%1 = bitnot f32 %0\n", 1, "unary-type", "bitnot is not defined on f32 (floats allow every op but the bitwise ones");
  expect_violation("%0 = const f32 1\n%1 = neg f64 %0\n", 1, "unary-type", "neg of f32 gives f32, not f64");
}

TEST(Verify, RuleBinary) {
  expect_violation("%0 = const f32 1\nraw kind=13 dtype=3 lanes=1 code=20 src=@0,@0,_\n", 1, "binary-op");
  expect_violation("%0 = const f32 1\n%1 = const f64 1\n%2 = add f32 %0, %1\n", 2, "binary-type",
                   "operands of add must have one type, got f32 and f64");
  expect_violation("%0 = const i32 1\n%1 = pow i32 %0, %0\n", 1, "binary-type", "pow is not defined on i32");
  expect_violation("%0 = const f32 1\n%1 = shl f32 %0, %0\n", 1, "binary-type", "shl is not defined on f32");
  expect_violation("%0 = const bool true\n%1 = add bool %0, %0\n", 1, "binary-type", "add is not defined on bool");
  expect_violation("%0 = const f32 1\n%1 = bitand f32 %0, %0\n", 1, "binary-type", "bitand is not defined on f32");
  expect_violation("%0 = const f32 1\n%1 = cmplt f32 %0, %0\n", 1, "binary-type", "cmplt of f32 gives bool, not f32");
}

TEST(Verify, AcceptsExactlyTheOpsTheSdkRulesAllowOnEachDtype) {
  // The interpreter and plugins ask kiln/sdk/op_rules.hpp; so must the verifier.
  auto accepted = [](DType dtype, auto&& emit) {
    Builder b;
    emit(b, b.param(ParamKind::Variable, dtype));
    return verify(b.finish()).ok();
  };
  for (unsigned d = 1; d < KILN_DTYPE_COUNT; ++d) {
    const auto dtype = static_cast<DType>(d);
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u)
      EXPECT_EQ(accepted(dtype, [&](Builder& b, Value x) { b.unary(static_cast<UnaryOp>(u), x); }),
                sdk::unary_allowed(d, u)) << sdk::unary_name(u);
    for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op)
      EXPECT_EQ(accepted(dtype, [&](Builder& b, Value x) { b.binary(static_cast<BinaryOp>(op), x, x); }),
                sdk::binary_allowed(d, op)) << sdk::binary_name(op);
    EXPECT_EQ(accepted(dtype, [](Builder& b, Value x) { b.mad(x, x, x); }), sdk::mad_allowed(d)) << "mad";
  }
}

TEST(Verify, RuleCastMadSelect) {
  expect_violation("%0 = const f32 1\n%1 = cast f16x4 %0\n", 1, "cast-type", "cast keeps the lanes of its operand (f32)");
  expect_violation("%0 = const f32 1\n%1 = const f64 1\n%2 = mad f32 %0, %1, %0\n", 2, "mad-type",
                   "mad operands must all be f32, got f64");
  expect_violation("%0 = const bool true\n%1 = mad bool %0, %0, %0\n", 1, "mad-type", "mad is not defined on bool");
  expect_violation("%0 = const i32 1\n%1 = select i32 %0, %0, %0\n", 1, "select-type",
                   "the condition must be bool with 1 or 1 lanes, got i32");
  expect_violation("%0 = const bool true\n%1 = const f32 1\n%2 = const i32 1\n%3 = select f32 %0, %1, %2\n", 3,
                   "select-type", "both choices must be f32, got f32 and i32");
}

TEST(Verify, RuleVectors) {
  expect_violation("%0 = const f32 1\n%1 = broadcast f32x4 %0\n%2 = broadcast f32x8 %1\n", 2, "vector-type",
                   "needs a f32 scalar, got f32x4");
  expect_violation("%0 = const f32 1\n%1 = broadcast f32x4 %0\n%2 = const i32 1\n%3 = insert f32x4 %1[0], %2\n", 3,
                   "vector-type", "the inserted value must be a f32 scalar, got i32");
  expect_violation("%0 = const f32 1\n%1 = broadcast f32x4 %0\n%2 = extract f32x2 %1[0]\n", 2, "vector-type",
                   "gives a f32 scalar, not f32x2");
  expect_violation("%0 = const f32 1\n%1 = broadcast f32x4 %0\n%2 = extract f32 %1[4]\n", 2, "vector-lane",
                   "lane 4 of a 4-lane vector");
}

TEST(Verify, VerifyAllListsOneErrorPerOpInOrder) {
  const Kernel k = kernel_of("%0 = const f32 1\n%1 = exp i32 %0\n%2 = loop %0\n%3 = bitnot f32 %0\n");
  const auto errors = verify_all(k);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].op, 1);
  EXPECT_EQ(errors[1].op, 2);  // loop-count (the never-closed error on the same op is not repeated)
  EXPECT_EQ(errors[2].op, 3);
  EXPECT_NE(errors[1].message.find("rule loop-count"), std::string::npos);
}

TEST(Verify, GarbageKernelsNeverCrashIt) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    Kernel k;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      Op op;
      op.kind = static_cast<OpKind>(rng() % 21);
      op.dtype = static_cast<DType>(rng() % 15);
      op.lanes = static_cast<std::uint8_t>(rng() % 18);
      op.code = static_cast<std::uint8_t>(rng() % 21);
      op.attr = static_cast<std::uint32_t>(rng() % 5);
      for (auto& s : op.src) s = rng() % 4 == 0 ? kNoValue : static_cast<ValueId>(rng() % (n + 2));
      op.imm = rng() % 3 == 0 ? rng() : rng() % 20;
      k.ops.push_back(op);
    }
    const auto errors = verify_all(k);
    for (const Error& e : errors) EXPECT_NE(e.message.find("rule "), std::string::npos);
  }
}

// The ABI 1.1 math ops are float-only; the error names the op and dtype.
TEST(Verify, MathOpsAreFloatOnlyAndTheErrorNamesThem) {
  for (std::string_view op : {"tanh", "erf", "sigmoid", "rsqrt", "log1p", "expm1"}) {
    for (std::string_view dt : {"f32", "f16", "bf16", "f64"})
      EXPECT_TRUE(verify(kernel_of("%0 = const " + std::string(dt) + " 1\n%1 = " + std::string(op) + " %0\n")).ok()) << op;
    expect_violation("%0 = const i32 1\n%1 = " + std::string(op) + " i32 %0\n", 1, "unary-type",
                     std::string(op) + " is not defined on i32");
    expect_violation("%0 = const bool true\n%1 = " + std::string(op) + " bool %0\n", 1, "unary-type",
                     std::string(op) + " is not defined on bool");
  }
}
