// Every validation rule and every runtime fault: each gets its own error,
// naming the op (failed_op) and what is wrong; nothing crashes.
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "kiln/sdk/grid.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr std::uint32_t kNo = KILN_NO_OPERAND;

// A kernel whose op `bad` is then edited by `edit`.
std::vector<kiln_op> edited(std::vector<kiln_op> ops, std::size_t bad, const std::function<void(kiln_op&)>& edit) {
  edit(ops[bad]);
  return ops;
}

}  // namespace

// ------------------------------------------------------------ validation --

TEST(InterpreterValidation, OpKindsDtypesAndLanes) {
  const auto add = wire_add_f32(8);  // ops: a b c len i x y s store
  expect_invalid(edited(add, 5, [](kiln_op& o) { o.kind = KILN_OP_KIND_COUNT; }), "unknown op kind 33", 5);
  expect_invalid(edited(add, 5, [](kiln_op& o) { o.kind = 0; }), "unknown op kind 0", 5);
  expect_invalid(edited(add, 3, [](kiln_op& o) { o.dtype = 0; }), "invalid dtype 0", 3);
  expect_invalid(edited(add, 3, [](kiln_op& o) { o.dtype = 14; }), "invalid dtype 14", 3);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.lanes = 17; }), "lanes 17 not in 1..16", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.lanes = 0; }), "lanes 0 not in 1..16", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.code = 0; }), "binary invalid is not defined on f32", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.code = 99; }), "binary unknown is not defined on f32", 7);
  expect_invalid(edited(add, 3, [](kiln_op& o) { o.imm = 1ull << 63; o.dtype = KILN_DTYPE_I32; }),
                 "is not a i32 value", 3);
}

TEST(InterpreterValidation, Operands) {
  const auto add = wire_add_f32(8);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.src[1] = kNo; }), "operand 1 is missing", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.src[1] = 7; }), "operand 1 (op 7) does not precede the op", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.src[1] = 1000; }), "does not precede", 7);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.src[1] = 1; }), "operand 1 (op 1, param) is not a value", 7);
  expect_invalid(edited(add, 5, [](kiln_op& o) { o.src[0] = 3; }), "operand 0 (op 3, const) is not a buffer or storage", 5);
  expect_invalid(edited(add, 5, [](kiln_op& o) { o.src[1] = 0; }), "is not a value", 5);
  expect_invalid(edited(add, 7, [](kiln_op& o) { o.src[1] = 4; }), "operand 1 (op 4) is i64, expected f32", 7);
  expect_invalid(edited(add, 5, [](kiln_op& o) { o.dtype = KILN_DTYPE_F64; }), "dtype f64 differs from the memory's f32", 5);
  expect_invalid(edited(add, 8, [](kiln_op& o) { o.src[0] = 0; }), "stores to the read-only param at op 0", 8);
}

TEST(InterpreterValidation, ValuesDefinedInAnEndedBlockAreNotVisible) {
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, 1);
  const Id k = w.loop(w.const_i64(3));
  const Id inner = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, k, k);
  w.end_loop(k);
  const Id use = w.store(KILN_DTYPE_I64, po, w.const_i64(0), inner);
  expect_invalid(w.ops, "operand 2 (op " + std::to_string(inner) + ") is defined inside the loop at op " +
                            std::to_string(k) + ", which has ended", use);
  WireBuilder c;  // the loop counter itself
  const Id po2 = c.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, 1);
  const Id k2 = c.loop(c.const_i64(3));
  c.end_loop(k2);
  const Id use2 = c.store(KILN_DTYPE_I64, po2, c.const_i64(0), k2);
  expect_invalid(c.ops, "which has ended", use2);
}

