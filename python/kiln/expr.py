"""Kernels written as math: expressions over an index space.

    x = kiln.input("x", 4096)                       # f32[4096], an input
    y = 0.5 * x * (1 + kiln.tanh(0.79788456 * (x + 0.044715 * x**3)))
    kernel = kiln.Kernel.build(y)                   # y[i] for every i

An expression has a shape (its index space) and a dtype. Operands combine
elementwise under numpy's broadcasting rules (a dimension of 1, or a missing
leading one, repeats); Python numbers become constants of the other
operand's dtype. Reductions (sum, max, min, prod, mean) loop over one axis:
`(x * x).sum(axis=1)` for x of shape (m, n) has shape (m,); with
keepdims=True it keeps a dimension of 1, so that `x - x.max(axis=1,
keepdims=True)` broadcasts it back over the row. kiln/lower.py turns the
expressions into IR through the C builder.
"""
import itertools
import math

from . import dtypes

# kernel_ir.h codes
UNARY = {"neg": 1, "bit_not": 2, "exp": 3, "exp2": 4, "log": 5, "log2": 6, "recip": 7, "sqrt": 8, "sin": 9,
         "cos": 10, "floor": 11, "trunc": 12, "abs": 13,
         # appended in ABI 1.1 (the math ops): bound by code
         "tanh": 14, "erf": 15, "sigmoid": 16, "rsqrt": 17, "log1p": 18, "expm1": 19}
BINARY = {"add": 1, "sub": 2, "mul": 3, "div": 4, "pow": 5, "mod": 6, "lt": 7, "gt": 8, "max": 9, "min": 10,
          "or": 11, "and": 12, "xor": 13, "bit_or": 14, "bit_and": 15, "shl": 16, "shr": 17, "ne": 18, "eq": 19}
COMPARISONS = {"lt", "gt", "ne", "eq"}
# A reduction: its combining binary op and its start value.
REDUCTIONS = {"sum": ("add", 0.0), "prod": ("mul", 1.0), "max": ("max", -math.inf), "min": ("min", math.inf)}

_ids = itertools.count()


