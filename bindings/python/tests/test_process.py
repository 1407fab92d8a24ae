"""Process-level behaviour: how the package finds libpolyhal, how initialisation failures
surface, and a clean exit with work and objects still alive."""
import os
import subprocess
import sys

import polyhal
from polyhal import _library


def run_python(code, **environment):
    env = dict(os.environ, **environment)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=os.path.dirname(sys.executable))


def test_search_order():
    bundled = os.path.join(os.path.dirname(polyhal.__file__), "lib")
    assert _library.candidates({}) == [os.path.join(bundled, "libpolyhal.so.0"),
                                       os.path.join(bundled, "libpolyhal.so"),
                                       "libpolyhal.so.0", "libpolyhal.so"]
    # A library named explicitly is the only candidate: it is never silently replaced.
    assert _library.candidates({"POLYHAL_LIBRARY": "/opt/x/libpolyhal.so"}) == [
        "/opt/x/libpolyhal.so"]


def test_missing_library_is_an_import_error_naming_what_was_tried():
    result = run_python("import polyhal", POLYHAL_LIBRARY="/nonexistent/libpolyhal.so")
    assert result.returncode != 0
    assert "ImportError: polyhal: cannot load libpolyhal" in result.stderr
    assert "/nonexistent/libpolyhal.so: no such file" in result.stderr
    assert "POLYHAL_LIBRARY" in result.stderr


def test_unknown_backend_fails_on_first_use_with_its_reason():
    result = run_python(
        "import polyhal\n"
        "try:\n"
        "    polyhal.device_count()\n"
        "except polyhal.BackendNotFoundError as error:\n"
        "    print(error.name, '|', error.detail)\n",
        POLYHAL_BACKEND="no_such_backend")
    assert result.returncode == 0, result.stderr
    name, detail = result.stdout.split("|", 1)
    assert name.strip() == "HAL_ERROR_BACKEND_NOT_FOUND"
    assert "no_such_backend" in detail


def test_exit_with_pending_work_and_live_objects():
    # Objects still alive at exit are left to the process; a pending host function still runs
    # before the interpreter shuts down.
    result = run_python(
        "import time\n"
        "import numpy as np\n"
        "import polyhal\n"
        "s = polyhal.Stream()\n"
        "e = s.record_event()\n"
        "b = polyhal.Buffer(4096, stream=s)\n"
        "caps = polyhal.get_device_properties().capabilities\n"
        "view = np.from_dlpack(b) if polyhal.Capability.HOST_ACCESSIBLE in caps else None\n"
        "s.launch_host_func(lambda: (time.sleep(0.2), print('host function ran', flush=True)))\n",
        POLYHAL_CHECK="")  # the objects left alive on purpose are leaks to checked mode
    assert result.returncode == 0, result.stderr
    assert result.stdout == "host function ran\n"
    assert result.stderr == ""