TEST(InterpreterValidation, BalancedLoopsAndIfs) {
  {
    WireBuilder w;
    const Id e = w.end_loop(0);
    expect_invalid(w.ops, "no open loop to close", e);
  }
  {
    WireBuilder w;
    const Id k = w.loop(w.const_i64(2));
    const Id e = w.end_if(k);
    expect_invalid(w.ops, "the innermost open block is the loop at op " + std::to_string(k), e);
  }
  {
    WireBuilder w;
    const Id k = w.loop(w.const_i64(2));
    w.loop(w.const_i64(2));
    const Id e = w.end_loop(k);
    expect_invalid(w.ops, "closes op " + std::to_string(k) + ", but the innermost open block is op 3", e);
  }
  {
    WireBuilder w;
    const Id k = w.loop(w.const_i64(2));
    expect_invalid(w.ops, "kernel ends inside the loop at op " + std::to_string(k), -1);
  }
  {
    WireBuilder w;
    const Id i = w.if_(w.const_i64(1));
    expect_invalid(w.ops, "operand 0 (op 0) is i64, expected bool", i);
  }
  {
    WireBuilder w;
    const Id k = w.op(KILN_OP_LOOP, KILN_DTYPE_F32, 0, w.const_i64(2));
    expect_invalid(w.ops, "dtype must be i64, not f32", k);
  }
}

TEST(InterpreterValidation, ParamsAndStorage) {
  {
    WireBuilder w;
    w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
    const Id p = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
    expect_invalid(w.ops, "slot 0 is already bound by op 0", p);
  }
  {
    WireBuilder w;
    w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
    w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 2);
    w.const_i64(0);
    expect_invalid(w.ops, "kernel has 2 params but none binds slot 1", -1);
  }
  {
    WireBuilder w;
    const Id p = w.param(4, KILN_DTYPE_F32, 0);
    expect_invalid(w.ops, "invalid param kind 4", p);
  }
  {
    WireBuilder w;
    const Id k = w.loop(w.const_i64(2));
    const Id p = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
    w.end_loop(k);
    expect_invalid(w.ops, "a PARAM must be outside every LOOP and IF", p);
  }
  {
    WireBuilder w;
    const Id s = w.storage(KILN_SCOPE_GROUP, KILN_DTYPE_F32, 4);
    expect_invalid(w.ops, "scope must be local or register, not group", s);
  }
  {
    WireBuilder w;
    const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 0);
    expect_invalid(w.ops, "element count is 0", s);
  }
  {
    WireBuilder w;
    const Id s = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F64, 1ull << 60);
    expect_invalid(w.ops, "LOCAL storage exceeds the interpreter's limit", s);
  }
}

TEST(InterpreterValidation, Indices) {
  {
    WireBuilder w;
    const Id i = w.group_index(3, w.const_i64(4));
    expect_invalid(w.ops, "axis 3 is not 0, 1 or 2", i);
  }
  {
    WireBuilder w;
    const Id first = w.local_index(1, w.const_i64(4));
    const Id second = w.local_index(1, w.const_i64(4));
    expect_invalid(w.ops, "a second local index on axis 1 (the first is op " + std::to_string(first) + ")", second);
  }
  {
    WireBuilder w;
    const Id v = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 0);
    const Id i = w.local_index(0, v);
    expect_invalid(w.ops, "a LOCAL length must be a CONST", i);
  }
  {
    WireBuilder w;
    const Id i = w.local_index(0, w.const_i64(0));
    expect_invalid(w.ops, "LOCAL length 0 not in 1..", i);
  }
  {
    WireBuilder w;
    const Id i = w.local_index(0, w.const_i64(1 << 20));
    expect_invalid(w.ops, "LOCAL length 1048576 not in 1..65536", i);
  }
  {
    WireBuilder w;
    const Id len = w.cast(KILN_DTYPE_I64, w.const_f32(4.0f));
    const Id i = w.group_index(0, len);
    expect_invalid(w.ops, "GROUP length is not host-evaluable: op 0 is not an integer scalar", i);
  }
  {
    WireBuilder w;
    const Id buf = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I64, 0, 1);
    const Id i = w.group_index(0, w.load(KILN_DTYPE_I64, buf, w.const_i64(0)));
    expect_invalid(w.ops, "GROUP length is not host-evaluable: op 2 is a load", i);
  }
  {
    WireBuilder w;
    const Id k = w.loop(w.const_i64(2));
    const Id i = w.group_index(0, w.const_i64(2));
    w.end_loop(k);
    expect_invalid(w.ops, "an INDEX must be outside every LOOP and IF", i);
  }
  {
    WireBuilder w;
    const Id i = w.op(KILN_OP_INDEX, KILN_DTYPE_I64, KILN_SCOPE_REGISTER, w.const_i64(2));
    expect_invalid(w.ops, "scope must be group or local, not register", i);
  }
}

