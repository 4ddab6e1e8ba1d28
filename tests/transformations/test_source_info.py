"""Every staged equation records the user's file, line, column and function, as JAX's
``source_info`` does."""

import contextlib
import inspect
import io
import os
import sys
import tempfile

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import ad_checkpoint
from xjax._src.jax_adapters.extend import source_info_util

HERE = os.path.abspath(__file__)


def g(x):
    y = jnp.sin(x)
    return jnp.cos(y) * x


def _first_line(fun) -> int:
    return inspect.getsourcelines(fun)[1]


def test_equations_name_the_user_line_column_and_function():
    closed = xjax.make_jaxpr(g)(1.0)
    start = _first_line(g)
    sources = [e.source_info.summary() for e in closed.jaxpr.eqns]
    assert sources == [f"{HERE}:{start + 1}:8 (g)", f"{HERE}:{start + 2}:11 (g)",
                       f"{HERE}:{start + 2}:11 (g)"]


def test_pretty_print_with_source_info_aligns_the_comments():
    text = xjax.make_jaxpr(g)(1.0).pretty_print(source_info=True)
    start = _first_line(g)
    lines = text.splitlines()
    assert lines[1] == f"    b:f32[] = sin a     # {HERE}:{start + 1}:8 (g)"
    assert lines[3] == f"    d:f32[] = mul c a   # {HERE}:{start + 2}:11 (g)"
    assert "#" not in str(xjax.make_jaxpr(g)(1.0))  # only when asked for


def test_print_saved_residuals_names_where_each_residual_was_made():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ad_checkpoint.print_saved_residuals(g, 1.0)
    start = _first_line(g)
    assert f"output of sin from {HERE}:{start + 2}:11 (g)" in out.getvalue()
    assert "unknown" not in out.getvalue()


def test_transformed_equations_keep_the_source_of_the_equation_they_came_from():
    closed = xjax.make_jaxpr(xjax.grad(g))(1.0)
    start = _first_line(g)
    lines = {e.source_info.line for e in closed.jaxpr.eqns if e.source_info is not None}
    assert lines <= {start + 1, start + 2} and lines
    assert all(e.source_info is not None and e.source_info.function == "g"
               for e in closed.jaxpr.eqns)
    inner = xjax.jit(g)
    nested = xjax.make_jaxpr(lambda x: inner(x) + 1)(1.0)
    call = nested.jaxpr.eqns[0]
    assert call.primitive.name == "jit"
    assert [e.source_info.function for e in call.params["jaxpr"].jaxpr.eqns] == ["g"] * 3


def test_registered_library_paths_are_not_user_code():
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fake_library_for_source_info.py")
        with open(path, "w") as f:
            f.write("import xjax.numpy as jnp\n\ndef helper(x):\n    return jnp.sin(x)\n")
        sys.path.insert(0, folder)
        try:
            import fake_library_for_source_info as library
            before = xjax.make_jaxpr(library.helper)(1.0).jaxpr.eqns[0].source_info
            assert before.file == path and before.function == "helper"
            source_info_util.register_exclusion(folder)

            def user(x):
                return library.helper(x)
            after = xjax.make_jaxpr(user)(1.0).jaxpr.eqns[0].source_info
            assert after.file == HERE and after.function.endswith(".user")
        finally:
            sys.path.remove(folder)
            sys.modules.pop("fake_library_for_source_info", None)


def test_name_stack_scopes_are_recorded():
    def f(x):
        with source_info_util.extend_name_stack("layer1"):
            return jnp.sin(x)
    eqn = xjax.make_jaxpr(f)(1.0).jaxpr.eqns[0]
    assert eqn.source_info.name_stack == "layer1"
    assert source_info_util.summarize(eqn.source_info).endswith(".<locals>.f)")


LOSS_SOURCE = """
def loss(w, x):
    h = numpy_module.tanh(x @ w)
    return numpy_module.sum(h * h)
"""


def test_same_source_comments_as_jax():
    jax = pytest.importorskip("jax")
    jax_numpy = pytest.importorskip("jax.numpy")
    w, x = np.ones((3, 2), np.float32), np.ones((4, 3), np.float32)
    texts = []
    for module, numpy_module in ((jax, jax_numpy), (xjax, jnp)):
        namespace = {"numpy_module": numpy_module}
        exec(compile(LOSS_SOURCE, "<loss source>", "exec"), namespace)
        texts.append(module.make_jaxpr(namespace["loss"])(w, x).pretty_print(source_info=True))
    expected, got = texts
    assert "# <loss source>:3:8 (loss)" in got
    assert got == expected
