"""shard_map and smap: per-block semantics against NumPy on a 2x2 abstract mesh, against JAX
on one device, and against JAX on 4 CPU devices (subprocesses)."""

import os
import subprocess
import sys
from functools import partial

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec as P

MESH = AbstractMesh((2, 2), ("x", "y"))
X = np.arange(48.0, dtype=np.float32).reshape(4, 12)
sm = partial(xjax.shard_map, mesh=MESH)


def blocks(x, rows, cols):
    """x split into a rows x cols grid of blocks: out[i][j]."""
    return [np.split(r, cols, axis=1) for r in np.split(x, rows, axis=0)]


def test_split_and_concat():
    np.testing.assert_array_equal(sm(lambda a: a, in_specs=P("x", "y"),
                                     out_specs=P("x", "y"))(X), X)
    # out_specs with the axes swapped: block (i, j) lands at (j, i)
    b = blocks(X, 2, 2)
    want = np.block([[b[0][0], b[1][0]], [b[0][1], b[1][1]]])
    np.testing.assert_array_equal(sm(lambda a: a, in_specs=P("x", "y"),
                                     out_specs=P("y", "x"))(X), want)
    # a dimension over two axes, major to minor as listed
    got = sm(lambda a: a + 100 * lax.axis_index("x") + 10 * lax.axis_index("y"),
             in_specs=P(("y", "x")), out_specs=P(("y", "x")))(X)
    rows = np.split(X, 4)  # row block k = y * 2 + x
    want = np.concatenate([r + 100 * (k % 2) + 10 * (k // 2) for k, r in enumerate(rows)])
    np.testing.assert_array_equal(got, want)
    # replicated input, tiled output
    np.testing.assert_array_equal(sm(lambda a: a * 2, in_specs=P(), out_specs=P("x"))(X),
                                  np.concatenate([X * 2, X * 2]))


def test_collectives_by_mesh_axis():
    b = blocks(X, 2, 2)
    got = sm(lambda a: lax.psum(a, "x"), in_specs=P("x", "y"), out_specs=P(None, "y"))(X)
    np.testing.assert_array_equal(got, np.concatenate([b[0][0] + b[1][0],
                                                       b[0][1] + b[1][1]], axis=1))
    got = sm(lambda a: lax.psum(a.sum(), ("x", "y")), in_specs=P("x", "y"), out_specs=P())(X)
    np.testing.assert_allclose(got, X.sum())
    got = sm(lambda a: lax.all_gather(a, "x", tiled=True), in_specs=P("x", "y"),
             out_specs=P(None, "y"), check_vma=False)(X)
    np.testing.assert_array_equal(got, X)
    got = sm(lambda a: lax.ppermute(a, "x", [(0, 1), (1, 0)]), in_specs=P("x", "y"),
             out_specs=P("x", "y"))(X)
    np.testing.assert_array_equal(got, np.concatenate([X[2:], X[:2]]))
    got = sm(lambda a: lax.pmean(a, "y"), in_specs=P("x", "y"), out_specs=P("x"))(X)
    np.testing.assert_allclose(got, np.concatenate([(b[i][0] + b[i][1]) / 2 for i in (0, 1)]))
    # a replicated value summed over an axis counts once per device
    np.testing.assert_array_equal(sm(lambda a: lax.psum(a, "x"), in_specs=P(),
                                     out_specs=P())(X), 2 * X)


def test_pytrees_and_partial_manual_axes():
    out = sm(lambda a, t: {"s": a + t["u"], "n": lax.psum(t["v"], "x")},
             in_specs=(P("x"), {"u": P("x"), "v": P()}),
             out_specs={"s": P("x"), "n": P()})(X, {"u": X, "v": np.ones(3, np.float32)})
    np.testing.assert_array_equal(out["s"], 2 * X)
    np.testing.assert_array_equal(out["n"], 2 * np.ones(3))
    # only 'x' manual: blocks are split over x, whole over y
    got = sm(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P(),
             axis_names={"x"})(X)
    np.testing.assert_array_equal(got, X[:2] + X[2:])
    with pytest.raises(NameError):
        sm(lambda a: lax.psum(a, "y"), in_specs=P("x"), out_specs=P(), axis_names={"x"})(X)


def test_check_vma():
    with pytest.raises(ValueError, match="replicated across mesh axis 'y'"):
        sm(lambda a: a, in_specs=P("x", "y"), out_specs=P("x"))(X)
    with pytest.raises(ValueError, match=r"only varying across mesh axes \{\} and not \{x,y\}"):
        sm(lambda a: a, in_specs=P("x", "y"), out_specs=P())(X)
    # without the check, an unmapped output is the first device's along that axis
    got = sm(lambda a: a + lax.axis_index("x"), in_specs=P("x", "y"), out_specs=P(None, "y"),
             check_vma=False)(X)
    np.testing.assert_array_equal(got, X[:2])


def test_spec_errors():
    with pytest.raises(ValueError, match="not evenly divisible"):
        sm(lambda a: a, in_specs=P("x"), out_specs=P("x"))(np.arange(3.0))
    with pytest.raises(ValueError, match="total size 4"):
        sm(lambda a: a, in_specs=P(("x", "y")), out_specs=P("x"))(np.arange(6.0))
    with pytest.raises(ValueError, match="in_specs entry which is too long"):
        sm(lambda a: a, in_specs=P("x", None, None), out_specs=P("x"))(X)
    with pytest.raises(ValueError, match="out_specs entry which is too long"):
        sm(lambda a: a.sum(), in_specs=P("x"), out_specs=P("x"))(X)
    with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
        sm(lambda a: a, in_specs=P("z"), out_specs=P("x"))(X)
    with pytest.raises(TypeError, match="pytree of `jax.sharding.PartitionSpec`"):
        sm(lambda a: a, in_specs="x", out_specs=P("x"))(X)
    with pytest.raises(TypeError, match="it was None"):
        sm(lambda a: a, in_specs=None, out_specs=P("x"))(X)
    with pytest.raises(TypeError, match="it was `None` when"):
        sm(lambda a: a, out_specs=P("x"))(X)
    with pytest.raises(ValueError, match="tree prefix"):
        sm(lambda a: a, in_specs=(P("x"), P("x")), out_specs=P("x"))(X)
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        xjax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P("x"))(X)
    with pytest.raises(ValueError, match="subset"):
        sm(lambda a: a, in_specs=P("x"), out_specs=P("x"), axis_names={"q"})(X)
    explicit = AbstractMesh((2,), ("x",), (AxisType.Explicit,))
    with pytest.raises(NotImplementedError, match="shardings in types"):
        xjax.shard_map(lambda a: a, mesh=explicit, out_specs=P("x"))(X)


def test_transformations_compose():
    f = sm(lambda a: lax.psum((a ** 2).sum(), ("x", "y")), in_specs=P("x", "y"),
           out_specs=P())
    np.testing.assert_allclose(xjax.jit(f)(X), (X ** 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(xjax.grad(f)(X), 2 * X, rtol=1e-6)
    g = sm(lambda a: jnp.sin(a) * lax.axis_index("x"), in_specs=P("x", "y"),
           out_specs=P("x", "y"))
    want = np.cos(X) * np.repeat([0.0, 1.0], 2)[:, None]
    np.testing.assert_allclose(xjax.grad(lambda z: g(z).sum())(X), want, rtol=1e-6)
    batch = np.arange(24.0, dtype=np.float32).reshape(3, 4, 2)
    h = sm(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P())
    np.testing.assert_array_equal(xjax.vmap(h)(batch), batch[:, :2] + batch[:, 2:])
    np.testing.assert_array_equal(xjax.jit(xjax.vmap(h))(batch), batch[:, :2] + batch[:, 2:])


def test_decorator_and_smap():
    @partial(xjax.shard_map, mesh=MESH, in_specs=P("x"), out_specs=P("x"))
    def double(a):
        return a * 2
    np.testing.assert_array_equal(double(X), 2 * X)
    mesh = xjax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    with xjax.set_mesh(mesh):
        f = xjax.smap(lambda a: a + lax.axis_index("x"), in_axes=0, out_axes=0,
                      axis_name="x")
        np.testing.assert_array_equal(f(X), X)
        with pytest.raises(TypeError, match="in_axes was not specified"):
            xjax.smap(lambda a: a, out_axes=0, axis_name="x")(X)


def test_matches_jax_on_one_device():
    jax = pytest.importorskip("jax")
    jmesh = jax.make_mesh((1, 1), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    mesh = Mesh(np.array(xjax.devices()[:1]).reshape(1, 1), ("x", "y"))
    cases = [
        (lambda L: lambda a: L.psum(a, ("x", "y")) * 2, P("x", "y"), P()),
        (lambda L: lambda a: a + L.axis_index("y"), P(None, "y"), P(None, "y")),
        (lambda L: lambda a: L.all_gather(a, "x", tiled=True), P("x"), P("x")),
    ]
    for make, ins, outs in cases:
        jp = jax.P(*ins.partitions), jax.P(*outs.partitions)
        want = jax.shard_map(make(jax.lax), mesh=jmesh, in_specs=jp[0], out_specs=jp[1])(X)
        got = xjax.shard_map(make(lax), mesh=mesh, in_specs=ins, out_specs=outs)(X)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def _start_script(lib):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    env.pop("XJAX_NUM_CPU_DEVICES", None)
    script = os.path.join(os.path.dirname(__file__), "spmd_compare_script.py")
    return subprocess.Popen([sys.executable, script, lib], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _lines(proc):
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-2000:]
    return out.splitlines()


def test_matches_jax_on_four_devices():
    """shard_map, pmap, smap and NamedSharding on a 2x2 (and 4) device mesh: every value and
    error class equal to JAX's (both run at once, in subprocesses)."""
    pytest.importorskip("jax")
    procs = [_start_script("jax"), _start_script("xjax")]
    want, got = [_lines(p) for p in procs]
    assert want[0] == "devices 4" and got[0] == "devices 4"
    assert len(want) == len(got) > 40
    for w, g in zip(want, got, strict=True):
        assert g == w


def test_none_specs_replicate_inputs_and_match_empty_outputs():
    f = sm(lambda a, b: (a + b.sum(), None), in_specs=(P("x", "y"), None),
           out_specs=(P("x", "y"), None))
    out, nothing = f(X, np.ones(3, np.float32))
    np.testing.assert_array_equal(out, X + 3)
    assert nothing is None
    with pytest.raises(ValueError, match="None where the output has arrays"):
        sm(lambda a: (a, a), in_specs=P("x", "y"), out_specs=(P("x", "y"), None))(X)
