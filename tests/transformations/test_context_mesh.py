"""The mesh ``set_mesh`` sets places results, as JAX 0.10's context mesh does: arrays made,
computed (eagerly or by ``jit``) or drawn under it are laid out over its devices (replicated
unless split), ``*_like`` constructors place their result as their argument is, an eager
``with_sharding_constraint`` places its value, ``reshard`` onto an AbstractMesh's sharding
uses the context mesh, and arguments committed elsewhere are refused with JAX's error.

Every expected line was measured with JAX 0.10.2 on 4 CPU devices (the same script with
``import jax``); the values are checked against NumPy.
"""

import numpy as np
import pytest

import xjax

_SCRIPT = """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from xjax.experimental.layout import Format, Layout

def show(name, make, expected=None):
    try:
        out = make()
    except Exception as error:
        print(f"{name}|{type(error).__name__}: {str(error).splitlines()[0]}")
        return
    ok = "" if expected is None else str(bool(np.allclose(np.asarray(out), expected)))
    print(f"{name}|{out.sharding}|{ok}")

data = np.arange(8.0, dtype=np.float32).reshape(4, 2)
for kind, types in [("auto", (AxisType.Auto,) * 2), ("explicit", (AxisType.Explicit,) * 2)]:
    mesh = jax.make_mesh((2, 2), ("row", "col"), axis_types=types)
    with jax.set_mesh(mesh):
        show(kind + "_ones", lambda: jnp.ones((4, 2)), np.ones((4, 2)))
        show(kind + "_normal", lambda: jax.random.normal(jax.random.key(0), (4, 2)))
        show(kind + "_add", lambda: jnp.ones((4, 2)) + 1, np.full((4, 2), 2.0))
        show(kind + "_asarray", lambda: jnp.asarray(data), data)
        show(kind + "_device_put", lambda: jax.device_put(data), data)
        show(kind + "_arange", lambda: jnp.arange(4), np.arange(4))
        show(kind + "_jit", lambda: jax.jit(lambda: jnp.ones(3) * 2)(), np.full(3, 2.0))
        show(kind + "_key", lambda: jax.random.key(0))
        show(kind + "_grad", lambda: jax.grad(lambda w: (w ** 2).sum())(jnp.ones(3)),
             np.full(3, 2.0))
        made = jnp.ones((4, 2))
    show(kind + "_after", lambda: made + 1, np.full((4, 2), 2.0))

mesh = jax.make_mesh((2, 2), ("row", "col"), axis_types=(AxisType.Auto,) * 2)
x = jax.device_put(data, NamedSharding(mesh, P("row", "col")))
show("zeros_like", lambda: jnp.zeros_like(x), np.zeros((4, 2)))
show("full_like", lambda: jnp.full_like(x, 3), np.full((4, 2), 3.0))
show("lax_full_like", lambda: jax.lax.full_like(x, 2), np.full((4, 2), 2.0))
show("zeros_like_shape", lambda: jnp.zeros_like(x, shape=(8,)), np.zeros(8))
on2 = jax.device_put(data, jax.devices()[2])
show("zeros_like_device2", lambda: jnp.zeros_like(on2), np.zeros((4, 2)))
print("zeros_like_device2_committed|" + str(jnp.zeros_like(on2).committed))
show("zeros_like_uncommitted", lambda: jnp.zeros_like(jnp.ones((4, 2))), np.zeros((4, 2)))
with jax.set_mesh(mesh):
    abstract = jax.sharding.get_abstract_mesh()
    show("constraint", lambda: jax.lax.with_sharding_constraint(
        jnp.ones((8, 2)), NamedSharding(abstract, P("row", "col"))), np.ones((8, 2)))
    show("constraint_spec", lambda: jax.lax.with_sharding_constraint(
        jnp.ones((8, 2)), P("row")), np.ones((8, 2)))
    show("constraint_format", lambda: jax.lax.with_sharding_constraint(
        jnp.ones((8, 2)), Format(Layout((0, 1)), NamedSharding(mesh, P("row", None)))),
        np.ones((8, 2)))
    show("reshard_auto", lambda: jax.sharding.reshard(jnp.ones((4, 4)), P("row")))
    show("reshard_auto_unsplit", lambda: jax.sharding.reshard(
        jnp.ones((4, 4)), NamedSharding(mesh, P())), np.ones((4, 4)))
explicit = jax.make_mesh((2, 2), ("row", "col"))
show("reshard_abstract_unsplit", lambda: jax.sharding.reshard(
    jnp.ones((4, 4)), NamedSharding(mesh.abstract_mesh, P())), np.ones((4, 4)))
with jax.set_mesh(explicit):
    show("reshard_abstract", lambda: jax.sharding.reshard(jnp.ones((4, 4)), NamedSharding(
        jax.sharding.get_abstract_mesh(), P("row", "col"))), np.ones((4, 4)))
    on0 = jax.device_put(data, jax.devices()[0])
    show("committed_add", lambda: on0 + 1)
    show("committed_jit", lambda: jax.jit(lambda a: a * 2)(on0))
    split = jax.device_put(data, P("row"))
    show("split_times_ones", lambda: split * jnp.ones((4, 2)), data)
one = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
with jax.set_mesh(one):
    show("one_device_ones", lambda: jnp.ones(3), np.ones(3))
    show("one_device_shard_map", lambda: jax.shard_map(
        lambda a: a * 2, mesh=one, in_specs=P("x"), out_specs=P("x"))(jnp.arange(4.0)),
        np.arange(4.0) * 2)
with mesh:  # the deprecated context places nothing
    show("with_mesh_ones", lambda: jnp.ones(3), np.ones(3))

# out_sharding= of the functions that make arrays: their layout and their type
def typed(name, make):
    try:
        out = make()
        print(f"{name}|{out.sharding.spec}|{jax.typeof(out)}")
    except Exception as error:
        print(f"{name}|{type(error).__name__}: {str(error).splitlines()[0]}")

for kind, types in [("explicit", (AxisType.Explicit,) * 2), ("auto", (AxisType.Auto,) * 2)]:
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=types)
    with jax.set_mesh(mesh):
        typed(kind + "_out_zeros", lambda: jnp.zeros((4, 4), out_sharding=P("x", "y")))
        typed(kind + "_out_ones", lambda: jnp.ones(
            (4, 4), out_sharding=NamedSharding(mesh, P("x"))))
        typed(kind + "_out_full", lambda: jnp.full((4, 4), 3.0, out_sharding=P(None, "y")))
        typed(kind + "_out_arange", lambda: jnp.arange(8, out_sharding=P("x")))
        typed(kind + "_out_array", lambda: jnp.array(np.ones((4, 4)), out_sharding=P("x")))
        typed(kind + "_out_zeros_like", lambda: jnp.zeros_like(
            jnp.ones((4, 4)), out_sharding=P("y")))
        typed(kind + "_out_jit_zeros", lambda: jax.jit(
            lambda: jnp.zeros((4, 4), out_sharding=P("x", "y")))())
        typed(kind + "_out_jit_arange", lambda: jax.jit(
            lambda: jnp.arange(8, out_sharding=P("x")))())
        typed(kind + "_out_jit_full_like", lambda: jax.jit(
            lambda a: jnp.full_like(a, 2.0, out_sharding=P("x")))(jnp.ones((4, 4))))
        typed(kind + "_out_reshape", lambda: jnp.reshape(
            jnp.ones((4, 4)), (16,), out_sharding=P("x")))
        typed(kind + "_out_jit_reshape", lambda: jax.jit(
            lambda a: jnp.reshape(a, (16,), out_sharding=P("x")))(jnp.ones((4, 4))))
typed("nomesh_out_zeros", lambda: jnp.zeros((4, 4), out_sharding=P("x")))
print("out_values|" + str(np.asarray(jnp.arange(8.0, out_sharding=NamedSharding(
    jax.make_mesh((2, 2), ("x", "y")), P("x")))).tolist()))
"""

