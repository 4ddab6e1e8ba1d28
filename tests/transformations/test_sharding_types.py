"""Shardings in types: arrays split over Explicit mesh axes (``jax.make_mesh``'s default)
carry their split in their type, through eager operations, ``jit``, ``grad`` and ``vmap``.

The expected types and errors were measured with JAX 0.10.2 on a 2x2 mesh of CPU devices
(``x`` split as ``P('x', None)``, ``w`` as ``P(None, 'y')``, ``v`` as ``P('y', None)``); the
values are checked against NumPy.
"""

import numpy as np
import pytest

import xjax

_SETUP = """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("x", "y"))
data = np.arange(16.0, dtype=np.float32).reshape(4, 4)
x = jax.device_put(data, jax.NamedSharding(mesh, P("x", None)))
w = jax.device_put(data, jax.NamedSharding(mesh, P(None, "y")))
v = jax.device_put(data, jax.NamedSharding(mesh, P("y", None)))
u = jax.device_put(np.arange(8.0, dtype=np.float32), jax.NamedSharding(mesh, P(("x", "y"))))

def show(name, make, expected=None):
    try:
        out = make()
    except Exception as error:
        print(f"{name}|{type(error).__name__}: {str(error).splitlines()[0]}")
        return
    ok = "" if expected is None else str(bool(np.allclose(np.asarray(out), expected)))
    print(f"{name}|{jax.typeof(out)}|{ok}")
"""

