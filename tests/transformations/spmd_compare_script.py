"""Run SPMD programs (shard_map, pmap, smap) with ``jax`` or ``xjax`` (argv[1]) and print one
line per program: its values, or the class of its error. tests/test_shard_map.py runs this in
subprocesses with 4 CPU devices and compares the two outputs line for line."""

import sys
from functools import partial

import numpy as np

if sys.argv[1] == "jax":
    import jax
    import jax.numpy as jnp
    from jax import lax
else:
    import xjax as jax
    import xjax.numpy as jnp
    from xjax import lax

P = jax.sharding.PartitionSpec
AT = jax.sharding.AxisType
print("devices", len(jax.devices()))
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)
x = jnp.arange(48.0).reshape(4, 12)


def run(name, fn):
    try:
        out = fn()
        print(name, jax.tree_util.tree_map(lambda a: np.asarray(a).round(4).tolist(), out))
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        kind = "ValueError" if isinstance(e, ValueError) else type(e).__name__
        print(name, "ERR", kind)


sm = partial(jax.shard_map, mesh=mesh)
run("id", lambda: sm(lambda a: a, in_specs=P("x", "y"), out_specs=P("x", "y"))(x))
run("swap", lambda: sm(lambda a: a, in_specs=P("x", "y"), out_specs=P("y", "x"))(x))
run("xy", lambda: sm(lambda a: a * 1, in_specs=P(("x", "y")), out_specs=P(("y", "x")))(x))
run("yx_in", lambda: sm(lambda a: a + lax.axis_index("x"), in_specs=P(("y", "x")),
                        out_specs=P(("x", "y")))(x))
run("psum", lambda: sm(lambda a: lax.psum(a, "x"), in_specs=P("x", "y"),
                       out_specs=P(None, "y"))(x))
run("psum2", lambda: sm(lambda a: lax.psum(a, ("x", "y")), in_specs=P("x", "y"),
                        out_specs=P())(x))
run("psum_repl", lambda: sm(lambda a: lax.psum(a, "x"), in_specs=P(), out_specs=P())(x))
run("pmean", lambda: sm(lambda a: lax.pmean(a, "y"), in_specs=P("x", "y"),
                        out_specs=P("x"))(x))
run("pmax", lambda: sm(lambda a: lax.pmax(a, "y"), in_specs=P("x", "y"), out_specs=P("x"))(x))
run("aidx", lambda: sm(lambda a: a + 100 * lax.axis_index("x") + 10 * lax.axis_index("y"),
                       in_specs=P("x", "y"), out_specs=P("x", "y"))(x))
run("ag", lambda: sm(lambda a: lax.all_gather(a, "x", tiled=True), in_specs=P("x", "y"),
                     out_specs=P(None, "y"), check_vma=False)(x))
run("ag2", lambda: sm(lambda a: lax.all_gather(a, "y", axis=1), in_specs=P("x", "y"),
                      out_specs=P("x", "y"))(x))
run("ppermute", lambda: sm(lambda a: lax.ppermute(a, "x", [(0, 1), (1, 0)]),
                           in_specs=P("x", "y"), out_specs=P("x", "y"))(x))
run("a2a", lambda: sm(lambda a: lax.all_to_all(a, "y", 1, 0, tiled=True),
                      in_specs=P("x", "y"), out_specs=P("x", "y"))(x))
run("pss", lambda: sm(lambda a: lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
                      in_specs=P("x"), out_specs=P("x", "y"))(x))
run("repl_in", lambda: sm(lambda a: a * 2, in_specs=P(), out_specs=P("x"))(x))
run("rep_err", lambda: sm(lambda a: a * 2, in_specs=P("x"), out_specs=P())(x))
run("rep_err2", lambda: sm(lambda a: a * 2, in_specs=P("x", "y"), out_specs=P())(x))
run("nocheck", lambda: sm(lambda a: a + lax.axis_index("x"), in_specs=P("x", "y"),
                          out_specs=P(None, "y"), check_vma=False)(x))
run("tree", lambda: sm(lambda a, b: {"s": a + b["u"], "t": lax.psum(b["v"], "x")},
                       in_specs=(P("x"), {"u": P("x"), "v": P()}),
                       out_specs={"s": P("x"), "t": P()})(x, {"u": x, "v": jnp.ones(3)}))
