"""Expressions (kiln/expr.py) to IR through the C builder (kiln_builder_*).

The index space is the outputs' shape: one thread per element, a GROUP
index per dimension (the last dimension on grid axis 0). An expression is
evaluated at an index tuple; its operands at the same tuple, broadcast
(a dimension of 1 reads element 0). A reduction is a LOOP over its axis
accumulating in a REGISTER storage of its own (the storages come first, as
the IR asks), evaluated afresh where it is used: LICM and CSE (the always-on
passes) hoist what does not depend on the loop.
"""
import ctypes
import math

from . import _lib, dtypes
from ._errors import check
from .expr import BINARY, REDUCTIONS, UNARY, Binary, Cast, Const, Expr, Input, Reduce, Scalar, Select, Unary

_L = _lib.lib
GLOBAL, GLOBAL_MUT, VARIABLE = 1, 2, 3
REGISTER = 3
I64 = dtypes.CODES["i64"]


class _Builder:
    """kiln_builder_* with values as ints and errors as kiln.Error."""

    def __init__(self):
        self.handle = _lib.c_handle()
        check(_L.kiln_builder_new(ctypes.byref(self.handle)))

    def __del__(self):
        if getattr(self, "handle", None):
            _L.kiln_builder_free(self.handle)

    def call(self, name, *args):
        out = _lib.c_value()
        check(getattr(_L, "kiln_builder_" + name)(self.handle, *args, ctypes.byref(out)))
        return out.value

    def void(self, name, *args):
        check(getattr(_L, "kiln_builder_" + name)(self.handle, *args))

    def finish(self):
        kernel = _lib.c_handle()
        check(_L.kiln_builder_finish(self.handle, ctypes.byref(kernel)))
        return kernel


def _walk(roots):
    """Every node below `roots`, each once, children first."""
    seen, order = set(), []
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node.id in seen:
            continue
        seen.add(node.id)
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(node.children()))
    return order


class _Lowering:
    def __init__(self, outputs):
        self.b = _Builder()
        self.outputs = outputs  # [(name, Expr)]
        shapes = {e.shape for _, e in outputs}
        if len(shapes) != 1:
            raise ValueError(f"outputs of different shapes {sorted(shapes)}: one kernel has one index space")
        self.shape = shapes.pop()
        if not self.shape:
            raise ValueError("the output is a single value: give it a shape (reduce over an axis of an input)")
        nodes = _walk([e for _, e in outputs])
        self.inputs = [n for n in nodes if isinstance(n, (Input, Scalar))]
        names = [n.name for n in self.inputs] + [name for name, _ in outputs]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"names used twice: {sorted(duplicates)} (inputs, scalars and outputs need their own)")
        self.reductions = [n for n in nodes if isinstance(n, Reduce)]
        self.scopes = [{}]
        self.params = {}
        self.storages = {}

    def const(self, dtype, value):
        key = ("const", dtype, repr(value))
        cached = self.lookup(key)
        if cached is not None:
            return cached
        if dtypes.is_float(dtype):
            v = self.b.call("const_f64", dtypes.code_of(dtype), float(value))
        else:
            v = self.b.call("const_i64", dtypes.code_of(dtype), int(value))
        return self.remember(key, v)

    def lookup(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def remember(self, key, value):
        self.scopes[-1][key] = value
        return value

    def lower(self):
        b = self.b
        for node in self.inputs:  # inputs first, in the order they appear, then outputs
            if isinstance(node, Input):
                elements = math.prod(node.shape)
                self.params[node.id] = b.call("param", GLOBAL, dtypes.code_of(node.dtype), elements)
            else:
                self.params[node.id] = b.call("param", VARIABLE, dtypes.code_of(node.dtype), 0)
        out_params = [b.call("param", GLOBAL_MUT, dtypes.code_of(e.dtype), math.prod(self.shape))
                      for _, e in self.outputs]
        for r in self.reductions:  # STORAGE comes before every loop
            self.storages[r.id] = b.call("storage", REGISTER, dtypes.code_of(r.dtype), 1)
        self.zero = self.const("i64", 0)
        # The last dimension on grid axis 0.
        index = [None] * len(self.shape)
        for axis, d in enumerate(reversed(range(len(self.shape)))):
            index[d] = b.call("index", axis, self.const("i64", self.shape[d]))
        flat = self.flat(tuple(index), self.shape)
        for (_, e), param in zip(self.outputs, out_params):
            b.void("store", param, flat, self.value(e, tuple(index)))
        return b.finish()

    def flat(self, index, shape):
        """The element index of `index` in a row-major array of `shape`."""
        key = ("flat", index, shape)
        cached = self.lookup(key)
        if cached is not None:
            return cached
        total, stride = None, 1
        for i, d in reversed(list(zip(index, shape))):
            if d == 1:
                continue
            term = i if stride == 1 else self.b.call("binary", BINARY["mul"], i, self.const("i64", stride))
            total = term if total is None else self.b.call("binary", BINARY["add"], total, term)
            stride *= d
        return self.remember(key, self.zero if total is None else total)

    def operand_index(self, index, shape, operand_shape):
        """`index` (of `shape`) for an operand of `operand_shape`, broadcast."""
        out = list(index[len(shape) - len(operand_shape):])
        for d, n in enumerate(operand_shape):
            if n == 1:
                out[d] = self.zero
        return tuple(out)

    def value(self, node, index):
        key = (node.id, index)
        cached = self.lookup(key)
        if cached is not None:
            return cached
        return self.remember(key, self.compute(node, index))

    def compute(self, node, index):
        b = self.b
        sub = lambda child: self.value(child, self.operand_index(index, node.shape, child.shape))  # noqa: E731
        if isinstance(node, Const):
            return self.const(node.dtype, node.value)
        if isinstance(node, Input):
            return b.call("load", self.params[node.id], self.flat(index, node.shape))
        if isinstance(node, Scalar):
            return self.params[node.id]
        if isinstance(node, Unary):
            return b.call("unary", UNARY[node.op], sub(node.x))
        if isinstance(node, Binary):
            return b.call("binary", BINARY[node.op], sub(node.x), sub(node.y))
        if isinstance(node, Select):
            return b.call("select", sub(node.condition), sub(node.a), sub(node.b))
        if isinstance(node, Cast):
            return b.call("cast", dtypes.code_of(node.dtype), sub(node.x))
        if isinstance(node, Reduce):
            return self.reduction(node, index)
        raise TypeError(f"cannot lower {node!r}")

    def reduction(self, node, index):
        b = self.b
        combine, start = REDUCTIONS[node.op]
        acc = self.storages[node.id]
        b.void("store", acc, self.zero, self.const(node.dtype, start))
        counter = b.call("loop", self.const("i64", node.x.shape[node.axis]))
        self.scopes.append({})
        inner = list(index)
        if node.keepdims:
            inner[node.axis] = counter
        else:
            inner.insert(node.axis, counter)
        x = self.value(node.x, tuple(inner))
        running = b.call("load", acc, self.zero)
        b.void("store", acc, self.zero, b.call("binary", BINARY[combine], running, x))
        self.scopes.pop()
        b.void("end_loop", counter)
        return b.call("load", acc, self.zero)


def build(outputs):
    """(kernel handle, input nodes in slot order, [(name, shape)] of the outputs)."""
    for name, e in outputs:
        if not isinstance(e, Expr):
            raise TypeError(f"output {name!r} is not a kiln expression")
    lowering = _Lowering(outputs)
    handle = lowering.lower()
    return handle, lowering.inputs, [(name, e.shape) for name, e in outputs]