_AUTO = "Mesh('row': 2, 'col': 2, axis_types=(Auto, Auto))"
_EXPLICIT = "Mesh('row': 2, 'col': 2, axis_types=(Explicit, Explicit))"


def _named(mesh, spec):
    return f"NamedSharding(mesh={mesh}, spec={spec}, memory_kind=device)"


_ONE = "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"

# What JAX 0.10.2 prints for each case ("|True": the values agree with NumPy). Without a
# mesh an unsplit Explicit result names each dimension (P(None, None)), as its type does.
_EXPECTED = {
    "zeros_like": _named(_AUTO, "P('row', 'col')") + "|True",
    "full_like": _named(_AUTO, "P('row', 'col')") + "|True",
    "lax_full_like": _named(_AUTO, "P('row', 'col')") + "|True",
    "zeros_like_shape": _ONE + "|True",
    "zeros_like_device2": "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)|True",
    "zeros_like_device2_committed": "True",
    "zeros_like_uncommitted": _ONE + "|True",
    "constraint": _named(_AUTO, "P('row', 'col')") + "|True",
    "constraint_spec": _named(_AUTO, "P('row',)") + "|True",
    "constraint_format": _named(_AUTO, "P('row', None)") + "|True",
    # JAX appends the source location to this message
    "reshard_auto": "ValueError: PartitionSpec passed to reshard cannot contain axis names "
                    "that are of type Auto or Manual. Got PartitionSpec: P('row',) with axis "
                    "name: row of type: AxisType.Auto.",
    "reshard_auto_unsplit": _named(_AUTO, "P()") + "|True",
    "reshard_abstract_unsplit": _ONE + "|True",
    "reshard_abstract": _named(_EXPLICIT, "P('row', 'col')") + "|True",
    # JAX names an eager primitive's operand by its parameter ("x"), xjax by position
    "committed_add": "ValueError: Received incompatible devices for jitted computation. Got "
                     "argument args[0] of add with shape float32[4,2] and with device ids [0] "
                     "on platform CPU and jit's context mesh with device ids [0, 1, 2, 3] on "
                     "platform CPU",
    # JAX names the function by its qualified name (<lambda>.<locals>.<lambda>)
    "committed_jit": "ValueError: Received incompatible devices for jitted computation. Got "
                     "argument a of <lambda> with shape float32[4,2] and with device ids [0] "
                     "on platform CPU and jit's context mesh with device ids [0, 1, 2, 3] on "
                     "platform CPU",
    "split_times_ones": _named(_EXPLICIT, "P('row', None)") + "|True",
    "one_device_ones": _named("Mesh('x': 1, axis_types=(Auto,))", "P()") + "|True",
    "one_device_shard_map": _named("Mesh('x': 1, axis_types=(Auto,))", "P('x',)") + "|True",
    "with_mesh_ones": _ONE + "|True",
    # out_sharding=: the result split as asked, its type too (a weak type printed "~").
    # (JAX's jnp.asarray of a NumPy value drops an Explicit out_sharding; xjax honours it,
    # as jnp.array does.)
    "explicit_out_zeros": "P('x', 'y')|float32[4@x,4@y]",
    "explicit_out_ones": "P('x', None)|float32[4@x,4]",
    "explicit_out_full": "P(None, 'y')|~float32[4,4@y]",
    "explicit_out_arange": "P('x',)|int32[8@x]",
    "explicit_out_array": "P('x', None)|float32[4@x,4]",
    "explicit_out_zeros_like": "P('y', None)|float32[4@y,4]",
    "explicit_out_jit_zeros": "P('x', 'y')|float32[4@x,4@y]",
    "explicit_out_jit_arange": "P('x',)|int32[8@x]",
    "explicit_out_jit_full_like": "P('x', None)|float32[4@x,4]",
    "explicit_out_reshape": "P('x',)|float32[16@x]",
    "explicit_out_jit_reshape": "P('x',)|float32[16@x]",
    "nomesh_out_zeros": "ValueError: Using PartitionSpec when you are not under a mesh context "
                        "is not allowed. Please pass a NamedSharding instance or enter into a "
                        "mesh context via `jax.set_mesh`. Got P('x',)",
    # a NamedSharding over a concrete mesh needs no mesh context here (JAX asks for one)
    "out_values": "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]",
}
# Per mesh kind: the spec over Auto axes, over Explicit ones (None: one device), and
# whether the values are checked.
_PER_KIND = {"ones": ("P()", "P(None, None)", "True"), "normal": ("P()", "P(None, None)", ""),
             "add": ("P()", "P(None, None)", "True"), "asarray": ("P()", "P()", "True"),
             "device_put": (None, None, "True"), "arange": ("P()", "P(None,)", "True"),
             "jit": ("P()", "P(None,)", "True"), "key": ("P()", "P()", ""),
             "grad": ("P()", "P(None,)", "True"), "after": ("P()", "P(None, None)", "True")}
