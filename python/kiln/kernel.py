"""Kernels (from IR text or from expressions), programs, launches, timing
and tuning: kiln_kernel_*, kiln_program_*, kiln_kernel_tune."""
import ctypes
import struct
from dataclasses import dataclass

import numpy as np

from . import _lib, dtypes, lower
from ._errors import Error, check
from .buffers import Buffer, buffer_of

_L = _lib.lib
GLOBAL, GLOBAL_MUT, VARIABLE = 1, 2, 3
_INVALID_ARGUMENT = 1
TIMER_NAMES = {0: "host", 1: "device", 2: "model"}
COMPILE_MODES = {"heuristic": 0, "tuned": 1, "frozen": 2}  # kiln_compile_mode_t


@dataclass(frozen=True)
class Param:
    slot: int
    name: str
    kind: str        # "input", "output" (written), "scalar"
    dtype: str
    elements: int    # 0: unknown
    shape: tuple


@dataclass(frozen=True)
class Timing:
    min_ns: int
    median_ns: int
    runs: int
    timer: str       # "host", "device" or "model" (the dummy's simulated time)


def _scalar_bits(value, dtype):
    name = dtypes.name_of(dtype)
    if name == "f32":
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if name == "f64":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if name in ("f16", "bf16"):
        raise Error(f"a {name} scalar argument: pass it as f32 and cast in the kernel", _INVALID_ARGUMENT)
    if name == "bool":
        return 1 if value else 0
    bits = 8 * dtypes.numpy_of(name).itemsize
    return int(value) & ((1 << bits) - 1)


class Kernel:
    """A kernel: from IR text (Kernel.from_text) or expressions (Kernel.build)."""

    def __init__(self, handle, names=None, shapes=None):
        self._handle = handle
        count = _lib.size_t()
        check(_L.kiln_kernel_param_count(handle, ctypes.byref(count)))
        names, shapes = names or {}, shapes or {}
        self.params = []
        for slot in range(count.value):
            info = _lib.sized(_lib.ParamInfoStruct)
            check(_L.kiln_kernel_param(handle, slot, ctypes.byref(info)))
            kind = {GLOBAL: "input", GLOBAL_MUT: "output", VARIABLE: "scalar"}[info.kind]
            shape = shapes.get(slot, (info.elements,) if kind != "scalar" else ())
            self.params.append(Param(slot, names.get(slot, f"p{slot}"), kind, dtypes.NAMES[info.dtype],
                                     info.elements, shape))

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_kernel_free(self._handle)
            self._handle = None

    @staticmethod
    def from_text(text):
        """Parses and verifies the IR text form (docs/ir.md). Errors: kiln.Error
        with code_name "parse error" and .line/.column, or "invalid kernel"
        with .op and .line."""
        data = text.encode()
        handle = _lib.c_handle()
        check(_L.kiln_kernel_from_text(data, len(data), ctypes.byref(handle)))
        return Kernel(handle)

    @staticmethod
    def build(*outputs, **named):
        """A kernel computing each output expression at every point of their
        (common) shape: Kernel.build(y) or Kernel.build(y=..., z=...).
        Params: the inputs and scalars in the order they first appear, then
        the outputs."""
        pairs = [(f"out{i}" if len(outputs) > 1 else "out", e) for i, e in enumerate(outputs)] + list(named.items())
        if not pairs:
            raise ValueError("build: no output expression")
        handle, inputs, out_shapes = lower.build(pairs)
        names, shapes = {}, {}
        for slot, node in enumerate(inputs):
            names[slot], shapes[slot] = node.name, node.shape
        for i, (name, shape) in enumerate(out_shapes):
            names[len(inputs) + i], shapes[len(inputs) + i] = name, shape
        return Kernel(handle, names, shapes)

    @property
    def text(self):
        pointer = ctypes.c_void_p()
        check(_L.kiln_kernel_print(self._handle, ctypes.byref(pointer)))
        return _lib.take_string(pointer)

    @property
    def inputs(self):
        return [p for p in self.params if p.kind != "output"]

    @property
    def outputs(self):
        return [p for p in self.params if p.kind == "output"]

    def compile(self, device, mode="heuristic", tuning_db=None):
        """A program for `device`. mode: "heuristic" (the always-on passes for
        the device), "tuned" (the tuning database's program, from
        kernel.tune; the heuristic one when the database lacks it:
        Program.from_database says which), "frozen" (the kernel as given)."""
        options = _lib.sized(_lib.CompileOptionsStruct)
        if mode not in COMPILE_MODES:
            raise ValueError(f"compile mode {mode!r}: one of {', '.join(COMPILE_MODES)}")
        options.mode = COMPILE_MODES[mode]
        options.tuning_db = None if tuning_db is None else str(tuning_db).encode()
        handle = _lib.c_handle()
        check(_L.kiln_program_compile(device._handle, self._handle, ctypes.byref(options), ctypes.byref(handle)))
        return Program(self, device, handle)

    def tune(self, device, budget=None, seed=0, force=False, scalars=(), name=None, tuning_db=None):
        """Tunes on `device` within `budget` seconds (None: the config's),
        stores the winner in the tuning database and returns it compiled; a
        kernel the database has is not tuned again unless force=True."""
        options = _lib.sized(_lib.TuneOptionsStruct)
        options.budget_s = 0.0 if budget is None else float(budget)
        options.seed = int(seed)
        options.force = 1 if force else 0
        values = (ctypes.c_double * max(1, len(scalars)))(*scalars)
        options.scalars = values
        options.n_scalars = len(scalars)
        options.kernel_name = None if name is None else name.encode()
        options.tuning_db = None if tuning_db is None else str(tuning_db).encode()
        handle = _lib.c_handle()
        check(_L.kiln_kernel_tune(device._handle, self._handle, ctypes.byref(options), ctypes.byref(handle)))
        return Program(self, device, handle)


