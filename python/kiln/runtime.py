"""Runtimes, plugins and devices: kiln_runtime_*, kiln_plugin_*, kiln_device_*."""
import ctypes
from dataclasses import dataclass

from . import _lib
from ._errors import check

_L = _lib.lib
KIND_NAMES = {0: "unknown", 1: "cpu", 2: "gpu", 3: "accelerator", 4: "virtual"}
_CAN_COMPILE, _HOST_MEMORY = 1 << 0, 1 << 1


@dataclass(frozen=True)
class DeviceInfo:
    id: str
    plugin: str
    name: str
    vendor: str
    driver_version: str
    kind: str
    flags: int
    memory_bytes: int
    local_memory_bytes: int
    compute_units: int
    warp_size: int
    max_local_threads: int
    peak_gflops: float
    memory_bandwidth_gbps: float

    @property
    def can_compile(self):
        return bool(self.flags & _CAN_COMPILE)

    @property
    def host_memory(self):
        """Buffers are host memory: arrays on this device are used without copies."""
        return bool(self.flags & _HOST_MEMORY)

    @staticmethod
    def _from(s):
        t = _lib.text
        return DeviceInfo(t(s.id), t(s.plugin), t(s.name), t(s.vendor), t(s.driver_version),
                          KIND_NAMES.get(s.kind, "unknown"), s.flags, s.memory_bytes, s.local_memory_bytes,
                          s.compute_units, s.warp_size, s.max_local_threads, s.peak_gflops,
                          s.memory_bandwidth_gbps)


@dataclass(frozen=True)
class Plugin:
    name: str
    state: str      # "loaded", "skipped", "disabled"
    reason: str     # why skipped or disabled
    version: str
    library: str
    device_count: int


class Runtime:
    """The plugins a config enables, and their devices.

    Runtime()                    the config search order (docs/config.md)
    Runtime("my.json")           a config file
    Runtime(json='{"plugins": {"dummy": {"enabled": true}}}')   config text
    """

    def __init__(self, config=None, *, json=None):
        handle = _lib.c_handle()
        if json is not None:
            data = json.encode()
            check(_L.kiln_runtime_open_json(data, len(data), ctypes.byref(handle)))
        else:
            check(_L.kiln_runtime_open(None if config is None else str(config).encode(), ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_runtime_free(self._handle)
            self._handle = None

    @property
    def config_source(self):
        return _lib.text(_L.kiln_runtime_config_source(self._handle))

    def warnings(self):
        count = _lib.size_t()
        check(_L.kiln_runtime_warning_count(self._handle, ctypes.byref(count)))
        out = []
        for i in range(count.value):
            text = _lib.c_str()
            check(_L.kiln_runtime_warning(self._handle, i, ctypes.byref(text)))
            out.append(_lib.text(text.value))
        return out

    def plugins(self):
        count = _lib.size_t()
        check(_L.kiln_runtime_plugin_count(self._handle, ctypes.byref(count)))
        out = []
        for i in range(count.value):
            p = _lib.c_handle()
            check(_L.kiln_runtime_plugin(self._handle, i, ctypes.byref(p)))
            t = _lib.text
            out.append(Plugin(t(_L.kiln_plugin_name(p)), t(_L.kiln_plugin_state_name(_L.kiln_plugin_state(p))),
                              t(_L.kiln_plugin_reason(p)), t(_L.kiln_plugin_version(p)),
                              t(_L.kiln_plugin_library(p)), _L.kiln_plugin_device_count(p)))
        return out

    def devices(self):
        count = _lib.size_t()
        check(_L.kiln_runtime_device_count(self._handle, ctypes.byref(count)))
        out = []
        for i in range(count.value):
            info = _lib.sized(_lib.DeviceInfoStruct)
            check(_L.kiln_runtime_device_info(self._handle, i, ctypes.byref(info)))
            out.append(DeviceInfo._from(info))
        return out

    def device(self, id=None):
        """Opens a device: "c:0", "c" (its first device), None (the default device)."""
        return Device(self, id)


class Device:
    """An open device. Made by Runtime.device or kiln.device."""

    def __init__(self, runtime, id=None):
        handle = _lib.c_handle()
        check(_L.kiln_device_open(runtime._handle, None if id is None else id.encode(), ctypes.byref(handle)))
        self._handle = handle
        info = _lib.sized(_lib.DeviceInfoStruct)
        check(_L.kiln_device_get_info(handle, ctypes.byref(info)))
        self.info = DeviceInfo._from(info)

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_device_free(self._handle)
            self._handle = None

    @property
    def id(self):
        return self.info.id

    def __repr__(self):
        return f"<kiln.Device {self.id}: {self.info.name}>"

    def supports_unary(self, op, dtype="f32"):
        from . import dtypes
        return bool(_L.kiln_device_supports_unary(self._handle, op, dtypes.code_of(dtype)))

    def supports_binary(self, op, dtype="f32"):
        from . import dtypes
        return bool(_L.kiln_device_supports_binary(self._handle, op, dtypes.code_of(dtype)))


_default = None


def default_runtime():
    """The runtime kiln.devices() and kiln.device() use: the config search order, opened once."""
    global _default
    if _default is None:
        _default = Runtime()
    return _default


def devices(runtime=None):
    """Every exposed device of every loaded plugin."""
    return (runtime or default_runtime()).devices()


def plugins(runtime=None):
    """Every plugin the config names: loaded, skipped (with the reason) or disabled."""
    return (runtime or default_runtime()).plugins()


def device(id=None, runtime=None):
    return (runtime or default_runtime()).device(id)