for _case, (_auto, _explicit, _ok) in _PER_KIND.items():
    _EXPECTED["auto_" + _case] = (_ONE if _auto is None else _named(_AUTO, _auto)) + "|" + _ok
    _EXPECTED["explicit_" + _case] = (_ONE if _explicit is None
                                      else _named(_EXPLICIT, _explicit)) + "|" + _ok
_AUTO_REFUSED = {"zeros": ("jnp.zeros", "P('x', 'y')", "x"), "ones": ("jnp.ones", "P('x',)", "x"),
                 "full": ("full", "P(None, 'y')", "y"), "arange": ("jnp.arange", "P('x',)", "x"),
                 "array": ("jnp.array", "P('x',)", "x"),
                 "zeros_like": ("jnp.zeros_like", "P('y',)", "y"),
                 "jit_zeros": ("jnp.zeros", "P('x', 'y')", "x"),
                 "jit_arange": ("jnp.arange", "P('x',)", "x"),
                 "jit_full_like": ("full_like", "P('x',)", "x"),
                 "reshape": ("reshape", "P('x',)", "x"), "jit_reshape": ("reshape", "P('x',)", "x")}
for _case, (_name, _spec, _axis) in _AUTO_REFUSED.items():
    _EXPECTED["auto_out_" + _case] = (
        f"ValueError: PartitionSpec passed to {_name} cannot contain axis names that are of "
        f"type Auto or Manual. Got PartitionSpec: {_spec} with axis name: {_axis} of type: "
        "AxisType.Auto.")

