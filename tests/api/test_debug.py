"""xjax.debug: log (eager, under jit and vmap), the effect types, and visualize_sharding's
single-device diagram (the expected texts are JAX 0.10.2's, drawn by rich)."""

import contextlib
import io
import logging

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import debug


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def records():
    handler = _Records()
    log = logging.getLogger("xjax.debug")
    log.addHandler(handler)
    yield handler.records
    log.removeHandler(handler)


def test_names_match_jax():
    pytest.importorskip("jax")
    import jax.debug as jd
    for name in (n for n in dir(jd) if not n.startswith("_")):
        assert hasattr(debug, name), name


def test_log_eager(records):
    debug.log("x = {}", jnp.arange(3)); line = _line()  # noqa: E702
    (r,) = records
    assert r.getMessage() == "x = [0 1 2]"
    assert (r.levelno, r.name) == (logging.INFO, "xjax.debug")
    assert r.pathname == __file__ and r.lineno == line and r.filename == "test_debug.py"


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_log_under_jit_runs_each_call(records, capsys):
    def f(x):
        debug.log("y = {y}", y=x + 1)
        return x * 2

    g = xjax.jit(f)
    g(jnp.arange(3.0))
    g(jnp.arange(3.0) + 10)
    assert [r.getMessage() for r in records] == ["y = [1. 2. 3.]", "y = [11. 12. 13.]"]
    assert all(r.filename == "test_debug.py" for r in records)
    assert capsys.readouterr().out == ""  # logged, not printed


def test_log_vmap_two_call_form_and_printoptions(records):
    xjax.vmap(lambda x: debug.log(ordered=True)("v={}", x))(jnp.arange(2))
    with np.printoptions(precision=2):
        xjax.jit(lambda x: debug.log("{}", x))(jnp.array([1 / 3]))
    xjax.jit(lambda x: debug.log("{}", x))(jnp.array([1 / 3]))
    assert [r.getMessage() for r in records] == ["v=0", "v=1", "[0.33]", "[0.33333334]"]


def test_log_format_check():
    with pytest.raises(ValueError, match=r"Unused positional arguments to `jax.debug.print`: "
                                         r"\[3\]"):
        debug.log("plain", 3)
    with pytest.raises(ValueError, match=r"Unused keyword arguments .*\['y'\]. You may be"):
        debug.log("{}", 1, y=2)
    with pytest.raises(IndexError):
        debug.log("{} {}", 1)
    with pytest.raises(TypeError, match="two-call form"):
        debug.log(None, 1)


def test_log_skip_format_check_appends(records):
    debug.log("values", 1, 2, skip_format_check=True)
    assert records[0].getMessage() == "values 1 2"


def test_log_bypasses_logger_level_as_jax(records):
    logging.getLogger("xjax.debug").setLevel(logging.WARNING)
    try:
        debug.log("still {}", 1)
    finally:
        logging.getLogger("xjax.debug").setLevel(logging.NOTSET)
    assert [r.getMessage() for r in records] == ["still 1"]


def _jax_log_messages(jax, jnp_, fn):
    got = []

    class H(logging.Handler):
        def emit(self, record):
            got.append((record.getMessage(), record.levelno))

    h = H()
    logging.getLogger("jax._src.debugging").addHandler(h)
    try:
        fn(jax, jnp_)
    finally:
        logging.getLogger("jax._src.debugging").removeHandler(h)
    return got


def test_log_matches_jax(records):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    def program(j, np_):
        j.debug.log("a={} b={b:.3f}", np_.arange(4), b=np_.float32(2.5))

        @j.jit
        def f(x):
            j.debug.log("x*2 = {}", x * 2)
            return x

        f(np_.linspace(0, 1, 3))

    theirs = _jax_log_messages(jax, jjnp, program)
    program(xjax, jnp)
    assert [(r.getMessage(), r.levelno) for r in records] == theirs


def test_effect_types():
    assert str(debug.DebugEffect()) == "Debug"
    assert str(debug.OrderedDebugEffect()) == "OrderedDebug"
    assert not issubclass(debug.OrderedDebugEffect, debug.DebugEffect)


_BOX_4 = "┌───────┐\n│ CPU 0 │\n└───────┘\n"
_BOX_1 = "┌───────────────────────┐\n│         CPU 0         │\n└───────────────────────┘\n"
_BLANK_23 = "│" + " " * 23 + "│\n"
_BOX_8x8 = ("┌" + "─" * 23 + "┐\n" + _BLANK_23 * 4 + "│         CPU 0         │\n"
            + _BLANK_23 * 4 + "└" + "─" * 23 + "┘\n")
_BLANK_78 = "│" + " " * 78 + "│\n"
_BOX_2x100 = ("┌" + "─" * 78 + "┐\n" + _BLANK_78 * 4 + "│" + " " * 36 + "CPU 0" + " " * 37
              + "│\n" + _BLANK_78 * 4 + "└" + "─" * 78 + "┘\n")
_BOX_3x4_half = ("┌─────────────┐\n│             │\n│    CPU 0    │\n│             │\n"
                 "│             │\n└─────────────┘\n")


def _visualized(x, **kwargs):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        debug.visualize_array_sharding(x, **kwargs)
    return buf.getvalue()


@pytest.mark.parametrize("shape,kwargs,expected", [
    ((4,), {}, _BOX_4), ((16,), {}, _BOX_4), ((1,), {}, _BOX_1), ((8, 8), {}, _BOX_8x8),
    ((2, 100), {}, _BOX_2x100), ((3, 4), {"scale": 0.5}, _BOX_3x4_half),
    ((16,), {"min_width": 3}, "┌─────┐\n│CPU 0│\n└─────┘\n"),
])
def test_visualize_single_device(shape, kwargs, expected):
    assert _visualized(jnp.ones(shape), **kwargs) == expected


def test_visualize_under_jit_and_errors(capsys):
    xjax.jit(lambda x: (debug.visualize_array_sharding(x), x)[1])(jnp.ones(4))
    assert capsys.readouterr().out == _BOX_4
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        debug.visualize_array_sharding(jnp.ones((2, 3, 4)))

    class TwoDevices:
        device_set = {object(), object()}

    with pytest.raises(NotImplementedError, match="2 devices"):
        debug.visualize_sharding((4,), TwoDevices())
    with pytest.raises(TypeError, match="device_set"):
        debug.visualize_sharding((4,), object())


def test_visualize_matches_jax():
    jax = pytest.importorskip("jax")
    pytest.importorskip("rich")  # JAX draws with rich
    import jax.numpy as jjnp
    for shape in [(4,), (1,), (8, 8), (2, 100), (100, 2), (5, 37)]:
        for kwargs in [{}, {"scale": 0.4}, {"max_width": 30}]:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                jax.debug.visualize_array_sharding(jjnp.ones(shape), **kwargs)
            assert _visualized(jnp.ones(shape), **kwargs) == buf.getvalue(), (shape, kwargs)