_CASES = """
show("x", lambda: x, data)
show("u", lambda: u)
show("x*2", lambda: x * 2, data * 2)
show("x+w", lambda: x + w, data + data)
show("x+v", lambda: x + v)
show("x@w", lambda: x @ w, data @ data)
show("x@v", lambda: x @ v, data @ data)
show("xT@x", lambda: x.T @ x)
show("x@xT", lambda: x @ x.T)
show("sum0", lambda: x.sum(0), data.sum(0))
show("sum1", lambda: x.sum(1), data.sum(1))
show("sum1kd", lambda: x.sum(1, keepdims=True), data.sum(1, keepdims=True))
show("reshape16", lambda: x.reshape(16), data.reshape(16))
show("reshape224", lambda: x.reshape(2, 2, 4), data.reshape(2, 2, 4))
show("newaxis", lambda: x[None], data[None])
show("column", lambda: x[:, 0], data[:, 0])
show("cumsum", lambda: jnp.cumsum(x, 1), np.cumsum(data, 1))
show("astype", lambda: x.astype(jnp.int32), data.astype(np.int32))
show("where", lambda: jnp.where(x > 2, x, 0.0), np.where(data > 2, data, 0.0))
show("exp", lambda: jnp.exp(x), np.exp(data))
show("concat", lambda: jnp.concatenate([x, x], 1), np.concatenate([data, data], 1))
show("broadcast", lambda: jnp.broadcast_to(x[:, :1], (4, 4)),
     np.broadcast_to(data[:, :1], (4, 4)))
show("transpose", lambda: x.T, data.T)
show("sort0", lambda: jnp.sort(x, 0))
show("sort1", lambda: jnp.sort(x, 1), np.sort(data, 1))
show("jit", lambda: jax.jit(lambda a: jnp.sin(a) * 2)(x), np.sin(data) * 2)
show("grad", lambda: jax.grad(lambda a: (jnp.sin(a) * 2).sum())(x), np.cos(data) * 2)
show("vmap", lambda: jax.vmap(jnp.sin)(x), np.sin(data))
show("cols", lambda: x[:, 1:3], data[:, 1:3])
show("dyn_slice", lambda: jax.lax.dynamic_slice(x, (2, 1), (2, 3)), data[2:4, 1:4])
show("dyn_slice1", lambda: jax.lax.dynamic_slice(x, (1, 0), (1, 4)))
show("take1", lambda: jnp.take(x, jnp.array([0, 2]), axis=1), data[:, [0, 2]])
show("take0", lambda: x[jnp.array([1, 3])])
show("w_take0", lambda: w[jnp.array([1, 3])], data[[1, 3]])
show("jit_take1", lambda: jax.jit(lambda a: jnp.take(a, jnp.array([0, 2]), axis=1))(x),
     data[:, [0, 2]])
show("jit_rows01", lambda: jax.jit(lambda a: a[0:2] * 2)(x), data[0:2] * 2)
lhs = jax.device_put(np.ones((4, 2, 8), np.float32), jax.NamedSharding(mesh, P("x", None, None)))
lhs_w = jax.device_put(np.ones((4, 2, 8), np.float32),
                       jax.NamedSharding(mesh, P(None, None, "y")))
kernel = np.ones((3, 2, 3), np.float32)
same_conv = 6 * np.ones((4, 3, 8)) - np.pad(np.zeros((4, 3, 6)), ((0, 0), (0, 0), (1, 1)),
                                            constant_values=2)
show("conv_batch", lambda: jax.lax.conv_general_dilated(lhs, kernel, (1,), "SAME"), same_conv)
show("jit_conv_batch", lambda: jax.jit(
    lambda a: jax.lax.conv_general_dilated(a, kernel, (1,), "VALID"))(lhs), 6 * np.ones((4, 3, 6)))
show("jit_conv_spatial", lambda: jax.jit(
    lambda a: jax.lax.conv_general_dilated(a, kernel, (2,), "SAME"))(lhs_w))
show("jit_conv_odd", lambda: jax.jit(
    lambda a: jax.lax.conv_general_dilated(a, kernel, (1,), "VALID"))(lhs_w))
with jax.set_mesh(mesh):
    show("dot_out_sharding", lambda: jnp.dot(x, v, out_sharding=P("x", "y")), data @ data)
    show("einsum_out_sharding", lambda: jnp.einsum("ij,jk->ki", x, v,
                                                   out_sharding=P("y", "x")), (data @ data).T)
    show("jit_at_add_col", lambda: jax.jit(lambda a: a.at[:, 1].add(1.0))(x), data + np.eye(4)[1])
    show("jit_at_set_row", lambda: jax.jit(lambda a: a.at[0].set(1.0))(x))
    show("jit_w_at_set_rows", lambda: jax.jit(lambda a: a.at[jnp.array([0, 2])].set(1.0))(w),
         np.where(np.arange(4)[:, None] % 2 == 0, 1.0, data))
    show("jit_row", lambda: jax.jit(lambda a: a[1])(x))
    show("jit_take0", lambda: jax.jit(lambda a: a[jnp.array([1, 3])])(x))
    show("jit_w_take0", lambda: jax.jit(lambda a: a[jnp.array([1, 3])])(w), data[[1, 3]])
    show("jit_dyn_row", lambda: jax.jit(lambda a, i: a[i])(x, 1))
    show("jit_cols", lambda: jax.jit(lambda a: a[:, 1:3])(x), data[:, 1:3])
    show("jit_reshard_take0", lambda: jax.jit(
        lambda a: jax.sharding.reshard(a, P())[jnp.array([1, 3])])(x), data[[1, 3]])
    show("jit_reshard_y", lambda: jax.jit(lambda a: jax.sharding.reshard(a * 2, P(None, "y")))(x),
         data * 2)
    show("jit_at_get_out", lambda: jax.jit(lambda a: a.at[jnp.array([1, 3])].get(
        out_sharding=P("x")))(x), data[[1, 3]])
    show("jit_at_set_out", lambda: jax.jit(lambda a: a.at[0].set(
        1.0, out_sharding=P("x", None)))(x), np.where(np.arange(4)[:, None] == 0, 1.0, data))
    show("at_get_out", lambda: x.at[jnp.array([1, 3])].get(out_sharding=P("x")), data[[1, 3]])
    show("auto_axes_take", lambda: jax.sharding.auto_axes(
        lambda t, i: t[i], out_sharding=P(None, "y"))(x, jnp.array([1, 3])), data[[1, 3]])
    show("auto_axes_missing", lambda: jax.sharding.auto_axes(lambda t: t)(x))
    show("auto_axes_inside_zeros", lambda: jax.sharding.auto_axes(
        lambda t: t + jnp.zeros((4, 4), out_sharding=P("x")), axes="x",
        out_sharding=P("x", None))(x))
    show("auto_axes_mixed", lambda: jax.sharding.auto_axes(
        lambda t: t * 2 + jnp.ones((4, 4), out_sharding=P(None, "y")), axes="x",
        out_sharding=P("x", "y"))(x), data * 2 + 1)
    inside = []
    jax.sharding.auto_axes(lambda t: inside.append(jax.sharding.get_abstract_mesh().axis_types)
                           or t, axes="x", out_sharding=P("x", None))(x)
    print("auto_axes_inside_types|" + repr(inside[0]))
    show("conv_out_sharding", lambda: jax.lax.conv_general_dilated(
        lhs, kernel, (1,), "SAME", out_sharding=P("x", None, "y")), same_conv)
    show("jit_conv_out_sharding", lambda: jax.jit(lambda a: jax.lax.conv_general_dilated(
        a, kernel, (1,), "SAME", out_sharding=P(None, None, "y")))(lhs_w), same_conv)
    show("grad_conv_out_sharding", lambda: jax.grad(lambda a: jax.lax.conv_general_dilated(
        a, kernel, (1,), "SAME", out_sharding=P("x", None, "y")).sum())(lhs))
with jax.set_mesh(mesh):
    print("jaxpr_reshard|" + " ".join(str(jax.make_jaxpr(
        lambda a: jax.sharding.reshard(a, P(None, "y")))(x)).split()))
    show("jit_grad_reshard", lambda: jax.jit(jax.grad(
        lambda a: (jax.sharding.reshard(a, P(None, "y")) ** 2).sum()))(x), 2 * data)
    show("vmap_reshard", lambda: jax.vmap(lambda r: jax.sharding.reshard(r, P("y")))(x), data)
print("eval_shape_reshard|" + repr(jax.eval_shape(
    lambda: jax.sharding.reshard(jnp.ones((4, 4)), jax.NamedSharding(mesh, P("x", "y"))))
    .sharding.spec))
print("eval_shape_struct|" + repr(jax.eval_shape(lambda a: a * 2, jax.ShapeDtypeStruct(
    (4, 4), jnp.float32, sharding=jax.NamedSharding(mesh, P(None, "y")))).sharding.spec))
print("sharding|" + repr(jax.typeof(x).sharding.spec))
print("result_specs|" + repr([jax.jit(lambda a: jnp.sin(a) * 2)(x).sharding.spec,
                             (x * 2).sharding.spec, x.sum(1).sharding.spec,
                             (x @ w).sharding.spec, x.T.sharding.spec]))
print("jaxpr|" + str(jax.make_jaxpr(lambda a: a + 1.0)(x)))
"""

