import os
import subprocess
import sys
import textwrap

import pytest

import xjax

# Every jaxpr built during the tests is type-checked, and impls must return their aval's dtype.
xjax.config.update("xjax_check_jaxprs", True)


@pytest.fixture
def run_with_devices():
    """``run(count, code) -> [stdout lines]``: ``code`` run in a fresh interpreter whose
    CPU client has ``count`` devices (fixed when a client is created, hence a new process)."""
    def run(count: int, code: str) -> list[str]:
        env = dict(os.environ)
        env["XJAX_NUM_CPU_DEVICES"] = str(count)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # import what we import
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().splitlines()
    return run
