"""kiln.devices, plugins, the runtime's config, and finding libkiln."""
import os
import subprocess
import sys

import pytest

import kiln


def test_the_installed_package_is_the_one_tested():
    expected = os.environ.get("KILN_TEST_PACKAGE_DIR")
    if not expected:
        pytest.skip("KILN_TEST_PACKAGE_DIR not set (run outside the install test)")
    assert os.path.dirname(kiln.__file__) == expected
    # ... and it found the installed libkiln on its own.
    assert os.path.realpath(kiln.library_path).startswith(os.path.realpath(os.path.join(expected, "..", "..", "..")))


def test_version():
    assert kiln.__version__.count(".") == 2


def test_devices_and_plugins(runtime):
    ids = [d.id for d in runtime.devices()]
    assert "c:0" in ids and "dummy:0" in ids
    c0 = next(d for d in runtime.devices() if d.id == "c:0")
    assert c0.plugin == "c" and c0.kind == "cpu" and c0.can_compile and c0.host_memory
    plugins = {p.name: p for p in runtime.plugins()}
    assert plugins["c"].state == "loaded" and plugins["c"].reason == "" and plugins["c"].device_count == 1
    assert plugins["dummy"].state == "loaded"
    for p in plugins.values():
        assert p.state in ("loaded", "skipped", "disabled")
        if p.state != "loaded":
            assert p.reason, f"{p.name} is {p.state} without a reason"
    assert "<config text>" in runtime.config_source
    assert isinstance(runtime.warnings(), list)


def test_default_runtime_lists_c0():
    assert "c:0" in [d.id for d in kiln.devices()]
    assert any(p.name == "c" for p in kiln.plugins())


def test_bad_device_id(runtime):
    with pytest.raises(kiln.Error) as e:
        runtime.device("c:42")
    assert e.value.code_name == "not found" and "c:42" in str(e.value)


def test_bad_config_names_line_and_column():
    with pytest.raises(kiln.Error) as e:
        kiln.Runtime(json='{"plugins": {\n  "c": {"enabled": nope}}}')
    assert e.value.code_name == "config error" and "<config text>:2:" in str(e.value)


def test_missing_library_is_a_clear_error():
    env = dict(os.environ, KILN_LIBRARY="/nonexistent/libkiln.so")
    result = subprocess.run([sys.executable, "-c", "import kiln"], env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "LibraryNotFoundError" in result.stderr and "KILN_LIBRARY=/nonexistent/libkiln.so" in result.stderr


def test_struct_layouts_match_kiln_h():
    """The sizes kiln.h pins for LP64 (its KILN_*_T_SIZE static asserts)."""
    import ctypes
    from kiln import _lib
    assert ctypes.sizeof(_lib.DeviceInfoStruct) == 104
    assert ctypes.sizeof(_lib.ParamInfoStruct) == 24
    assert ctypes.sizeof(_lib.CompileOptionsStruct) == 24
    assert ctypes.sizeof(_lib.LaunchArgStruct) == 24
    assert ctypes.sizeof(_lib.TimingStruct) == 32
    assert ctypes.sizeof(_lib.TuneOptionsStruct) == 64
    assert ctypes.sizeof(_lib.TuningEntryStruct) == 80
