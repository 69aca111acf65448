"""The tuning database (kiln_tuning_db_*): what `kiln cache` lists, exports
and imports."""
import ctypes
from dataclasses import dataclass

from . import _lib
from ._errors import check

_L = _lib.lib


@dataclass(frozen=True)
class TuningEntry:
    id: int
    kernel_hash: str
    kernel_name: str
    device_id: str
    device_name: str
    sequence: str      # "" = the untuned kernel won
    best_ns: int
    baseline_ns: int
    candidates_measured: int


class TuningDb:
    """TuningDb(path) or TuningDb(runtime=rt) (its config's tuning_db)."""

    def __init__(self, path=None, runtime=None):
        if path is None and runtime is None:
            from .runtime import default_runtime
            runtime = default_runtime()
        handle = _lib.c_handle()
        check(_L.kiln_tuning_db_open(runtime._handle if runtime else None,
                                     None if path is None else str(path).encode(), ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _L.kiln_tuning_db_free(self._handle)
            self._handle = None

    @property
    def path(self):
        return _lib.text(_L.kiln_tuning_db_path(self._handle))

    def entries(self):
        count = _lib.size_t()
        check(_L.kiln_tuning_db_list(self._handle, ctypes.byref(count)))
        out = []
        t = _lib.text
        for i in range(count.value):
            e = _lib.sized(_lib.TuningEntryStruct)
            check(_L.kiln_tuning_db_entry(self._handle, i, ctypes.byref(e)))
            out.append(TuningEntry(e.id, t(e.kernel_hash), t(e.kernel_name), t(e.device_id), t(e.device_name),
                                   t(e.sequence), e.best_ns, e.baseline_ns, e.candidates_measured))
        return out

    def export(self):
        """Every entry with its candidates, as JSON text."""
        pointer = ctypes.c_void_p()
        check(_L.kiln_tuning_db_export(self._handle, ctypes.byref(pointer)))
        return _lib.take_string(pointer)

    def import_json(self, text):
        """Stores the entries of an export; returns how many."""
        data = text.encode()
        count = _lib.size_t()
        check(_L.kiln_tuning_db_import(self._handle, data, len(data), ctypes.byref(count)))
        return count.value
