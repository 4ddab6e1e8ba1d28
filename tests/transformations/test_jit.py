"""jit: call forms, static arguments, pytrees, caching, nesting, lowering and errors."""

import functools
import subprocess
import sys

import numpy as np
import pytest

import xjax
from xjax import errors, lax
from xjax._src.core.array import Array


def arr(x, dtype=np.float32):
    return xjax.Array(np.asarray(x, dtype))


def test_decorator_and_call_forms():
    @xjax.jit
    def f(x):
        return lax.mul(x, 2.0)

    g = xjax.jit(lambda x: lax.mul(x, 2.0))
    x = arr([1, 2, 3])
    np.testing.assert_array_equal(f(x), [2, 4, 6])
    np.testing.assert_array_equal(g(x), [2, 4, 6])
    assert isinstance(f(x), Array)


def test_static_argnums_partial_and_argnames():
    @functools.partial(xjax.jit, static_argnums=(1,))
    def f(x, neg):
        return lax.neg(x) if neg else x

    assert repr(f(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
    assert repr(f(1, False)) == "Array(1, dtype=int32, weak_type=True)"

    @functools.partial(xjax.jit, static_argnames="n")
    def g(x, n):
        return lax.mul(x, float(n))

    np.testing.assert_array_equal(g(arr([1, 2]), n=3), [3, 6])
    np.testing.assert_array_equal(g(arr([1, 2]), 4), [4, 8])  # positional use of a static name


def test_static_argnums_and_argnames_both_given_are_not_inferred_from_each_other():
    # As JAX (Flax's nn.jit relies on it): 'b' is static only when passed by keyword, and
    # position 1 stays dynamic although the signature (through __wrapped__) names it 'b'.
    seen = []

    @functools.wraps(lambda a, b: None)
    def f(*args, **kwargs):
        seen.append(args[1] if len(args) > 1 else kwargs["b"])
        return args[0]

    jitted = xjax.jit(f, static_argnums=(), static_argnames=["b"])
    jitted(1.0, b="hi")
    jitted(1.0, [2.0, 3.0])  # unhashable: an error if position 1 were static
    assert seen[0] == "hi"
    assert all(isinstance(v, xjax.core.Tracer) for v in seen[1])


def test_unhashable_static_argument_is_a_clear_error():
    f = xjax.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(arr([1.0]), [1, 2])


def test_pytree_arguments_and_outputs():
    @xjax.jit
    def f(tree):
        return {"sum": lax.add(tree["a"], tree["b"][0]), "b1": tree["b"][1]}

    out = f({"a": arr([1, 2]), "b": (arr([10, 20]), arr(5))})
    np.testing.assert_array_equal(out["sum"], [11, 22])
    np.testing.assert_array_equal(out["b1"], 5)


def test_python_runs_only_on_a_new_signature():
    calls = []

    @xjax.jit
    def f(x):
        calls.append(x.shape)
        return lax.add(x, x)

    f(arr([1, 2]))
    f(arr([3, 4]))
    assert len(calls) == 1
    f(arr([1, 2, 3]))
    assert len(calls) == 2
    f(arr([1, 2], np.int32))
    assert len(calls) == 3


def test_weak_type_change_retraces():
    calls = []

    def f(x):
        calls.append(1)
        return x

    jf = xjax.jit(f)
    jf(1.0)                          # weak float32
    jf(arr(1.0))                     # strong float32 scalar: a new signature
    assert len(calls) == 2
    assert jf(1.0).weak_type and not jf(arr(1.0)).weak_type


def test_impure_global_is_baked_in_and_wrappers_share_a_cache():
    namespace = {"lax": lax}
    exec("g = 0.\ndef impure(x):\n    return lax.add(x, g)\n", namespace)
    impure = namespace["impure"]
    assert float(xjax.jit(impure)(4.)) == 4.0
    namespace["g"] = 10.
    assert float(xjax.jit(impure)(5.)) == 5.0          # cached trace: g was read as 0
    with pytest.warns(xjax.errors.ImpureFunctionWarning, match="'g' was 0.0, now 10.0"):
        assert xjax.jit(impure)(arr([4.])).tolist() == [14.0]  # new signature retraces


def test_nested_jit_is_a_call_primitive():
    inner = xjax.jit(lambda x: lax.sin(x))

    def outer(x):
        return lax.mul(inner(x), 2.0)

    text = str(xjax.make_jaxpr(outer)(arr([1.0, 2.0])))
    assert "jit[" in text and "sin" in text
    got = xjax.jit(outer)(arr([1.0, 2.0]))
    np.testing.assert_allclose(got, 2 * np.sin([1.0, 2.0]), rtol=1e-6)


def test_lower_as_text_and_compile():
    f = xjax.jit(lambda x: lax.add(x, 1.0))
    lowered = f.lower(arr([1.0, 2.0]))
    text = lowered.as_text()
    assert "func.func public @main" in text and "stablehlo.add" in text
    compiled = lowered.compile()
    np.testing.assert_array_equal(compiled(arr([1.0, 2.0])), [2.0, 3.0])


def test_print_inside_jit_shows_the_tracer(capsys):
    @xjax.jit
    def f(x):
        print(f"x = {x}")
        return x

    f(np.zeros((3, 4), np.float32))
    assert "x = Traced<ShapedArray(float32[3,4])>" in capsys.readouterr().out


def test_bool_of_tracer_names_function_and_argument():
    @xjax.jit
    def choose(x, neg):
        return lax.neg(x) if neg else x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        choose(1, True)
    message = str(info.value)
    assert "Attempted boolean conversion of traced array with shape bool[]" in message
    assert "the function choose" in message and "argument neg" in message
    assert isinstance(info.value, errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)


def test_concreteness_error_classes():
    with pytest.raises(errors.ConcretizationTypeError):
        xjax.jit(lambda x: int(x))(1)
    with pytest.raises(errors.TracerIntegerConversionError):
        xjax.jit(lambda x: list(range(x)))(3)
    with pytest.raises(errors.TracerArrayConversionError):
        xjax.jit(lambda x: np.asarray(x))(arr([1.0]))


def test_escaped_tracer_is_an_unexpected_tracer_error():
    leaked = []

    @xjax.jit
    def f(x):
        leaked.append(x)
        return x

    f(arr([1.0]))
    with pytest.raises(errors.UnexpectedTracerError):
        lax.add(leaked[0], 1.0)


def test_make_jaxpr_format():
    def f(x, y):
        return lax.mul(lax.add(x, 1.0), y)

    text = str(xjax.make_jaxpr(f)(np.ones((3, 4), np.float32), np.ones((3, 4), np.float32)))
    assert text == ("{ lambda ; a:f32[3,4] b:f32[3,4]. let\n"
                    "    c:f32[3,4] = add a 1.0:f32[]\n"
                    "    d:f32[3,4] = mul c b\n"
                    "  in (d,) }")


def test_closure_constants_become_constvars():
    big = arr(np.arange(1000.0))
    f = lambda x: lax.add(x, big)  # noqa: E731
    text = str(xjax.make_jaxpr(f)(arr(np.zeros(1000))))
    assert text.startswith("{ lambda a:f32[1000]; b:f32[1000]. let")
    np.testing.assert_array_equal(xjax.jit(f)(arr(np.ones(1000))), np.arange(1000.0) + 1)


def test_jit_results_are_asynchronous_arrays():
    f = xjax.jit(lambda x: lax.mul(x, x))
    y = f(arr(np.arange(4.0)))
    assert y.block_until_ready() is y
    np.testing.assert_array_equal(np.asarray(y), [0, 1, 4, 9])


def test_library_never_imports_jax():
    code = ("import sys, numpy as np, xjax\n"
            "from xjax import lax\n"
            "xjax.jit(lambda x: lax.add(x, 1.0))(xjax.Array(np.ones(3, np.float32)))\n"
            "bad = [m for m in sys.modules if m == 'jax' or m.startswith(('jax.', 'jaxlib'))]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_jaxpr_prints_enum_params_and_equations_without_outputs_as_jax():
    key = xjax.numpy.zeros(4, xjax.numpy.uint32)
    text = str(xjax.make_jaxpr(lambda k: xjax.lax.rng_bit_generator(k, (2,)))(key))
    assert "algorithm=RNG_DEFAULT" in text
    text = str(xjax.make_jaxpr(xjax.lax.dce_sink)(1.5))
    assert "let dce_sink[prevent_mlir_dce=False] a in ()" in text


def test_jaxprs_print_as_jax_for_derivatives_slices_and_scalar_dots():
    """Measured on JAX 0.10.2: unused outputs print as ``_``, summed (co)tangents as
    ``add_any``, slices with JAX's bounds, a dot of scalars as dot_general."""
    x = xjax.numpy.arange(4.0)
    text = str(xjax.make_jaxpr(xjax.grad(lambda x: xjax.numpy.tanh(x).sum()))(x))
    assert "_:f32[] = reduce_sum" in text and "g:f32[4] = add_any e f" in text
    text = str(xjax.make_jaxpr(lambda x: x[::2])(x))
    assert "slice[limit_indices=(4,) start_indices=(0,) strides=(2,)]" in text
    text = str(xjax.make_jaxpr(lambda a: xjax.numpy.dot(a, a))(1.0))
    assert "dimension_numbers=(([], []), ([], []))" in text
    text = str(xjax.make_jaxpr(lambda x: xjax.numpy.max(x, initial=-1.0))(x))
    assert "max -1.0:f32[] b" in text


def test_nested_jit_jaxprs_share_the_call_site_names_as_jax():
    """JAX names a jit's inner inputs and outputs after the call's operands and results,
    and keeps the trailing space of an equation with no operands."""
    text = str(xjax.make_jaxpr(xjax.nn.softplus)(1.0))
    assert text.startswith("{ lambda ; a:f32[]. let\n    b:f32[] = jit[\n      name=softplus\n"
                           "      jaxpr={ lambda ; a:f32[]. let\n          b:f32[] = custom_jvp_call[\n"
                           "            name=logaddexp\n")
    assert "in (b,) }" in text
    text = str(xjax.make_jaxpr(lambda: xjax.numpy.arange(3))())
    assert "iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n" in text


def test_jnp_stack_of_a_list_binds_the_stack_primitive_as_jax():
    x = xjax.numpy.ones((2, 3))
    text = str(xjax.make_jaxpr(lambda x: xjax.numpy.stack([x, x], axis=1))(x))
    assert "b:f32[2,2,3] = stack[axis=1] a a" in text


def test_nested_jaxpr_params_break_lines_as_jax_counting_the_key():
    """JAX lays a nested jaxpr on one line only when ``key={...}`` fits in 80 columns."""
    x = xjax.numpy.ones((2, 3))
    text = str(xjax.make_jaxpr(
        lambda x: xjax.lax.while_loop(lambda v: v.sum() < 100, lambda v: v * 2, x))(x))
    assert "      body_jaxpr={ lambda ; c:f32[2,3]. let\n          d:f32[2,3] = mul c 2.0:f32[]\n" \
        in text


def test_shape_dtype_struct_like():
    like = xjax.ShapeDtypeStruct.like
    s = like(np.ones((2, 3), np.int8))
    assert (s.shape, s.dtype, s.weak_type) == ((2, 3), np.int8, False)
    assert repr(like(1.0)) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert like(np.float64(1)).dtype == np.float32 and not like(np.float64(1)).weak_type
    assert like(xjax.ShapeDtypeStruct((2,), np.float32, weak_type=True)).weak_type
    seen = []
    xjax.jit(lambda t: seen.append(like(t)) or t)(arr([1.0, 2.0]))
    assert seen == [xjax.ShapeDtypeStruct((2,), np.float32)]
    with pytest.raises(NotImplementedError, match="Ref/AbstractRef"):
        like(xjax.new_ref(arr([1.0])))


def test_jit_takes_in_and_out_shardings():
    # Flax's nnx.jit passes them to jax.jit; they are checked, then place values.
    from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(xjax.devices()[:1]), ("x",))
    f = xjax.jit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P("x")),
                 out_shardings=NamedSharding(mesh, P()))
    np.testing.assert_array_equal(f(xjax.numpy.arange(3.0)), np.arange(3.0) * 2)
    with pytest.raises(TypeError, match="PartitionSpec instances or None"):
        xjax.jit(lambda x: x, in_shardings="x")