@pytest.fixture(scope="module")
def results(run_with_devices):
    return dict(line.split("|", 1) for line in run_with_devices(4, _SCRIPT, timeout=600))


@pytest.mark.parametrize("case", sorted(_EXPECTED))
def test_placement_is_jaxs(results, case):
    assert results[case] == _EXPECTED[case]


def test_context_mesh_is_restored():
    from xjax._src.core.sharding_types import placement_mesh

    mesh = xjax.make_mesh((1,), ("x",))
    assert placement_mesh() is None
    with xjax.set_mesh(mesh):
        assert placement_mesh() is mesh
        with xjax.set_mesh(None):
            assert placement_mesh() is None
        assert placement_mesh() is mesh
    assert placement_mesh() is None
    assert np.asarray(xjax.numpy.ones(2)).tolist() == [1.0, 1.0]


def test_constraint_takes_a_format_of_the_default_layout():
    from xjax.experimental.layout import Format, Layout

    one = xjax.sharding.SingleDeviceSharding(xjax.devices()[0])
    v = xjax.numpy.arange(6.0).reshape(2, 3)
    out = xjax.lax.with_sharding_constraint(v, Format(Layout((0, 1)), one))
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0).reshape(2, 3))
    out = xjax.jit(lambda a: xjax.lax.with_sharding_constraint(a, Format(Layout.AUTO, one)))(v)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0).reshape(2, 3))
    with pytest.raises(NotImplementedError, match="default row-major layout"):
        xjax.lax.with_sharding_constraint(v, Format(Layout((1, 0)), one))
