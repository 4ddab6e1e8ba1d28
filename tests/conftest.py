import os
import subprocess
import sys
import textwrap

import pytest

import xjax

# Every jaxpr built during the tests is type-checked, and impls must return their aval's dtype.
xjax.config.update("xjax_check_jaxprs", True)


def run_on_devices(count: int, code: str, timeout: int = 300) -> list[str]:
    """``code`` run in a fresh interpreter whose CPU client has ``count`` devices (fixed
    when a client is created, hence a new process); its stdout lines."""
    env = dict(os.environ)
    env["XJAX_NUM_CPU_DEVICES"] = str(count)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # import what we import
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()


@pytest.fixture(scope="session")
def run_with_devices():
    """``run(count, code, timeout=300) -> [stdout lines]``: ``run_on_devices`` as a
    fixture (session-wide: module fixtures use it too)."""
    return run_on_devices
