"""kiln from Python: devices, kernels from IR text or written as math,
compile, launch on numpy arrays, tune, time. Binds libkiln's C API
(kiln/kiln.h) through ctypes; docs/python.md says why and how.

    import kiln, numpy as np
    x = kiln.input("x", 1 << 20)
    gelu = kiln.Kernel.build(0.5 * x * (1 + kiln.tanh(0.79788456 * (x + 0.044715 * x**3))))
    program = gelu.compile(kiln.device("c:0"))
    y = program(np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32))
    print(kiln.bench(program, x=...).median_ns)
"""
from ._lib import LibraryNotFoundError
from ._lib import path as library_path
from ._errors import Error
from .buffers import Buffer, empty
from .dtypes import CODES as DTYPES
from .expr import (Expr, cos, erf, exp, exp2, expm1, floor, input, log, log1p, log2, maximum, mean, minimum,
                   recip, rsqrt, scalar, sigmoid, sin, sqrt, sum, tanh, trunc, where)
from .kernel import Kernel, Param, Program, Timing, bench
from .runtime import Device, DeviceInfo, Plugin, Runtime, default_runtime, device, devices, plugins
from .tuning import TuningDb, TuningEntry
from . import _lib as _native

__version__ = _native.text(_native.lib.kiln_version())

__all__ = [
    "Buffer", "DTYPES", "Device", "DeviceInfo", "Error", "Expr", "Kernel", "LibraryNotFoundError", "Param",
    "Plugin", "Program", "Runtime", "Timing", "TuningDb", "TuningEntry", "bench", "cos", "default_runtime",
    "device", "devices", "empty", "erf", "exp", "exp2", "expm1", "floor", "input", "library_path", "log",
    "log1p", "log2", "maximum", "mean", "minimum", "plugins", "recip", "rsqrt", "scalar", "sigmoid", "sin",
    "sqrt", "sum", "tanh", "trunc", "where",
]
