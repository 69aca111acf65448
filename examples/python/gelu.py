#!/usr/bin/env python3
"""GELU (tanh form) over a vector from Python, on every device that compiles
kernels: built as its formula, compiled, launched on numpy arrays, checked
against numpy and timed.

    PYTHONPATH=PREFIX/lib/python3/dist-packages python3 examples/python/gelu.py [N]
    KILN_LIBRARY=build/lib/libkiln.so PYTHONPATH=python python3 examples/python/gelu.py
"""
import math
import sys

import numpy as np

import kiln

TANH = 14  # kernel_ir.h KILN_UNARY_TANH (ABI 1.1)


def tanh(z, device):
    # Devices (and libkiln builds) from before the math ops lack tanh: the
    # exp form, accurate enough away from 0 for this check.
    return kiln.tanh(z) if device.supports_unary(TANH) else 1 - 2 / (kiln.exp(2 * z) + 1)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
    x_np = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    x64 = x_np.astype(np.float64)
    expected = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    for info in kiln.devices():
        if not info.can_compile or info.plugin == "cblas":
            continue
        device = kiln.device(info.id)
        x = kiln.input("x", n)
        y = 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x**3), device))
        program = kiln.Kernel.build(y).compile(device)
        out = program(x_np)
        err = float(np.max(np.abs(out - expected) / np.maximum(np.abs(expected), 1)))
        timing = kiln.bench(program, x_np, repeats=5)
        print(f"{info.id:10} max error {err:.2e}  median {timing.median_ns / 1e3:9.1f} us ({timing.timer} timer)")
        if err > 1e-5:
            sys.exit(f"{info.id}: GELU differs from numpy by {err:.3g}")


if __name__ == "__main__":
    main()
