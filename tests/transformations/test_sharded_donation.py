"""Buffer donation in jit programs partitioned over several devices (``donate_argnums``
with sharded arguments): XLA takes each device's buffer of a donated sharded Array, which
is then deleted as in JAX; arguments placed on the devices for the call only are copies
and stay alive; unsafe donations (the same array twice) are skipped.

The CPU client's device count is fixed when it is created, so each test runs a script in
a fresh interpreter with 4 CPU devices (the ``run_with_devices`` fixture).
"""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

_SETUP = """
import warnings
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
x0 = np.arange(32.0, dtype=np.float32).reshape(8, 4)
def sharded(value, spec=P("x")):
    return jax.device_put(value, NamedSharding(mesh, spec))
def error(thunk):
    try:
        thunk()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "no error"
"""


def test_donated_sharded_argument_is_deleted(run_with_devices):
    out = run_with_devices(4, _SETUP + """
f = jax.jit(lambda v: v * 2 + 1, donate_argnums=0)
x = sharded(x0)
y = f(x)
np.testing.assert_array_equal(np.asarray(y), x0 * 2 + 1)
print(x.is_deleted(), y.is_deleted(), y.sharding.spec, len(y.devices()))
print(error(lambda: np.asarray(x)))
print(error(lambda: x + 1))
print(error(lambda: f(x)))
single = jnp.asarray(x0)  # one device: the error single-device donation gives
f(single)
print(single.is_deleted(), error(lambda: single + 1) == error(lambda: x + 1))
""")
    assert out == [
        "True False P('x',) 4",
        "RuntimeError: Array has been deleted with shape=float32[8,4].",
        "RuntimeError: Array has been deleted with shape=float32[8,4].",
        "RuntimeError: Array has been deleted with shape=float32[8,4].",
        "True True"]


def test_reading_a_sharded_array_does_not_block_its_donation(run_with_devices):
    """Assembling the global value on the host copies each shard: the device buffers stay
    donatable (a view would mark them shared with NumPy)."""
    out = run_with_devices(4, _SETUP + """
f = jax.jit(lambda v: v + 1, donate_argnums=0)
x = sharded(x0)
seen = np.asarray(x)
y = f(x)
print(x.is_deleted())
np.testing.assert_array_equal(seen, x0)
np.testing.assert_array_equal(np.asarray(y), x0 + 1)
""")
    assert out == ["True"]


def test_lowered_partitioned_program_carries_donation(run_with_devices):
    out = run_with_devices(4, _SETUP + """
def main(text):
    return next(line for line in text.splitlines() if "func.func public @main" in line)
x = sharded(x0)
f = jax.jit(lambda v: v * 2, donate_argnums=0)
print("single", "tf.aliasing_output = 0" in main(f.lower(x0).as_text()))
sig = main(f.lower(x).as_text())
# A result sharding left to the partitioner: a buffer donor, as JAX marks it.
print("free", "jax.buffer_donor = true" in sig, "sdy.sharding" in sig)
fixed = jax.jit(lambda v: v * 2, donate_argnums=0,
                out_shardings=NamedSharding(mesh, P("x")))
print("fixed", "tf.aliasing_output = 0" in main(fixed.lower(x).as_text()))
print("alias bytes", fixed.lower(x).compile().memory_analysis().alias_size_in_bytes)
print("kept", "donor" in main(jax.jit(lambda v: v * 2).lower(x).as_text()))
""")
    assert out == ["single True", "free True True", "fixed True", "alias bytes 128",
                   "kept False"]


