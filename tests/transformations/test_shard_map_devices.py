"""shard_map and pmap across several CPU devices (issue 17): one ``shard_map`` equation,
lowered to ``sdy.manual_computation`` with XLA's collectives, run once over the mesh. Each
result is checked against the same computation written without shard_map on one device
(NumPy or unsharded xjax), and under every transformation (jit, grad, jvp, vmap).

Each test runs a script in a fresh interpreter with ``XJAX_NUM_CPU_DEVICES`` set (the CPU
client's device count is fixed when it is created).
"""

_SETUP = """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import Mesh, PartitionSpec as P
from xjax._src.runtime.sharded import ShardedBuffer
mesh = Mesh(np.array(jax.devices()).reshape(2, -1), ("x", "y"))
rng = np.random.default_rng(0)
X = rng.normal(size=(8, 6)).astype(np.float32)
W = rng.normal(size=(6, 3)).astype(np.float32)

def close(a, b, tol=2e-5):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)

def on_devices(a):
    return len(a.sharding.device_set) if type(a._buffer) is ShardedBuffer else 1

def local_loss(x, w):
    return jax.lax.psum(jnp.sum(jnp.tanh(x @ w) ** 2), ("x", "y"))

loss = jax.shard_map(local_loss, mesh=mesh, in_specs=(P(("x", "y")), P()), out_specs=P())

def reference(x, w):
    return jnp.sum(jnp.tanh(x @ w) ** 2)
"""


def test_collectives_run_on_the_devices(run_with_devices):
    out = run_with_devices(8, _SETUP + """
x = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
sm = lambda f, i, o, **kw: jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, **kw)(x)
blocks = x.reshape(2, 4, 4, 3).transpose(0, 2, 1, 3)  # [x][y] blocks of 4x3
r = sm(lambda a: jax.lax.psum(a, "y"), P("x", "y"), P("x"))
close(r, blocks.sum(1).reshape(8, 3))
print("psum", on_devices(r), r.sharding.spec)
r = sm(lambda a: jax.lax.pmax(a, "x"), P("x", "y"), P(None, "y"))
close(r, np.concatenate(list(blocks.max(0)), axis=1))
r = sm(lambda a: a + 10. * jax.lax.axis_index("y") + 100. * jax.lax.axis_index("x"),
       P("x", "y"), P("x", "y"))
close(r, x + np.repeat(10. * np.arange(4), 3)[None] + np.repeat(100. * np.arange(2), 4)[:, None])
r = sm(lambda a: jax.lax.all_gather(a, "y", axis=1, tiled=True), P("x", "y"), P("x"),
       check_vma=False)
close(r, x)
r = sm(lambda a: jax.lax.ppermute(a, "y", [(i, (i + 1) % 4) for i in range(4)]),
       P("x", "y"), P("x", "y"))
close(r, np.roll(x.reshape(8, 4, 3), 1, axis=1).reshape(8, 12))
r = sm(lambda a: jax.lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True), P(None, "y"),
       P("y", None))
close(r, x.reshape(8, 4, 3).sum(1))
r = sm(lambda a: jax.lax.all_to_all(a, "y", 0, 1, tiled=True), P(None, "y"), P(None, "y"))
print("a2a", np.asarray(r).shape)
r = sm(lambda a: jax.lax.pbroadcast(a, "y", 2), P("x", "y"), P("x", "y"), check_vma=False)
close(r, np.tile(x.reshape(8, 4, 3)[:, 2], (1, 4)))
text = jax.jit(lambda v: jax.shard_map(lambda a: jax.lax.psum(a, "y"), mesh=mesh,
               in_specs=P("x", "y"), out_specs=P("x"))(v)).lower(x).as_text()
print("manual", "sdy.manual_computation" in text, "stablehlo.all_reduce" in text)
""")
    assert out == ["psum 8 P('x',)", "a2a (2, 48)", "manual True True"]


def test_all_to_all_matches_one_device(run_with_devices):
    """all_to_all's block movement on 4 devices equals the named-vmap result on one."""
    code = """
import numpy as np, xjax as jax
from xjax.sharding import Mesh, PartitionSpec as P
x = np.arange(4 * 8 * 2, dtype=np.float32).reshape(4, 8, 2)
f = lambda a: jax.lax.all_to_all(a, "i", 0, 1, tiled=True)
"""
    one = run_with_devices(1, code + """
print(np.asarray(jax.vmap(f, axis_name="i")(x)).ravel().tolist())
""")
    four = run_with_devices(4, code + """
mesh = Mesh(np.array(jax.devices()), ("i",))
r = jax.shard_map(lambda a: f(a[0])[None], mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
print(len(r.sharding.device_set), np.asarray(r).ravel().tolist())
""")
    assert four == ["4 " + one[0]]