def test_jit_compiler_options_reach_xla(tmp_path):
    f = lambda x: xjax.numpy.sin(x) * 2  # noqa: E731
    x = np.arange(4.0, dtype=np.float32)
    plain = xjax.jit(f)(x)
    # the same function: the options make their own cache entry (else nothing is dumped)
    dumped = xjax.jit(f, compiler_options={"xla_dump_to": str(tmp_path / "jit")})(x)
    assert any((tmp_path / "jit").iterdir())
    np.testing.assert_array_equal(plain, dumped)
    # lower(...).compile(options) adds its own on top of jit's
    aot = xjax.jit(f, compiler_options={"xla_dump_to": str(tmp_path / "aot")}).lower(x)
    np.testing.assert_array_equal(aot.compile({"xla_cpu_use_fusion_emitters": False})(x), plain)
    assert any((tmp_path / "aot").iterdir())
    with pytest.raises(xjax.errors.JaxRuntimeError, match="xla_no_such_option"):
        xjax.jit(f, compiler_options={"xla_no_such_option": 1})(x)
    with pytest.raises(NotImplementedError, match="optimization_level"):
        xjax.jit(f, compiler_options={"optimization_level": 1})
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        xjax.jit(f, compiler_options=["xla_dump_to"])


def test_in_shardings_none_allows_keyword_arguments():
    from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    add = lambda x, y=1: x + y  # noqa: E731
    np.testing.assert_array_equal(
        xjax.jit(add, in_shardings=None, out_shardings=None)(np.ones(2), y=np.ones(2)), [2, 2])
    mesh = Mesh(np.array(xjax.devices()[:1]), ("x",))
    with pytest.raises(ValueError, match="does not support kwargs"):
        xjax.jit(add, in_shardings=(NamedSharding(mesh, P()),))(np.ones(2), y=np.ones(2))