run("jit", lambda: jax.jit(sm(lambda a: lax.psum(a, "y") * 2, in_specs=P("x", "y"),
                              out_specs=P("x")))(x))
run("grad", lambda: jax.grad(lambda z: sm(lambda a: lax.psum((a ** 2).sum(), ("x", "y")),
                                          in_specs=P("x", "y"), out_specs=P())(z))(x))
run("grad2", lambda: jax.grad(lambda z: sm(lambda a: jnp.sin(a) * lax.axis_index("x"),
                                           in_specs=P("x", "y"),
                                           out_specs=P("x", "y"))(z).sum())(x))
run("vmap", lambda: jax.vmap(sm(lambda a: lax.psum(a, "x"), in_specs=P("x"),
                                out_specs=P()))(jnp.arange(24.0).reshape(3, 4, 2)))
run("div", lambda: sm(lambda a: a, in_specs=P("x"), out_specs=P("x"))(jnp.arange(3.0)))
run("div2", lambda: sm(lambda a: a, in_specs=P(("x", "y")), out_specs=P("x"))(jnp.arange(6.0)))
run("rank", lambda: sm(lambda a: a, in_specs=P("x", None, None), out_specs=P("x"))(x))
run("badname", lambda: sm(lambda a: a, in_specs=P("z"), out_specs=P("x"))(x))
run("notspec", lambda: sm(lambda a: a, in_specs="x", out_specs=P("x"))(x))
run("axnames", lambda: sm(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P(),
                          axis_names={"x"})(x))
run("pmap", lambda: jax.pmap(lambda a: a / lax.psum(a, "i"), "i")(jnp.arange(1.0, 5.0)))
run("pmap2", lambda: jax.pmap(lambda a, b: (a * b, lax.all_gather(a, "i")), "i",
                              in_axes=(1, None))(jnp.arange(8.0).reshape(2, 4), 3.0))
run("pmap_none", lambda: jax.pmap(lambda a: a + lax.axis_index("i"), "i",
                                  out_axes=None)(jnp.arange(4.0)))
run("pmap_static", lambda: jax.pmap(lambda a, n: a * n,
                                    static_broadcasted_argnums=1)(jnp.arange(4.0), 3))
run("pmap_big", lambda: jax.pmap(lambda a: a)(jnp.arange(5.0)))
run("pmap_perm", lambda: jax.pmap(lambda a: lax.ppermute(a, "i", [(i, (i + 1) % 4)
                                                                  for i in range(4)]),
                                  "i")(jnp.arange(4.0)))
run("pmap_grad", lambda: jax.grad(lambda z: jax.pmap(lambda a: lax.psum(a ** 2, "i"),
                                                     "i")(z).sum())(jnp.arange(4.0)))
run("pmap_kw", lambda: jax.pmap(lambda a, b: a + b)(jnp.arange(4.0), b=jnp.ones(4)))
run("pmap_outaxes", lambda: jax.pmap(lambda a: a * 2, out_axes=1)(
    jnp.arange(8.0).reshape(4, 2)))
run("pmap_size", lambda: jax.pmap(lambda a: a, axis_size=3)(jnp.arange(4.0)))
run("pmap_nomap", lambda: jax.pmap(lambda a: a, in_axes=None)(jnp.arange(4.0)))
with jax.set_mesh(mesh):
    run("ctx", lambda: jax.shard_map(lambda a: lax.psum(a, "x"), in_specs=P("x"),
                                     out_specs=P())(x))
    run("smap", lambda: jax.smap(lambda a: a * lax.axis_index("x"), in_axes=0, out_axes=0,
                                 axis_name="x")(x))
run("noctx", lambda: jax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P("x"))(x))
mesh1 = jax.make_mesh((4,), ("i",), axis_types=(AT.Auto,))
ns = jax.NamedSharding(mesh1, P("i"))
run("put", lambda: jax.device_put(jnp.arange(8.0), ns))
run("put_err", lambda: jax.device_put(jnp.arange(6.0), ns))
run("shard_shape", lambda: ns.shard_shape((8, 3)))
run("indices", lambda: [str(v) for v in ns.devices_indices_map((8,)).values()])