def test_transformations_of_a_sharded_loss(run_with_devices):
    out = run_with_devices(4, _SETUP + """
close(loss(X, W), reference(X, W))
g, g_ref = jax.grad(loss, (0, 1))(X, W), jax.grad(reference, (0, 1))(X, W)
for a, b in zip(g, g_ref):
    close(a, b)
gj = jax.jit(jax.grad(loss, (0, 1)))(X, W)
for a, b in zip(gj, g_ref):
    close(a, b)
print("grad", on_devices(gj[0]), gj[0].sharding.spec, gj[1].sharding.spec)
t = jax.jvp(loss, (X, W), (np.ones_like(X), np.ones_like(W)))
t_ref = jax.jvp(reference, (X, W), (np.ones_like(X), np.ones_like(W)))
close(t[0], t_ref[0]); close(t[1], t_ref[1], 1e-4)
Ws = np.stack([W, 2 * W, -W])
close(jax.vmap(loss, (None, 0))(X, Ws), jax.vmap(reference, (None, 0))(X, Ws))
close(jax.jit(jax.vmap(jax.grad(loss, 1), (None, 0)))(X, Ws),
      jax.vmap(jax.grad(reference, 1), (None, 0))(X, Ws))
close(jax.vmap(loss, (0, None))(np.stack([X, X + 1]), W),
      jax.vmap(reference, (0, None))(np.stack([X, X + 1]), W))
H = jax.hessian(lambda w: loss(X, w))(W)
close(H, jax.hessian(lambda w: reference(X, w))(W), 1e-4)
lin = jax.linearize(lambda w: loss(X, w), W)[1]
close(lin(np.ones_like(W)), jax.jvp(lambda w: reference(X, w), (W,), (np.ones_like(W),))[1],
      1e-4)
print("ok")
""")
    assert out == ["grad 4 P(('x', 'y'),) P()", "ok"]


def test_replicated_operand_and_output_derivatives(run_with_devices):
    """The transpose divides a replicated result's cotangent among the devices and sums a
    replicated operand's: the derivatives of the global function."""
    out = run_with_devices(4, _SETUP + """
def f(x, w):
    return jax.shard_map(lambda a, v: (a * v, v * 2., jax.lax.psum(v, "x")), mesh=mesh,
                         in_specs=(P("x"), P()), out_specs=(P("x"), P(), P()))(x, w)
def g(x, w):
    return (x * w, w * 2., w * 2.)
v = np.ones(6, np.float32) * 3
scalarize = lambda h: (lambda x, w: sum(jnp.sum(o ** 2) for o in h(x, w)))
for argnum in (0, 1):
    close(jax.grad(scalarize(f), argnum)(X, v), jax.grad(scalarize(g), argnum)(X, v))
    close(jax.jit(jax.grad(scalarize(f), argnum))(X, v), jax.grad(scalarize(g), argnum)(X, v))
print("ok")
""")
    assert out == ["ok"]


def test_pmap_across_devices(run_with_devices):
    out = run_with_devices(4, """
import numpy as np, xjax as jax, xjax.numpy as jnp
v = jnp.arange(1., 5.)
pm = jax.pmap(lambda a: a / jax.lax.psum(a, "i"), "i")
r = pm(v)
np.testing.assert_allclose(np.asarray(r), np.arange(1., 5.) / 10., rtol=1e-6)
print(len(r.sharding.device_set), r.sharding.spec)
ref = lambda a: (a / a.sum()).sum() + ((a / a.sum()) ** 2).sum()
g = jax.jit(jax.grad(lambda a: pm(a).sum() + (pm(a) ** 2).sum()))(v)
np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(ref)(v)), atol=1e-6)
x = np.arange(24.).reshape(4, 6).astype(np.float32)
r = jax.pmap(lambda a: jax.lax.ppermute(a, "i", [(k, (k + 1) % 4) for k in range(4)]), "i")(x)
np.testing.assert_array_equal(np.asarray(r), np.roll(x, 1, axis=0))
print(len(r.sharding.device_set))
""")
    assert out == ["4 P('i',)", "4"]
