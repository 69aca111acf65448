"""Kernels from IR text and from expressions, on c:0 and dummy:0, against
numpy in float64 on random non-zero inputs."""
import numpy as np
import pytest

import kiln
from conftest import random_nonzero

ADD_EXP = """
%a = param 0 global f32[1000]
%b = param 1 global f32[1000]
%y = param 2 global_mut f32[1000]
%n = const i64 1000
%i = index group 0 %n
%x = load f32 %a[%i]
%w = load f32 %b[%i]
%e = exp f32 %x
%r = mul f32 %e, %w
store f32 %y[%i], %r
"""


def close(actual, expected, tol=2e-6):
    expected = np.asarray(expected, dtype=np.float64)
    err = np.max(np.abs(actual.astype(np.float64) - expected) / np.maximum(np.abs(expected), 1.0))
    assert err <= tol, f"max error {err:.3g} > {tol:.3g}"


def test_from_text(device, rng):
    kernel = kiln.Kernel.from_text(ADD_EXP)
    assert [p.kind for p in kernel.params] == ["input", "input", "output"]
    a, b = random_nonzero(rng, 1000, -2, 2), random_nonzero(rng, 1000)
    y = kernel.compile(device)(a, b)
    close(y, np.exp(a.astype(np.float64)) * b)
    assert "exp f32" in kernel.text and kiln.Kernel.from_text(kernel.text).text == kernel.text


def test_parse_error_has_line_and_column():
    with pytest.raises(kiln.Error) as e:
        kiln.Kernel.from_text("%a = param 0 global f32[4]\n%b = sqrtt f32 %a\n")
    assert e.value.code_name == "parse error"
    assert e.value.line == 2 and e.value.column > 0
    assert str(e.value).startswith("2:")


def test_verify_error_names_the_op_and_line():
    text = "%a = param 0 global f32[4]\n%n = const i64 4\n%i = index group 0 %n\n%x = load f32 %a[%i]\n" \
           "store f32 %a[%i], %x\n"
    with pytest.raises(kiln.Error) as e:
        kiln.Kernel.from_text(text)
    assert e.value.code_name == "invalid kernel" and e.value.op == 4 and e.value.line == 5


def test_wrong_sizes_and_arguments(runtime, rng):
    program = kiln.Kernel.from_text(ADD_EXP).compile(runtime.device("c:0"))
    a = random_nonzero(rng, 1000)
    with pytest.raises(kiln.Error, match="999 elements"):
        program(a, a[:999])
    with pytest.raises(kiln.Error, match="float64"):
        program(a, a.astype(np.float64))
    with pytest.raises(kiln.Error, match="missing input"):
        program(a)
    with pytest.raises(kiln.Error, match="unexpected"):
        program(a, a, c=a)


def test_elementwise_expression(device, rng):
    x = kiln.input("x", 4096)
    w = kiln.input("w", 4096)
    y = kiln.sqrt(kiln.exp(x) * 2 + 1) - abs(w) / 3 + x**3 - 1 / (2 + x * x)
    kernel = kiln.Kernel.build(y)
    assert [p.name for p in kernel.params] == ["x", "w", "out"]
    xs, ws = random_nonzero(rng, 4096), random_nonzero(rng, 4096)
    x64, w64 = xs.astype(np.float64), ws.astype(np.float64)
    close(kernel.compile(device)(x=xs, w=ws), np.sqrt(np.exp(x64) * 2 + 1) - abs(w64) / 3 + x64**3 - 1 / (2 + x64**2))


def test_where_maximum_and_scalar(device, rng):
    x = kiln.input("x", (8, 33))
    s = kiln.scalar("s")
    y = kiln.where(x > 0, x * s, kiln.maximum(x, -0.25))
    program = kiln.Kernel.build(y).compile(device)
    xs = random_nonzero(rng, (8, 33))
    out = program(xs, s=1.5)
    assert out.shape == (8, 33)
    close(out, np.where(xs > 0, xs * 1.5, np.maximum(xs, -0.25)))


def test_reductions(device, rng):
    x = kiln.input("x", (19, 45))
    rms = kiln.sqrt((x * x).mean(axis=1) + 1e-6)
    kernel = kiln.Kernel.build(rms=rms, top=x.max(axis=1), low=x.min(axis=-1))
    xs = random_nonzero(rng, (19, 45))
    rms_out, top, low = kernel.compile(device)(xs)
    x64 = xs.astype(np.float64)
    close(rms_out, np.sqrt((x64 * x64).mean(axis=1) + 1e-6), 1e-5)
    close(top, x64.max(axis=1))
    close(low, x64.min(axis=1))


def test_softmax_broadcasts_a_reduction_back(device, rng):
    x = kiln.input("x", (6, 40))
    e = kiln.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    xs = random_nonzero(rng, (6, 40), -3, 3)
    out = kiln.Kernel.build(y).compile(device)(xs)
    x64 = xs.astype(np.float64)
    ref = np.exp(x64 - x64.max(axis=1, keepdims=True))
    close(out, ref / ref.sum(axis=1, keepdims=True), 1e-5)


def test_column_sum_over_axis_0(device, rng):
    x = kiln.input("x", (30, 7))
    xs = random_nonzero(rng, (30, 7))
    close(kiln.Kernel.build(x.sum(axis=0)).compile(device)(xs), xs.astype(np.float64).sum(axis=0), 1e-5)


def test_expression_errors():
    x = kiln.input("x", (4, 5))
    with pytest.raises(ValueError, match="do not broadcast"):
        x + kiln.input("y", (4, 6))
    with pytest.raises(TypeError, match="f32 and f64"):
        x + kiln.input("z", (4, 5), "f64")
    with pytest.raises(TypeError, match="truth value"):
        bool(x > 0)
    with pytest.raises(ValueError, match="names used twice"):
        kiln.Kernel.build(x + kiln.input("x", (4, 5)))
    with pytest.raises(ValueError, match="axis 2"):
        x.sum(axis=2)


def test_math_op_codes_are_bound():
    """tanh, erf, ... carry kernel_ir.h's ABI 1.1 codes (the verifier of a
    libkiln without them refuses the kernel by name at build time)."""
    from kiln.expr import UNARY
    assert (UNARY["tanh"], UNARY["erf"], UNARY["sigmoid"], UNARY["rsqrt"], UNARY["log1p"], UNARY["expm1"]) == \
        (14, 15, 16, 17, 18, 19)
    assert kiln.tanh(kiln.input("x", 4)).op == "tanh"


def test_gelu_with_tanh(device, rng):
    """The issue's formula, as written. Needs the ABI 1.1 math ops (tanh = 14)."""
    if not device.supports_unary(kiln.expr.UNARY["tanh"]):
        pytest.skip(f"{device.id} does not claim tanh (the ABI 1.1 math ops are not in this libkiln)")
    x = kiln.input("x", 10000)
    y = 0.5 * x * (1 + kiln.tanh(0.79788456 * (x + 0.044715 * x**3)))
    xs = random_nonzero(rng, 10000, -6, 6)
    xs[:100] = random_nonzero(rng, 100, -1e-3, 1e-3)  # near 0, where a tanh from exp loses precision
    x64 = xs.astype(np.float64)
    expected = 0.5 * x64 * (1 + np.tanh(0.79788456 * (x64 + 0.044715 * x64**3)))
    out = kiln.Kernel.build(y).compile(device)(xs)
    close(out, expected, 4e-6)
    # Relative near 0 too.
    np.testing.assert_allclose(out[:100], expected[:100], rtol=1e-5)