class Program:
    """A kernel compiled for one device. Call it with the inputs (numpy
    arrays or anything np.asarray takes, kiln arrays from kiln.empty, and
    numbers for scalars; positionally in slot order or by name): it returns
    the outputs as numpy arrays (one, or a tuple). `out=` gives the output
    arrays to write instead."""

    def __init__(self, kernel, device, handle):
        self.kernel, self.device, self._handle = kernel, device, handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_program_free(self._handle)
            self._handle = None

    @property
    def sequence(self):
        """The tuned optimization sequence ("" for an untuned program)."""
        return _lib.text(_L.kiln_program_sequence(self._handle))

    @property
    def from_database(self):
        return bool(_L.kiln_program_from_database(self._handle))

    @property
    def tuned_ns(self):
        return _L.kiln_program_tuned_ns(self._handle)

    def source(self):
        """(language, text) of the generated code."""
        language, text = _lib.c_str(), _lib.c_str()
        check(_L.kiln_program_source(self._handle, ctypes.byref(language), ctypes.byref(text)))
        return _lib.text(language.value), _lib.text(text.value)

    def _bind(self, args, named, out):
        """Launch arguments, and what to hand back after the launch."""
        inputs = self.kernel.inputs
        if len(args) > len(inputs):
            raise Error(f"{len(args)} arguments for {len(inputs)} inputs ({', '.join(p.name for p in inputs)})",
                        _INVALID_ARGUMENT)
        values = {p.name: a for p, a in zip(inputs, args)}
        for name, value in named.items():
            if name not in {p.name for p in inputs} or name in values:
                raise Error(f"unexpected or repeated argument {name!r} (inputs: "
                            f"{', '.join(p.name for p in inputs)})", _INVALID_ARGUMENT)
            values[name] = value
        outputs = self.kernel.outputs
        if out is not None:
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(out) != len(outputs):
                raise Error(f"out: {len(out)} arrays for {len(outputs)} outputs", _INVALID_ARGUMENT)
        launch = (_lib.LaunchArgStruct * max(1, len(self.kernel.params)))()
        keep, results, copy_back = [], [], []
        host = self.device.info.host_memory
        for p in self.kernel.params:
            a = launch[p.slot]
            if p.kind == "scalar":
                if p.name not in values:
                    raise Error(f"missing scalar argument {p.name!r}", _INVALID_ARGUMENT)
                a.dtype, a.bits = dtypes.code_of(p.dtype), _scalar_bits(values[p.name], p.dtype)
                continue
            if p.kind == "input":
                if p.name not in values:
                    raise Error(f"missing input {p.name!r}", _INVALID_ARGUMENT)
                buffer = self._input_buffer(p, values[p.name], host)
            else:
                given = out[outputs.index(p)] if out is not None else None
                buffer, result, back = self._output_buffer(p, given, host)
                results.append(result)
                if back is not None:
                    copy_back.append((buffer, back))
            keep.append(buffer)
            a.buffer = buffer._handle
        return launch, keep, results, copy_back

    def _input_buffer(self, p, value, host):
        array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtypes.numpy_of(p.dtype))
        if array.dtype != dtypes.numpy_of(p.dtype):
            raise Error(f"input {p.name!r}: dtype {array.dtype}, the kernel reads {p.dtype}", _INVALID_ARGUMENT)
        if p.elements and array.size != p.elements:
            raise Error(f"input {p.name!r}: {array.size} elements (shape {array.shape}), the kernel reads "
                        f"{p.elements} (shape {p.shape})", _INVALID_ARGUMENT)
        if host:
            shared = buffer_of(array)
            if shared is not None and shared.device.info.host_memory:
                return shared  # its memory is the array: no copy
        buffer = Buffer(self.device, max(1, array.nbytes))
        buffer.write(array)
        return buffer

    def _output_buffer(self, p, given, host):
        """(buffer, the array handed back, an array to copy into after the launch or None)."""
        dtype = dtypes.numpy_of(p.dtype)
        if given is not None:
            if given.dtype != dtype or (p.elements and given.size != p.elements):
                raise Error(f"out {p.name!r}: {given.dtype}[{given.size}], the kernel writes {p.dtype}"
                            f"[{p.elements}]", _INVALID_ARGUMENT)
            shared = buffer_of(given) if host else None
            if shared is not None:
                return shared, given, None
            buffer = Buffer(self.device, max(1, given.nbytes))
            buffer.write(given)  # a written param may also be read
            return buffer, given, given
        if not p.elements:
            raise Error(f"output {p.name!r} has no declared size: pass out=", _INVALID_ARGUMENT)
        buffer = Buffer(self.device, p.elements * dtype.itemsize)
        if host:
            return buffer, buffer.view(p.shape, p.dtype), None  # the buffer itself: no copy
        result = np.empty(p.shape, dtype)
        return buffer, result, result

    def __call__(self, *args, out=None, **named):
        launch, keep, results, copy_back = self._bind(args, named, out)
        check(_L.kiln_program_launch(self._handle, launch, len(self.kernel.params)))
        for buffer, array in copy_back:
            if array.flags.c_contiguous:
                buffer.read(array)
            else:
                array[...] = buffer.read(np.empty(array.shape, array.dtype))
        del keep
        return results[0] if len(results) == 1 else tuple(results)

    def bench(self, *args, warmups=1, repeats=10, **named):
        """Times the program on these inputs (kiln_program_launch_timed)."""
        launch, keep, _, _ = self._bind(args, named, None)
        timing = _lib.sized(_lib.TimingStruct)
        check(_L.kiln_program_launch_timed(self._handle, launch, len(self.kernel.params), int(warmups), int(repeats),
                                           ctypes.byref(timing)))
        del keep
        return Timing(timing.min_ns, timing.median_ns, timing.runs, TIMER_NAMES.get(timing.timer, "unknown"))


def bench(program, *args, warmups=1, repeats=10, **named):
    """kiln.bench(program, x, ...): Program.bench."""
    return program.bench(*args, warmups=warmups, repeats=repeats, **named)
