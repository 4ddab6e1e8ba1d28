"""The import hook (``xjax.as_jax``, ``python -m xjax.run``, ``pytest -p xjax.as_jax``) and
the ``jax._src`` adapters libraries import through it.

Each check runs in a fresh interpreter: the hook changes what ``import jax`` means for the
rest of a process, and this one may have a real JAX installed (the ``compare`` extra).
"""

import subprocess
import sys
import textwrap

import pytest


def run_with_hook(code: str, *args, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "xjax.run", "-c", textwrap.dedent(code),
                             *args], capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_jax_modules_are_xjax_modules():
    run_with_hook("""
        import jax, jax.numpy as jnp, jax.lax, jax.scipy.special, jax.extend.core
        import xjax
        assert jax.numpy is xjax.numpy and jax.lax is xjax.lax
        assert jax.scipy.special is xjax.scipy.special
        assert jax.jit is xjax.jit and jax.Array is xjax.Array
        assert jax.interpreters.xla is xjax.interpreters.xla  # bound by ``import jax``
        assert jnp.sum(jnp.arange(4)).item() == 6
        # the module objects keep xjax's names and specs
        assert jnp.__name__ == "xjax.numpy" and jnp.__spec__.name == "xjax.numpy"
    """)


def test_jax_reports_the_jax_version_xjax_matches():
    out = run_with_hook("""
        import jax, jax.version, jaxlib, xjax
        print(jax.__version__, jax.__version_info__, jax.version.__version__,
              jaxlib.__version__, xjax.__version__)
    """).stdout.split()
    assert out[0] == "0.10.2" and out[1:4] == ["(0,", "10,", "2)"]
    assert out[4] == "0.10.2" and out[5] == "0.10.2"
    assert out[6] != "0.10.2"  # xjax's own version is its own


def test_a_missing_jax_module_fails_to_import_as_a_missing_module():
    result = run_with_hook("import jax.no_such_module", check=False)
    assert "ModuleNotFoundError: No module named 'jax.no_such_module'" in result.stderr
    result = run_with_hook("import jax._src.no_such_module", check=False)
    assert "ModuleNotFoundError" in result.stderr