# What JAX 0.10.2 gives for each case ("|True": the values agree with NumPy).
_EXPECTED = {
    "x": "float32[4@x,4]|True",
    "u": "float32[8@(x,y)]|",
    "x*2": "float32[4@x,4]|True",
    "x+w": "float32[4@x,4@y]|True",
    "x+v": "ShardingTypeError: add got incompatible shardings for broadcasting: "
           "('x', None), ('y', None).",
    "x@w": "float32[4@x,4@y]|True",
    "x@v": "float32[4@x,4]|True",
    "xT@x": "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous how "
            "the output should be sharded. Please specify the output sharding via the "
            "`out_sharding` parameter. Got lhs_contracting_spec=('x',) and "
            "rhs_contracting_spec=('x',)",
    "x@xT": "ShardingTypeError: dot_general operation with inputs: f32[4@x,4], f32[4,4@x] "
            "produces an illegally sharded result: f32[4@x,4@x]",
    "sum0": "float32[4]|True",
    "sum1": "float32[4@x]|True",
    "sum1kd": "float32[4@x,1]|True",
    "reshape16": "float32[16@x]|True",
    "reshape224": "float32[2@x,2,4]|True",
    "newaxis": "float32[1,4@x,4]|True",
    "column": "float32[4@x]|True",
    "cumsum": "float32[4@x,4]|True",
    "astype": "int32[4@x,4]|True",
    "where": "float32[4@x,4]|True",
    "exp": "float32[4@x,4]|True",
    "concat": "float32[4@x,8]|True",
    "broadcast": "float32[4@x,4]|True",
    "transpose": "float32[4,4@x]|True",
    # (JAX's AbstractMesh repr adds "device_kind=cpu, num_cores=None, platform=cpu")
    "sort0": "ShardingTypeError: Arguments to sort must be unsharded over the sorting "
             "dimension. Got arg sharding=NamedSharding(mesh=AbstractMesh('x': 2, 'y': 2, "
             "axis_types=(Explicit, Explicit)), spec=P('x', None)) and sorting dimension=0",
    "sort1": "float32[4@x,4]|True",
    "jit": "float32[4@x,4]|True",
    "grad": "float32[4@x,4]|True",
    "vmap": "float32[4@x,4]|True",
    "dot_out_sharding": "float32[4@x,4@y]|True",
    "einsum_out_sharding": "float32[4@y,4@x]|True",
    # slicing, gather and scatter (JAX's eager indexing of split arrays goes through a gather
    # and refuses more; under jit both slice)
    "cols": "float32[4@x,2]|True",
    "dyn_slice": "float32[2@x,3]|True",
    "dyn_slice1": "ShardingTypeError: dynamic_slice on sharded dims where out dim (1) is not "
                  "divisible by mesh axes (2) with spec (x) is not implemented. Got input "
                  "type=f32[4@x,4] and output shape=(1, 4)",
    "take1": "float32[4@x,2]|True",
    "take0": "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output "
             "PartitionSpec for the gather indexing as out sharding could not be resolved "
             "unambiguously (or would require collectives on inputs). Got "
             "operand=ShapedArray(float32[4@x,4]), indices=ShapedArray(int32[2,1])",
    "w_take0": "float32[2,4@y]|True",
    "jit_take1": "float32[4@x,2]|True",
    "jit_rows01": "float32[2@x,4]|True",
    "jit_at_add_col": "float32[4@x,4]|True",
    "jit_at_set_row": "ShardingTypeError: Use `.at[...].set/add/mul/...(out_sharding=)` to provide "
                      "output PartitionSpec for the scatter update as out sharding could not be "
                      "resolved unambiguously (or would require collectives on inputs). Got "
                      "operand=ShapedArray(float32[4@x,4]), indices=ShapedArray(int32[1]), "
                      "updates=ShapedArray(float32[4])",
    "jit_w_at_set_rows": "float32[4,4@y]|True",
    "jit_row": "ShardingTypeError: slicing on sharded dims where out dim (1) is not divisible by"
               " mesh axes (2) with spec (x) is not implemented. Got input type=f32[4@x,4] and "
               "output shape=(1, 4)",
    "jit_take0": "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output "
                 "PartitionSpec for the gather indexing as out sharding could not be resolved "
                 "unambiguously (or would require collectives on inputs). Got "
                 "operand=ShapedArray(float32[4@x,4]), indices=ShapedArray(int32[2,1])",
    "jit_w_take0": "float32[2,4@y]|True",
    "jit_dyn_row": "ShardingTypeError: dynamic_slice on sharded dims where out dim (1) is not "
                   "divisible by mesh axes (2) with spec (x) is not implemented. Got input "
                   "type=f32[4@x,4] and output shape=(1, 4)",
    "jit_cols": "float32[4@x,2]|True",
    "jit_reshard_take0": "float32[2,4]|True",  # reshard under jit types its result
    "jit_reshard_y": "float32[4,4@y]|True",
    "jit_at_get_out": "float32[2@x,4]|True",
    "jit_at_set_out": "float32[4@x,4]|True",
    "at_get_out": "float32[2@x,4]|True",
    "auto_axes_take": "float32[2,4@y]|True",
    "auto_axes_missing": "TypeError: Missing required keyword argument: 'out_sharding'",
    # convolution: the input's split, where the kernel and the input's features are unsplit
    "conv_batch": "float32[4@x,3,8]|True",
    "jit_conv_batch": "float32[4@x,3,6]|True",
    "jit_conv_spatial": "float32[4,3,4@y]|",
    "jit_conv_odd": "float32[4,3,6@y]|",
    # inside auto_axes the axes are Auto (JAX appends the source location to the message)
    "auto_axes_inside_zeros": "ValueError: PartitionSpec passed to jnp.zeros cannot contain "
                              "axis names that are of type Auto or Manual. Got PartitionSpec: "
                              "P('x',) with axis name: x of type: AxisType.Auto.",
    "auto_axes_mixed": "float32[4@x,4@y]|True",
    "auto_axes_inside_types": "(Auto, Explicit)",
    # convolution with out_sharding (a primitive parameter, as JAX's); its gradient
    # takes the input's split
    "conv_out_sharding": "float32[4@x,3,8@y]|True",
    "jit_conv_out_sharding": "float32[4,3,8@y]|True",
    "grad_conv_out_sharding": "float32[4@x,2,8]|",
    # reshard under a trace is JAX's reshard primitive; its transpose goes back to the
    # operand's split
    "jaxpr_reshard": "{ lambda ; a:f32[4@x,4]. let b:f32[4,4@y] = reshard a in (b,) }",
    "jit_grad_reshard": "float32[4@x,4]|True",
    "vmap_reshard": "float32[4@x,4@y]|True",
    # eval_shape's results carry the sharding of their type
    "eval_shape_reshard": "P('x', 'y')",
    "eval_shape_struct": "P(None, 'y')",
    "sharding": "P('x', None)",
    # the arrays' shardings follow their types
    "result_specs": "[P('x', None), P('x', None), P('x',), P('x', 'y'), P(None, 'x')]",
    "jaxpr": "{ lambda ; a:f32[4@x,4]. let b:f32[4@x,4] = add a 1.0:f32[] in (b,) }",
}


