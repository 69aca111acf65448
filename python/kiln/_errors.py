"""kiln.Error: a C API status as a Python exception."""
from . import _lib


class Error(Exception):
    """A failed kiln call. `code` is the kiln_code_t value, `code_name` its name
    ("parse error", ...), `line`/`column` the IR text position (0 unknown),
    `op` the kernel op at fault (-1 none)."""

    def __init__(self, message, code=9, line=0, column=0, op=-1):
        super().__init__(message)
        self.message = message
        self.code = code
        self.code_name = _lib.text(_lib.lib.kiln_code_name(code))
        self.line = line
        self.column = column
        self.op = op


def check(status):
    """Raises the status (and frees it) unless it is success (NULL)."""
    if not status:
        return
    lib = _lib.lib
    try:
        error = Error(_lib.text(lib.kiln_status_message(status)), lib.kiln_status_code(status),
                      lib.kiln_status_line(status), lib.kiln_status_column(status), lib.kiln_status_op(status))
    finally:
        lib.kiln_status_free(status)
    raise error