def test_ensure_compile_time_eval_folds_constants_and_traces_the_rest():
    # JAX's eager constant folding; Equinox's error_if binds traced values inside the block.
    kinds = []

    @xjax.jit
    def f(x):
        with xjax.ensure_compile_time_eval():
            table = xjax.numpy.arange(3.0) * 2
            y = x * table
            kinds.extend([type(table) is Array, isinstance(y, xjax.core.Tracer)])
        return y

    np.testing.assert_array_equal(f(xjax.numpy.ones(3)), [0.0, 2.0, 4.0])
    assert kinds == [True, True]
    with xjax.ensure_compile_time_eval():  # outside any trace: plain evaluation
        assert type(xjax.numpy.ones(2) + 1) is Array


def test_a_jitted_function_has_the_signature_of_the_function():
    # Chex's fake_pmap reads it with follow_wrapped=False, as JAX's PjitFunction gives it.
    import inspect

    def f(x, y=1, *, z=2):
        return x

    assert str(inspect.signature(xjax.jit(f), follow_wrapped=False)) == "(x, y=1, *, z=2)"


def test_shape_structs_of_key_arrays_have_the_key_type():
    key = xjax.random.key(0)
    struct = xjax.ShapeDtypeStruct((), key.dtype)
    assert struct.dtype == key.dtype and struct.shape == ()
    keys, scalar = xjax.eval_shape(lambda: (xjax.random.split(key, 3), 1.0))
    assert keys == xjax.ShapeDtypeStruct((3,), key.dtype)
    assert scalar == xjax.ShapeDtypeStruct((), np.float32)
    assert xjax.eval_shape(lambda: key) == struct
    assert xjax.jit(lambda: key).eval_shape() == struct