TEST(InterpreterValidation, DtypeRulesOfOps) {
  auto one_input = [](unsigned dt, const std::function<Id(WireBuilder&, Id)>& f) {
    WireBuilder w;
    const Id x = w.const_bits(static_cast<std::uint8_t>(dt), 1);
    f(w, x);
    return w.ops;
  };
  expect_invalid(one_input(KILN_DTYPE_I32, [](WireBuilder& w, Id x) { return w.unary(KILN_UNARY_EXP, KILN_DTYPE_I32, x); }),
                 "unary exp is not defined on i32", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) { return w.unary(KILN_UNARY_BIT_NOT, KILN_DTYPE_F32, x); }),
                 "unary bitnot is not defined on f32", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) { return w.binary(KILN_BINARY_SHL, KILN_DTYPE_F32, x, x); }),
                 "binary shl is not defined on f32", 1);
  expect_invalid(one_input(KILN_DTYPE_BOOL, [](WireBuilder& w, Id x) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_BOOL, x, x); }),
                 "binary add is not defined on bool", 1);
  expect_invalid(one_input(KILN_DTYPE_I64, [](WireBuilder& w, Id x) { return w.binary(KILN_BINARY_POW, KILN_DTYPE_I64, x, x); }),
                 "binary pow is not defined on i64", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) { return w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_F32, x, x); }),
                 "result dtype f32, expected bool", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_BOOL, x, x); }),
                 "result dtype bool, expected f32", 1);
  expect_invalid(one_input(KILN_DTYPE_BOOL, [](WireBuilder& w, Id x) { return w.mad(KILN_DTYPE_BOOL, x, x, x); }),
                 "mad is not defined on bool", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) { return w.unary(KILN_UNARY_NEG, KILN_DTYPE_F32, x, 4); }),
                 "operand 0 (op 0) is f32, expected f32x4", 1);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) {
                   const Id v = w.broadcast(KILN_DTYPE_F32, x, 4);
                   return w.insert(KILN_DTYPE_F32, v, x, 4, 4);
                 }),
                 "lane 4 is not below 4", 2);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) {
                   const Id v = w.broadcast(KILN_DTYPE_F32, x, 2);
                   return w.extract(KILN_DTYPE_F32, v, 2);
                 }),
                 "lane 2 is not below 2", 2);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id x) {
                   const Id v = w.broadcast(KILN_DTYPE_F32, x, 4);
                   const Id c = w.broadcast(KILN_DTYPE_BOOL, w.const_bits(KILN_DTYPE_BOOL, 1), 2);
                   return w.select(KILN_DTYPE_F32, c, v, v, 4);
                 }),
                 "condition has 2 lanes; expected 1 or 4", 4);
  expect_invalid(one_input(KILN_DTYPE_F32, [](WireBuilder& w, Id) { return w.op(KILN_OP_BARRIER, 0, KILN_SCOPE_GROUP); }),
                 "scope must be local, not group", 1);
}

// --------------------------------------------------------------- launches --

TEST(InterpreterLaunch, BadArguments) {
  const auto add = wire_add_f32(8);
  std::vector<float> a(8), b(8), c(8), short_buffer(7);
  auto run = [&](std::vector<kiln_arg> args) { sdk::InterpretedProgram(add).run(args); };
  expect_error([&] { run({arg_of(a), arg_of(b)}); }, KILN_STATUS_INVALID_ARGUMENT,
               "kernel has 3 params but 2 arguments were given");
  expect_error([&] { run({arg_of(a), arg_of(b), i64_arg(1)}); }, KILN_STATUS_INVALID_ARGUMENT,
               "argument 2 (param op 2): a GLOBAL param needs a BUFFER argument", 2);
  expect_error([&] { run({arg_of(a), arg_of(short_buffer), arg_of(c)}); }, KILN_STATUS_INVALID_ARGUMENT,
               "argument 1 (param op 1): buffer of 28 bytes is shorter than the 8 f32 elements the kernel declares", 1);
  expect_error([&] { run({arg_of(a), sdk::host_buffer_arg(nullptr, 32), arg_of(c)}); }, KILN_STATUS_INVALID_ARGUMENT,
               "host_pointer is NULL", 1);

  WireBuilder w;
  const Id n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I32, 0);
  w.group_index(0, w.cast(KILN_DTYPE_I64, n));
  sdk::InterpretedProgram program(w.ops);
  std::vector<kiln_arg> args = {arg_of(a)};
  expect_error([&] { program.run(args); }, KILN_STATUS_INVALID_ARGUMENT, "a VARIABLE param needs a SCALAR argument", 0);
  args = {i64_arg(4)};
  expect_error([&] { program.run(args); }, KILN_STATUS_INVALID_ARGUMENT,
               "scalar dtype i64 differs from the param's i32", 0);
  args = {sdk::scalar_arg(KILN_DTYPE_I32, 1ull << 40)};
  expect_error([&] { program.run(args); }, KILN_STATUS_INVALID_ARGUMENT, "scalar bits do not hold a i32", 0);
  args = {sdk::scalar_arg(KILN_DTYPE_I32, 0)};
  expect_error([&] { program.run(args); }, KILN_STATUS_INVALID_ARGUMENT, "index length evaluates to 0", 2);
}