def test_unsafe_or_copied_donations_leave_arguments_alive(run_with_devices):
    out = run_with_devices(4, _SETUP + """
add = jax.jit(lambda a, b: a + b, donate_argnums=(0, 1))
x = sharded(x0)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    r = add(x, x)  # the same buffers twice: not donated, and no error
np.testing.assert_array_equal(np.asarray(r), x0 * 2)
print("twice", x.is_deleted())
first = jax.jit(lambda a, b: a * b, donate_argnums=0)
a, b = sharded(x0), sharded(x0 + 1)
np.testing.assert_array_equal(np.asarray(first(a, b)), x0 * (x0 + 1))
print("not donated", a.is_deleted(), b.is_deleted())
np.testing.assert_array_equal(np.asarray(b), x0 + 1)
host = x0.copy()
s = sharded(x0)
np.testing.assert_array_equal(np.asarray(add(host, s)), x0 * 2)
print("numpy", s.is_deleted())
np.testing.assert_array_equal(host, x0)
u = jnp.asarray(x0 + 5)  # on one device: copied onto the mesh for the call
s = sharded(x0)
np.testing.assert_array_equal(np.asarray(add(u, s)), x0 * 2 + 5)
print("unsharded", u.is_deleted(), s.is_deleted())
np.testing.assert_array_equal(np.asarray(u), x0 + 5)
np.testing.assert_array_equal(np.asarray(u + 1), x0 + 6)
""")
    assert out == ["twice False", "not donated True False", "numpy True",
                   "unsharded False True"]


def test_repeated_donating_calls_keep_their_values(run_with_devices):
    out = run_with_devices(4, _SETUP + """
f = jax.jit(lambda v: v * 2 + 1, donate_argnums=0)
x, expected = sharded(x0), x0.copy()
for _ in range(20):
    previous, x = x, f(x)
    expected = expected * 2 + 1
    assert previous.is_deleted() and not x.is_deleted()
np.testing.assert_array_equal(np.asarray(x), expected)
spec = NamedSharding(mesh, P("x"))
step = jax.jit(lambda v, w: (v + w, w * 0.5), donate_argnums=(0, 1),
               out_shardings=(spec, spec))
v, w = sharded(x0), sharded(x0 + 1)
ev, ew = x0.copy(), x0 + 1
for _ in range(20):
    v, w = step(v, w)
    ev, ew = ev + ew, ew * 0.5
np.testing.assert_allclose(np.asarray(v), ev)
np.testing.assert_allclose(np.asarray(w), ew)
print("ok")
""")
    assert out == ["ok"]


# Run with `jax` or `xjax` (LIB): per case, the donation attributes of main's arguments
# and whether each donated argument was deleted.
_COMPARE = """
import re, warnings
import numpy as np
import LIB as jax, LIB.numpy as jnp
from LIB.sharding import Mesh, NamedSharding, PartitionSpec as P
warnings.simplefilter("ignore")
mesh = Mesh(np.array(jax.devices()), ("x",))
spec = NamedSharding(mesh, P("x"))
x0 = np.arange(32.0, dtype=np.float32).reshape(8, 4)
cases = [
    ("double", lambda v: v * 2, {}, [spec]),
    ("sum", lambda v: v.sum(), {}, [spec]),
    ("pair", lambda v, w: (v * 2, w + 1), {"out_shardings": (spec, None)}, [spec, spec]),
    ("fixed", lambda v, w: (w, v), {"out_shardings": (spec, spec)}, [spec, spec]),
    ("to_x", lambda v: v * 2, {"out_shardings": spec},
     [NamedSharding(mesh, P())]),
]
for name, fun, kw, shardings in cases:
    args = [jax.device_put(x0 + i, s) for i, s in enumerate(shardings)]
    f = jax.jit(fun, donate_argnums=tuple(range(len(args))), **kw)
    sig = next(l for l in f.lower(*args).as_text().splitlines() if "@main" in l)
    marks = [re.findall(r"tf\\.aliasing_output = \\d+|jax\\.buffer_donor = true", a)
             for a in sig.split("%arg")[1:]]
    f(*args)
    print(name, marks, [a.is_deleted() for a in args])
"""


def _run_lib(lib):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu", XJAX_NUM_CPU_DEVICES="4",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(_COMPARE.replace("LIB", lib))],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.splitlines()


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
def test_donation_matches_jax():
    ours = _run_lib("xjax")
    assert ours == _run_lib("jax")
    assert ours[0] == "double [['jax.buffer_donor = true']] [True]"