def test_the_hook_refuses_a_real_jax_imported_before_it():
    code = "import jax, xjax.as_jax"
    try:
        import importlib.util
        real = importlib.util.find_spec("jax") is not None
    except ValueError:
        real = False
    if not real:
        pytest.skip("no real JAX installed (the compare extra)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0
    assert "jax was imported before xjax's import hook was installed" in result.stderr


def test_run_runs_scripts_and_modules_with_their_arguments(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import sys, jax\nprint(jax.numpy.__name__, sys.argv[1:])\n")
    out = subprocess.run([sys.executable, "-m", "xjax.run", str(script), "--steps", "3"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.strip() == "xjax.numpy ['--steps', '3']"
    (tmp_path / "tool.py").write_text("import sys, jax\nprint(jax.lax.__name__, sys.argv[1:])\n")
    out = subprocess.run([sys.executable, "-m", "xjax.run", "-m", "tool", "x"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.strip() == "xjax.lax ['x']"
    usage = subprocess.run([sys.executable, "-m", "xjax.run"], capture_output=True, text=True,
                           timeout=300)
    assert usage.returncode == 2 and "usage: python -m xjax.run" in usage.stderr


def test_pytest_plugin_installs_the_hook_in_every_worker(tmp_path):
    (tmp_path / "test_uses_jax.py").write_text(textwrap.dedent("""
        import jax, pytest

        @pytest.mark.parametrize("i", range(4))
        def test_is_xjax(i):
            assert jax.numpy.__name__ == "xjax.numpy"
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "xjax.as_jax", "-n", "2",
                             "-p", "no:cacheprovider", str(tmp_path)], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_traceback_util_removes_registered_library_frames(tmp_path):
    library = tmp_path / "mylib.py"
    library.write_text(textwrap.dedent("""
        import jax._src.traceback_util as traceback_util
        traceback_util.register_exclusion(__file__)

        def inner(x):
            raise ValueError("bad x")

        @traceback_util.api_boundary
        def entry(x):
            return inner(x)
    """))
    code = """
        import sys, traceback
        sys.path.insert(0, sys.argv[1])
        import jax, mylib
        for mode in ("auto", "off"):
            jax.config.update("jax_traceback_filtering", mode)
            try:
                mylib.entry(1)
            except ValueError as e:
                files = [f.filename for f in traceback.extract_tb(e.__traceback__)]
                print(mode, sum(f.endswith("mylib.py") for f in files))
    """
    out = run_with_hook(code, str(tmp_path)).stdout.split()
    assert out == ["auto", "0", "off", "2"]


def test_traceback_filtering_modes_hide_xjax_frames_as_jax_hides_its_own(tmp_path):
    # An error raised in user code under jit, leaving a library's api_boundary: JAX's
    # frames (here xjax's) go, the user's stay, in each of JAX's modes.
    library = tmp_path / "mylib.py"
    library.write_text(textwrap.dedent("""
        import jax._src.traceback_util as traceback_util

        @traceback_util.api_boundary
        def entry(f, x):
            return jax.jit(f)(x)
        import jax
    """))
    code = """
        import sys, traceback
        sys.path.insert(0, sys.argv[1])
        import jax, mylib
        from jax._src import traceback_util

        def user(x):
            raise ValueError("bad x")

        def run():
            try:
                mylib.entry(user, 1.0)
            except ValueError as e:
                return e
        def shown(tb):
            return [f.f_code.co_filename.rsplit("/", 1)[-1] for f, _ in traceback.walk_tb(tb)
                    if "__tracebackhide__" not in f.f_locals]
        for mode in ("quiet_remove_frames", "remove_frames", "tracebackhide", "off"):
            jax.config.update("jax_traceback_filtering", mode)
            e = run()
            files = shown(e.__traceback__)
            xjax_frames = sum("xjax" in f.f_code.co_filename
                              for f, _ in traceback.walk_tb(e.__traceback__))
            print(mode, ",".join(files), xjax_frames > 0,
                  type(e.__cause__).__name__, bool(getattr(e, "__notes__", None)))
    """
    lines = run_with_hook(code, str(tmp_path)).stdout.splitlines()
    user_frames = "<string>,mylib.py,<string>"
    assert lines[0] == f"quiet_remove_frames {user_frames} False NoneType True"
    assert lines[1] == f"remove_frames {user_frames} False UnfilteredStackTrace False"
    assert lines[2] == f"tracebackhide {user_frames} True NoneType False"
    assert lines[3].startswith("off <string>,mylib.py,") and lines[3].endswith(
        "True NoneType False")


def test_replacing_backend_compile_and_load_routes_compiles_through_it():
    # Chex's restrict_backends replaces this function to forbid compiling for a platform.
    out = run_with_hook("""
        import jax, jax.numpy as jnp
        from jax._src import compiler
        seen = []
        original = compiler.backend_compile_and_load

        def counting(backend, *args, **kwargs):
            seen.append(backend.platform)
            return original(backend, *args, **kwargs)

        compiler.backend_compile_and_load = counting
        assert float(jax.jit(lambda x: x * 2 + 1)(jnp.float32(3))) == 7.0
        compiler.backend_compile_and_load = original
        jax.jit(lambda x: x * 3 - 1)(jnp.float32(3))
        print(seen)
    """).stdout.strip()
    assert out == "['cpu']"


def test_xla_bridge_backends_lists_initialized_clients():
    out = run_with_hook("""
        import jax
        from jax._src import xla_bridge
        before = dict(xla_bridge._backends)
        jax.devices()  # creates the CPU client (eager NumPy-backed work may not)
        print(sorted(before), sorted(xla_bridge._backends))
    """).stdout.strip()
    assert out == "[] ['cpu']"


def test_opaque_trace_state_tells_traces_apart():
    run_with_hook("""
        import jax, jax.extend.core as core
        outer = core.get_opaque_trace_state(convention="flax")
        assert outer == core.get_opaque_trace_state(convention="flax")
        seen = []

        def f(x):
            seen.append(core.get_opaque_trace_state(convention="flax"))
            seen.append(core.find_top_trace((x,)))
            return x * 2

        jax.jit(f)(1.0)
        assert seen[0] != outer
        assert seen[1] is not None and seen[1].main is seen[1]
        try:
            hash(outer)
        except TypeError:
            pass
        else:
            raise AssertionError("OpaqueTraceState must be unhashable, as JAX's")
        assert core.valid_jaxtype(1.0) and not core.valid_jaxtype("a")
    """)