TEST(InterpreterLaunch, GridMustBeTheKernels) {
  const auto add = wire_add_f32(8);
  std::vector<float> a(8), b(8), c(8);
  std::vector<kiln_arg> args = {arg_of(a), arg_of(b), arg_of(c)};
  sdk::LaunchGrid grid;
  grid.groups = {4, 1, 1};
  expect_error([&] { sdk::InterpretedProgram(add).run(args, grid); }, KILN_STATUS_INVALID_ARGUMENT,
               "launch grid groups (4,1,1) local (1,1,1) differs from the kernel's groups (8,1,1) local (1,1,1)");
  grid.groups = {8, 1, 1};
  sdk::InterpretedProgram(add).run(args, grid);
}

TEST(InterpreterLaunch, OutOfRangeAndMisalignedAccesses) {
  // x[i + offset] with a VARIABLE offset: reads past the end, or before the start.
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 16);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 16);
  const Id offset = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  const Id l = w.local_index(0, w.const_i64(4));
  const Id g = w.group_index(0, w.const_i64(4));
  const Id i = w.mad(KILN_DTYPE_I64, g, w.const_i64(4), l);
  const Id load = w.load(KILN_DTYPE_F32, px, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, offset));
  w.store(KILN_DTYPE_F32, po, i, load);
  std::vector<float> x(16), out(16);
  expect_fault(w.ops, {arg_of(x), arg_of(out), i64_arg(1)},
               "index 16 is out of range [0, 16) of param slot 0 (op 0, 16 f32), in thread (3,0,0) of group (3,0,0)", load);
  expect_fault(w.ops, {arg_of(x), arg_of(out), i64_arg(-2)},
               "index -2 is out of range [0, 16) of param slot 0 (op 0, 16 f32), in thread (0,0,0) of group (0,0,0)", load);

  WireBuilder v;  // a 4-lane load at x[2 * g]: misaligned for odd g
  const Id vx = v.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 16);
  const Id vg = v.group_index(0, v.const_i64(4));
  const Id vload = v.load(KILN_DTYPE_F32, vx, v.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, vg, v.const_i64(2)), 4);
  expect_fault(v.ops, {arg_of(x)}, "misaligned 4-lane access at index 2 of param slot 0", vload);

  WireBuilder e;  // a 4-lane load that runs past the end
  const Id ex = e.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 6);
  const Id eload = e.load(KILN_DTYPE_F32, ex, e.const_i64(4), 4);
  std::vector<float> six(6);
  expect_fault(e.ops, {arg_of(six)}, "elements [4, +4) is out of range [0, 6)", eload);
}