class _SlottedScale:
    """A callable that cannot be weakly referenced (no __weakref__ slot)."""

    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def test_dead_unweakrefable_callables_do_not_hand_their_executables_to_new_ones():
    # Such callables used to share caches by id(); a new object reusing a dead one's id ran
    # the dead one's executable (46 of 50 wrong here before the fix).
    for k in range(50):
        f = xjax.jit(_SlottedScale(float(k)))
        assert float(f(np.float32(1.0))) == k
        del f
    f, g = xjax.jit(_SlottedScale(2.0)), xjax.jit(_SlottedScale(3.0))
    assert float(f(1.0)) == 2.0 and float(g(1.0)) == 3.0
    xjax.clear_caches()
    assert float(f(1.0)) == 2.0 and float(g(1.0)) == 3.0


def test_jit_inline_stages_the_equations_themselves_as_jax():
    """Measured on JAX 0.10.2: under any trace a ``jit(inline=True)`` function leaves its
    equations, not a jit equation (nn.sigmoid is one); called eagerly it runs compiled."""
    f = xjax.jit(lambda x: xjax.numpy.sin(x) * 2, inline=True)
    for text in (str(xjax.make_jaxpr(lambda x: f(x) + 1)(1.0)),
                 str(xjax.make_jaxpr(xjax.vmap(lambda x: f(x) + 1))(xjax.numpy.ones(3))),
                 str(xjax.make_jaxpr(xjax.grad(lambda x: f(x) + 1))(1.0))):
        assert "sin a" in text and "name=<lambda>" not in text
    nested = str(xjax.make_jaxpr(xjax.jit(lambda x: f(x) + 1))(1.0))
    assert nested.count("jit[") == 1  # the outer jit only
    assert str(xjax.make_jaxpr(xjax.nn.sigmoid)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = logistic a in (b,) }")
    np.testing.assert_allclose(float(f(1.0)), 2 * np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(float(xjax.grad(f)(1.0)), 2 * np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.vmap(f)(xjax.numpy.ones(2))),
                               2 * np.sin([1.0, 1.0]), rtol=1e-6)
