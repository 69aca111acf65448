"""Arrays without copies on host-memory devices, timing, tuning and the
tuning database."""
import os

import numpy as np
import pytest

import kiln
from conftest import WORK_DIR, random_nonzero


def square_plus_one(n):
    x = kiln.input("x", n)
    return kiln.Kernel.build(x * x + 1)


def test_outputs_are_the_buffers_on_host_devices(runtime, rng):
    device = runtime.device("c:0")
    program = square_plus_one(256).compile(device)
    x = kiln.empty(256, "f32", device)
    assert isinstance(x, np.ndarray) and x.shape == (256,)
    x[...] = random_nonzero(rng, 256)
    y = program(x)
    # The output is a view of the kiln buffer the kernel wrote: no copy out.
    assert kiln.buffers.buffer_of(y) is not None
    np.testing.assert_allclose(y, x * x + 1, rtol=1e-6)
    # An output array of kiln memory is written in place; the input array is used in place.
    out = kiln.empty(256, "f32", device)
    before = out.ctypes.data
    result = program(x, out=out)
    assert result is out and out.ctypes.data == before
    np.testing.assert_allclose(out, x * x + 1, rtol=1e-6)
    # A plain numpy out= is filled too.
    plain = np.zeros(256, np.float32)
    program(x, out=plain)
    np.testing.assert_allclose(plain, x * x + 1, rtol=1e-6)


def test_kiln_arrays_are_not_copied_in(runtime, rng, monkeypatch):
    device = runtime.device("c:0")
    program = square_plus_one(128).compile(device)
    writes = []
    original = kiln.Buffer.write
    monkeypatch.setattr(kiln.Buffer, "write", lambda self, a, offset=0: (writes.append(a.nbytes),
                                                                          original(self, a, offset))[1])
    x = kiln.empty(128, "f32", device)
    x[...] = random_nonzero(rng, 128)
    program(x)
    assert writes == [], "an array of kiln memory was copied"
    program(np.array(x))
    assert writes == [512], "a plain numpy array is copied once"


def test_empty_needs_a_host_memory_device(runtime):
    device = runtime.device("opencl:0") if "opencl:0" in [d.id for d in runtime.devices()] else None
    if device is None or device.info.host_memory:
        pytest.skip("no device without host memory here (opencl:0 absent)")
    with pytest.raises(ValueError, match="not a host-memory device"):
        kiln.empty(16, "f32", device)


def test_buffers(runtime, rng):
    device = runtime.device("dummy:0")
    data = random_nonzero(rng, 100)
    buffer = kiln.Buffer(device, data.nbytes)
    assert buffer.nbytes == 400
    buffer.write(data)
    np.testing.assert_array_equal(buffer.read(np.empty(100, np.float32)), data)
    with pytest.raises(kiln.Error, match="404|400"):
        buffer.read(np.empty(101, np.float32))
    with pytest.raises(kiln.Error):
        kiln.Buffer(device, 0)


def test_bench(device, rng):
    program = square_plus_one(4096).compile(device)
    timing = kiln.bench(program, random_nonzero(rng, 4096), repeats=4)
    assert timing.runs == 4 and 0 < timing.min_ns <= timing.median_ns
    assert timing.timer in ("host", "device", "model")
    with pytest.raises(kiln.Error, match="repeats"):
        program.bench(random_nonzero(rng, 4096), repeats=0)


def test_source(runtime):
    language, text = square_plus_one(64).compile(runtime.device("c:0")).source()
    assert language == "c" and text


def test_compile_modes(device, rng):
    kernel = square_plus_one(300)
    x = random_nonzero(rng, 300)
    for mode in ("heuristic", "frozen", "tuned"):
        np.testing.assert_allclose(kernel.compile(device, mode=mode)(x), x * x + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="compile mode"):
        kernel.compile(device, mode="fast")


def test_tune_then_compile_tuned(runtime, rng):
    device = runtime.device("c:0")
    x = kiln.input("x", (64, 256))
    kernel = kiln.Kernel.build(kiln.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))
    tuned = kernel.tune(device, budget=20, force=True, name="python softmax denominator")
    assert not tuned.from_database and tuned.tuned_ns > 0
    xs = random_nonzero(rng, (64, 256))
    x64 = xs.astype(np.float64)
    expected = np.exp(x64 - x64.max(axis=1, keepdims=True)).sum(axis=1)
    np.testing.assert_allclose(tuned(xs), expected, rtol=1e-5)
    again = kernel.compile(device, mode="tuned")
    assert again.from_database and again.sequence == tuned.sequence
    np.testing.assert_allclose(again(xs), expected, rtol=1e-5)
    # The database lists it, and an export imports into another database.
    db = kiln.TuningDb(runtime=runtime)
    names = [e.kernel_name for e in db.entries()]
    assert "python softmax denominator" in names
    copy_path = os.path.join(WORK_DIR, "python-copy.sqlite")
    if os.path.exists(copy_path):
        os.remove(copy_path)
    copy = kiln.TuningDb(copy_path)
    assert copy.import_json(db.export()) == len(names)
    assert [e.kernel_hash for e in copy.entries()] == [e.kernel_hash for e in db.entries()]
    with pytest.raises(kiln.Error):
        copy.import_json("{not json")