@pytest.fixture(scope="module")
def results(run_with_devices):
    return dict(line.split("|", 1)
                for line in run_with_devices(4, _SETUP + _CASES, timeout=600))


@pytest.mark.parametrize("case", sorted(_EXPECTED))
def test_type_is_jaxs(results, case):
    assert results[case] == _EXPECTED[case]


def test_unsplit_and_auto_types_carry_no_sharding():
    import xjax
    from xjax.sharding import AxisType, NamedSharding, PartitionSpec

    aval = xjax.core.ShapedArray((4,), np.float32)
    auto = xjax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    typed = xjax.core.ShapedArray((4,), np.float32,
                                  sharding=NamedSharding(auto, PartitionSpec("x")))
    assert typed == aval and str(typed) == "float32[4]"


@pytest.mark.parametrize("bad", [3, "x", [None, 1.5]])
def test_auto_axes_names_a_wrong_out_sharding(bad):
    x = xjax.numpy.arange(4.0)
    with pytest.raises(TypeError, match="auto_axes out_sharding must be a PartitionSpec"):
        x.at[xjax.numpy.array([1])].get(out_sharding=bad)
    with pytest.raises(TypeError, match="auto_axes out_sharding must be a PartitionSpec"):
        xjax.sharding.auto_axes(lambda t: t, out_sharding=bad)(x)