// x / 0 and x % 0 are 0 (kernel_ir.h), as every emitter writes them: the
// interpreter computes them, no fault (it used to refuse what c:0 ran).
TEST(InterpreterLaunch, IntegerDivisionByZeroIsZero) {
  for (std::uint8_t op : {KILN_BINARY_DIV, KILN_BINARY_MOD}) {
    WireBuilder w;
    const Id py = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, 8);
    const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 1, 8);
    const Id i = w.group_index(0, w.const_i64(8));
    w.store(KILN_DTYPE_I32, po, i, w.binary(op, KILN_DTYPE_I32, w.const_bits(KILN_DTYPE_I32, 7), w.load(KILN_DTYPE_I32, py, i)));
    std::vector<std::int32_t> y = {1, 2, 3, 4, 5, 0, 7, -1}, out(8, -5);
    run_ok(w.ops, {arg_of(y), arg_of(out)});
    if (op == KILN_BINARY_DIV) EXPECT_EQ(out, (std::vector<std::int32_t>{7, 3, 2, 1, 1, 0, 1, -7}));
    else EXPECT_EQ(out, (std::vector<std::int32_t>{0, 1, 1, 3, 2, 0, 0, 0}));
  }
  // A guarded division (IF y != 0) does not fault on the masked threads.
  WireBuilder w;
  const Id py = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I32, 0, 8);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 1, 8);
  const Id i = w.group_index(0, w.const_i64(8));
  const Id y = w.load(KILN_DTYPE_I32, py, i);
  const Id nonzero = w.if_(w.binary(KILN_BINARY_NOT_EQ, KILN_DTYPE_BOOL, y, w.const_bits(KILN_DTYPE_I32, 0)));
  w.store(KILN_DTYPE_I32, po, i, w.binary(KILN_BINARY_DIV, KILN_DTYPE_I32, w.const_bits(KILN_DTYPE_I32, 7), y));
  w.end_if(nonzero);
  std::vector<std::int32_t> ys = {1, 2, 3, 4, 5, 0, 7, 8}, out(8, -1);
  run_ok(w.ops, {arg_of(ys), arg_of(out)});
  EXPECT_EQ(out, (std::vector<std::int32_t>{7, 3, 2, 1, 1, -1, 1, 0}));
}

TEST(InterpreterLaunch, OpBudgetStopsEndlessLoops) {
  WireBuilder w;
  const Id k = w.loop(w.const_i64(INT64_MAX));
  const Id end = w.end_loop(k);
  sdk::RunOptions options;
  options.max_ops = 100000;
  expect_fault(w.ops, {}, "over the limit of 100000 (RunOptions::max_ops", end, options);
  // Astronomically many empty groups are stopped too.
  WireBuilder g;
  g.group_index(0, g.const_i64(INT64_MAX));
  expect_fault(g.ops, {}, "groups started), over the limit of 100000", -1, options);
}

// Found by fuzzing (tests/fuzz/regressions/wire): clearing a batch's storage
// counts against the budget, so groups that do nothing but own 1 MiB of
// REGISTER storage are stopped after about 100 of them, not after 100000
// (100 GB of clearing: this test would hit its ctest TIMEOUT).
TEST(InterpreterLaunch, OpBudgetCountsClearingStorage) {
  WireBuilder w;
  w.group_index(0, w.const_i64(INT64_MAX));
  w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1u << 18);
  sdk::RunOptions options;
  options.max_ops = 100000;
  options.check_storage = false;
  expect_fault(w.ops, {}, "groups started), over the limit of 100000", -1, options);
}

// ---------------------------------------------------------- grid fixes --

TEST(GridEvaluation, SharedSubexpressionsAreEvaluatedOnce) {
  // len = x; x = x + x, 60 times (a DAG of 2^60 paths): evaluates at once.
  WireBuilder w;
  Id x = w.const_i64(1);
  for (int i = 0; i < 60; ++i) x = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, x, x);
  w.group_index(0, x);
  const sdk::LaunchGrid grid = sdk::compute_grid(w.ops, {});
  EXPECT_EQ(grid.groups[0], 1ull << 60);
}

TEST(GridEvaluation, MinimumDividedByMinusOneDoesNotTrap) {
  WireBuilder w;
  const Id q = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, w.const_i64(INT64_MIN), w.const_i64(-1));
  w.group_index(0, w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, q, w.const_i64(-1)));
  expect_error([&] { sdk::compute_grid(w.ops, {}); }, KILN_STATUS_INVALID_ARGUMENT, "index length evaluates to 0");
  WireBuilder s;  // i32 shifts take y mod 32: 1 << 33 = 2
  s.group_index(0, s.cast(KILN_DTYPE_I64, s.binary(KILN_BINARY_SHL, KILN_DTYPE_I32, s.const_bits(KILN_DTYPE_I32, 1),
                                                   s.const_bits(KILN_DTYPE_I32, 33))));
  EXPECT_EQ(sdk::compute_grid(s.ops, {}).groups[0], 2u);
}
