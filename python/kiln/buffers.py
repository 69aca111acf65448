"""Device memory (kiln_buffer_*) and numpy arrays over it.

On a host-memory device (c, dummy: DeviceInfo.host_memory) a buffer's bytes
are host memory: kiln.empty gives a numpy array that *is* the buffer, and
such an array passed to a program is launched on without a copy; results
come back the same way. On other devices arrays are copied in and out.
"""
import ctypes

import numpy as np

from . import _lib, dtypes
from ._errors import check

_L = _lib.lib


class Buffer:
    """`nbytes` bytes of device memory."""

    def __init__(self, device, nbytes):
        handle = _lib.c_handle()
        check(_L.kiln_buffer_alloc(device._handle, int(nbytes), ctypes.byref(handle)))
        self._handle = handle
        self.device = device  # keeps the device open first, freed after

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_buffer_free(self._handle)
            self._handle = None

    @property
    def nbytes(self):
        return _L.kiln_buffer_size(self._handle)

    @property
    def host_pointer(self):
        """The bytes' address on a host-memory device, else None."""
        return _L.kiln_buffer_host_pointer(self._handle)

    def write(self, array, offset=0):
        a = np.ascontiguousarray(array)
        check(_L.kiln_buffer_write(self._handle, offset, a.ctypes.data, a.nbytes))

    def read(self, out, offset=0):
        """Fills the C-contiguous array `out` from the buffer."""
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("read: the destination must be a writable C-contiguous array")
        check(_L.kiln_buffer_read(self._handle, offset, out.ctypes.data, out.nbytes))
        return out

    def view(self, shape, dtype):
        """A numpy array over the buffer's own bytes (host-memory devices only)."""
        pointer = self.host_pointer
        if not pointer:
            raise ValueError(f"{self.device.id} is not a host-memory device: its buffers cannot be viewed")
        return np.asarray(_HostMemory(self, pointer, shape, dtypes.numpy_of(dtype)))


class _HostMemory:
    """What a viewing array's .base is: holds the Buffer while the array lives."""

    def __init__(self, buffer, pointer, shape, dtype):
        self.buffer = buffer
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if int(np.prod(shape)) * dtype.itemsize > buffer.nbytes:
            raise ValueError(f"a {dtype}{list(shape)} view needs more than the buffer's {buffer.nbytes} bytes")
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "data": (pointer, False), "version": 3}


def buffer_of(array):
    """The Buffer whose bytes `array` is, exactly and entirely, else None."""
    base = array
    while base is not None and not isinstance(base, _HostMemory):
        base = getattr(base, "base", None)
    if base is None or not array.flags.c_contiguous:
        return None
    if array.ctypes.data != base.buffer.host_pointer or array.nbytes != base.buffer.nbytes:
        return None
    return base.buffer


def empty(shape, dtype="f32", device=None):
    """An uninitialised array whose memory is a buffer of `device` (None:
    kiln.device(), the default device), which must be a host-memory device
    (DeviceInfo.host_memory: c, dummy). Programs launched on it use it in
    place."""
    from .runtime import device as open_device
    if device is None:
        device = open_device()
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = max(1, int(np.prod(shape)) * dtypes.numpy_of(dtype).itemsize)
    return Buffer(device, nbytes).view(shape, dtype)
