"""kiln's element types (kernel_ir.h's kiln_dtype) and their numpy twins."""
import numpy as np

# name -> kiln_dtype code
CODES = {"bf16": 1, "f16": 2, "f32": 3, "f64": 4, "u8": 5, "u16": 6, "u32": 7, "u64": 8,
         "i8": 9, "i16": 10, "i32": 11, "i64": 12, "bool": 13}
NAMES = {code: name for name, code in CODES.items()}

# bf16 has no numpy type: its elements travel as their 16-bit patterns (uint16).
_NUMPY = {"bf16": np.uint16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
          "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
          "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
_FROM_NUMPY = {np.dtype(t): name for name, t in _NUMPY.items() if name != "bf16"}


def name_of(dtype):
    """'f32' for 'f32', a kiln_dtype code, or a numpy dtype."""
    if isinstance(dtype, str) and dtype in CODES:
        return dtype
    if isinstance(dtype, int) and dtype in NAMES:
        return NAMES[dtype]
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise ValueError(f"{dtype!r} is not a kiln dtype ({', '.join(CODES)})") from None


def code_of(dtype):
    return CODES[name_of(dtype)]


def numpy_of(dtype):
    return np.dtype(_NUMPY[name_of(dtype)])


def is_float(dtype):
    return name_of(dtype) in ("bf16", "f16", "f32", "f64")