def _shape_of(shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if len(shape) > 3:
        raise ValueError(f"shape {shape}: at most 3 dimensions (the grid's axes)")
    if any(d < 1 for d in shape):
        raise ValueError(f"shape {shape}: every dimension must be >= 1")
    return shape


def broadcast(a, b):
    """numpy's broadcast of two shapes, or ValueError naming both."""
    out = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return tuple(reversed(out))


class Expr:
    """A value at every point of its index space (`shape`)."""
    __array_priority__ = 1000  # numpy scalars on the left defer to Expr's operators

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype
        self.id = next(_ids)

    def children(self):
        return ()

    # arithmetic
    def __add__(self, other): return binary("add", self, other)
    def __radd__(self, other): return binary("add", other, self)
    def __sub__(self, other): return binary("sub", self, other)
    def __rsub__(self, other): return binary("sub", other, self)
    def __mul__(self, other): return binary("mul", self, other)
    def __rmul__(self, other): return binary("mul", other, self)
    def __truediv__(self, other): return binary("div", self, other)
    def __rtruediv__(self, other): return binary("div", other, self)
    def __mod__(self, other): return binary("mod", self, other)
    def __neg__(self): return unary("neg", self)
    def __abs__(self): return unary("abs", self)
    def __pow__(self, exponent): return power(self, exponent)
    def __rpow__(self, base): return binary("pow", base, self)
    # comparisons give bool expressions (for kiln.where)
    def __lt__(self, other): return binary("lt", self, other)
    def __gt__(self, other): return binary("gt", self, other)
    def __le__(self, other): return unary("bit_not", binary("gt", self, other))
    def __ge__(self, other): return unary("bit_not", binary("lt", self, other))
    __hash__ = object.__hash__

    # reductions
    def sum(self, axis=-1, keepdims=False): return reduce("sum", self, axis, keepdims)
    def prod(self, axis=-1, keepdims=False): return reduce("prod", self, axis, keepdims)
    def max(self, axis=-1, keepdims=False): return reduce("max", self, axis, keepdims)
    def min(self, axis=-1, keepdims=False): return reduce("min", self, axis, keepdims)
    def mean(self, axis=-1, keepdims=False):
        axis = _axis(self, axis)
        return reduce("sum", self, axis, keepdims) * (1.0 / self.shape[axis])

    def astype(self, dtype):
        return Cast(self, dtypes.name_of(dtype))

    def __bool__(self):
        raise TypeError("a kiln expression has no truth value: use kiln.where(condition, a, b)")

    def __repr__(self):
        return f"<kiln.{type(self).__name__} {self.dtype}{list(self.shape)}>"


class Input(Expr):
    """A buffer the kernel reads (a GLOBAL param)."""

    def __init__(self, name, shape, dtype):
        super().__init__(_shape_of(shape), dtypes.name_of(dtype))
        self.name = name


class Scalar(Expr):
    """A value passed at launch (a VARIABLE param)."""

    def __init__(self, name, dtype):
        super().__init__((), dtypes.name_of(dtype))
        self.name = name


class Const(Expr):
    def __init__(self, value, dtype):
        super().__init__((), dtype)
        self.value = value


class Unary(Expr):
    def __init__(self, op, x):
        super().__init__(x.shape, "bool" if op == "bit_not" and x.dtype == "bool" else x.dtype)
        self.op, self.x = op, x

    def children(self):
        return (self.x,)


class Binary(Expr):
    def __init__(self, op, x, y):
        super().__init__(broadcast(x.shape, y.shape), "bool" if op in COMPARISONS else x.dtype)
        self.op, self.x, self.y = op, x, y

    def children(self):
        return (self.x, self.y)


class Select(Expr):
    def __init__(self, condition, a, b):
        super().__init__(broadcast(condition.shape, broadcast(a.shape, b.shape)), a.dtype)
        self.condition, self.a, self.b = condition, a, b

    def children(self):
        return (self.condition, self.a, self.b)


class Cast(Expr):
    def __init__(self, x, dtype):
        super().__init__(x.shape, dtype)
        self.x = x

    def children(self):
        return (self.x,)


class Reduce(Expr):
    def __init__(self, op, x, axis, keepdims):
        shape = list(x.shape)
        if keepdims:
            shape[axis] = 1
        else:
            del shape[axis]
        super().__init__(tuple(shape), x.dtype)
        self.op, self.x, self.axis, self.keepdims = op, x, axis, keepdims

    def children(self):
        return (self.x,)


def _axis(x, axis):
    if not -len(x.shape) <= axis < len(x.shape):
        raise ValueError(f"axis {axis} is out of range for shape {x.shape}")
    return axis % len(x.shape)


def _operands(a, b):
    """Two Exprs of one dtype: a Python number takes the other side's dtype."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        raise TypeError("at least one operand must be a kiln expression")
    if not isinstance(a, Expr):
        a = Const(a, b.dtype)
    if not isinstance(b, Expr):
        b = Const(b, a.dtype)
    if a.dtype != b.dtype:
        raise TypeError(f"operands of dtypes {a.dtype} and {b.dtype}: cast one with .astype()")
    return a, b


def binary(op, a, b):
    a, b = _operands(a, b)
    return Binary(op, a, b)


def unary(op, x):
    if not isinstance(x, Expr):
        x = Const(x, "f32")
    return Unary(op, x)


def power(x, exponent):
    """x**k for a small integer k as multiplications (exact, and defined for
    negative x, which POW is not), x**0.5 as sqrt, else POW."""
    if isinstance(exponent, (int, float)) and float(exponent).is_integer() and abs(exponent) <= 16:
        k = int(exponent)
        if k == 0:
            return binary("add", binary("mul", x, 0), 1)
        result, base, n = None, x, abs(k)
        while n:
            if n & 1:
                result = base if result is None else result * base
            n >>= 1
            if n:
                base = base * base
        return unary("recip", result) if k < 0 else result
    if exponent == 0.5:
        return unary("sqrt", x)
    return binary("pow", x, exponent)


def reduce(op, x, axis=-1, keepdims=False):
    if not isinstance(x, Expr) or not x.shape:
        raise ValueError(f"{op}: needs an expression with at least one dimension")
    return Reduce(op, x, _axis(x, axis), keepdims)


def where(condition, a, b):
    """condition ? a : b, elementwise."""
    a, b = _operands(a, b)
    if not isinstance(condition, Expr) or condition.dtype != "bool":
        raise TypeError("where: the condition must be a bool expression (a comparison)")
    return Select(condition, a, b)


def input(name, shape, dtype="f32"):  # noqa: A001 - the natural name
    """An input buffer of `shape` (an int or a tuple of up to 3 ints)."""
    return Input(name, shape, dtype)


def scalar(name, dtype="f32"):
    """A value passed at launch (kernel(..., name=3.5))."""
    return Scalar(name, dtype)


def _unary_function(name):
    def f(x):
        return unary(name, x)
    f.__name__ = name
    f.__doc__ = f"{name}(x), elementwise (kernel_ir.h KILN_UNARY code {UNARY[name]})"
    return f


exp, exp2, log, log2, sqrt = (_unary_function(n) for n in ("exp", "exp2", "log", "log2", "sqrt"))
sin, cos, floor, trunc, recip = (_unary_function(n) for n in ("sin", "cos", "floor", "trunc", "recip"))
tanh, erf, sigmoid, rsqrt, log1p, expm1 = (_unary_function(n) for n in
                                          ("tanh", "erf", "sigmoid", "rsqrt", "log1p", "expm1"))


def maximum(a, b): return binary("max", a, b)
def minimum(a, b): return binary("min", a, b)
def sum(x, axis=-1, keepdims=False): return reduce("sum", x, axis, keepdims)  # noqa: A001
def mean(x, axis=-1, keepdims=False): return x.mean(axis, keepdims)
