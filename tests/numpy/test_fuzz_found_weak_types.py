"""Weak types, Python-scalar results and copies that fuzzing found to differ from JAX.

Every expected ``repr`` below was measured with JAX 0.10.2 (``import jax``) and is hard-coded,
so the tests mean something without JAX; ``test_agrees_with_jax`` re-measures them when
JAX is installed.
"""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

W_F = "Array(%s, dtype=float32, weak_type=True)"
S_F = "Array(%s, dtype=float32)"


def _jvp_where(jax, np_):
    return jax.jvp(lambda x: np_.where(x > 0, x, 0.), (1.0,), (1.0,))


def _jvp_jit_const(jax, np_):
    return jax.jvp(jax.jit(lambda x: (x, 2.0)), (1.0,), (1.0,))[1]


# name -> (function of (jax module, numpy module), repr measured with JAX 0.10.2)
CASES = {
    # JAX's lax._const beside a weak scalar is a Python scalar: the bool stays weak
    "logical_not_int": (lambda jax, np_: np_.logical_not(1),
                        "Array(False, dtype=bool, weak_type=True)"),
    "logical_not_float": (lambda jax, np_: np_.logical_not(1.0),
                          "Array(False, dtype=bool, weak_type=True)"),
    "logical_not_bool": (lambda jax, np_: np_.logical_not(True), "Array(False, dtype=bool)"),
    "logical_or_int": (lambda jax, np_: np_.logical_or(1, 0),
                       "Array(True, dtype=bool, weak_type=True)"),
    "logical_and_float": (lambda jax, np_: np_.logical_and(1.0, 0.0),
                          "Array(False, dtype=bool, weak_type=True)"),
    "logical_xor_float_int": (lambda jax, np_: np_.logical_xor(2.0, 0),
                              "Array(True, dtype=bool, weak_type=True)"),
    "logical_and_int_bool": (lambda jax, np_: np_.logical_and(1, True),
                             "Array(True, dtype=bool, weak_type=True)"),
    "logical_or_bools": (lambda jax, np_: np_.logical_or(True, False),
                         "Array(True, dtype=bool)"),
    "logical_not_weak_vector": (lambda jax, np_: np_.logical_not(np_.asarray(2)[None]),
                                "Array([False], dtype=bool)"),
    "jit_logical_not": (lambda jax, np_: jax.jit(np_.logical_not)(2),
                        "Array(False, dtype=bool, weak_type=True)"),
    "jit_logical_xor": (lambda jax, np_: jax.jit(np_.logical_xor)(2.0, 0.0),
                        "Array(True, dtype=bool, weak_type=True)"),
    "hypot_scalars": (lambda jax, np_: np_.hypot(3.0, 4.0), W_F % "5."),
    "heaviside_scalars": (lambda jax, np_: np_.heaviside(-1.0, 0.5), W_F % "0."),
    # stacking promotes, and promotion never gives a weak bool
    "stack_weak_bools": (lambda jax, np_: np_.stack([np_.equal(1, 2), np_.equal(1, 1)]),
                         "Array([False,  True], dtype=bool)"),
    "stack_weak_bools_of_logical_not": (
        lambda jax, np_: np_.stack([np_.logical_not(1), np_.logical_not(0)]),
        "Array([False,  True], dtype=bool)"),
    "hstack_weak_bools": (lambda jax, np_: np_.hstack([np_.logical_not(1), np_.logical_not(0)]),
                          "Array([False,  True], dtype=bool)"),
    # one array is returned as it is, unpromoted
    "vstack_one_weak_bool": (lambda jax, np_: np_.vstack([np_.logical_not(1)]),
                             "Array([[False]], dtype=bool, weak_type=True)"),
    "stack_python_bools": (lambda jax, np_: np_.stack([True, False]),
                           "Array([ True, False], dtype=bool)"),
    "stack_python_floats": (lambda jax, np_: np_.stack([1.0, 2.0]),
                            W_F % "[1., 2.]"),
    "lax_concatenate_weak_bools": (
        lambda jax, np_: jax.lax.concatenate([np_.equal(1, 2)[None]] * 2, 0),
        "Array([False, False], dtype=bool, weak_type=True)"),
    # JAX's replacement values are asarray(v, dtype): strong
    "nan_to_num_float": (lambda jax, np_: np_.nan_to_num(2.9), S_F % "2.9"),
    "nan_to_num_int": (lambda jax, np_: np_.nan_to_num(2),
                       "Array(2, dtype=int32, weak_type=True)"),
    "isinf_float": (lambda jax, np_: np_.isinf(1.5), "Array(False, dtype=bool)"),
    "isposinf_float": (lambda jax, np_: np_.isposinf(1.5), "Array(False, dtype=bool)"),
    "isclose_ints": (lambda jax, np_: np_.isclose(2, 3), "Array(False, dtype=bool)"),
    "spacing_float": (lambda jax, np_: np_.spacing(1.5), S_F % "1.1920929e-07"),
    # lax._const is strong beside a weak array of rank > 0
    "around_weak_rank2": (lambda jax, np_: np_.around(np_.asarray(2.5)[None, None], 1),
                          S_F % "[[2.5]]"),
    "around_weak_rank0": (lambda jax, np_: np_.around(np_.asarray(2.5), 1), W_F % "2.5"),
    "around_weak_rank2_decimals0": (lambda jax, np_: np_.around(np_.asarray(2.5)[None, None]),
                                    W_F % "[[2.]]"),
    "jit_around_weak_rank2": (
        lambda jax, np_: jax.jit(lambda x: np_.around(x[None, None], -1))(np_.asarray(2.5)),
        S_F % "[[0.]]"),
    "deg2rad_weak_vector": (lambda jax, np_: np_.deg2rad(np_.asarray(180.0)[None]),
                            S_F % "[3.1415927]"),
    # derivatives of Python scalars: zeros and derivative constants keep the weak type
    "grad_selu": (lambda jax, np_: jax.grad(jax.nn.selu)(1.0), W_F % "1.050701"),
    "grad_where": (lambda jax, np_: jax.grad(lambda x: np_.where(x > 0, x, 0.))(1.0),
                   W_F % "1."),
    "jvp_where": (_jvp_where, "(%s, %s)" % (W_F % "1.", W_F % "1.")),
    "jvp_jit_unrelated_output": (_jvp_jit_const, "(%s, %s)" % (W_F % "1.", W_F % "0.")),
    "vjp_zero_cotangent": (lambda jax, np_: jax.vjp(lambda x, y: x * 2, 1.0, 2.0)[1](1.0)[1],
                           W_F % "0."),
    "grad_zero_cotangent": (
        lambda jax, np_: jax.grad(lambda x, y: x, argnums=(0, 1))(1.0, 2.0)[1], W_F % "0."),
    "grad_cbrt_tile": (lambda jax, np_: jax.grad(lambda x: np_.cbrt(np_.tile(x, 2)).sum())(1.0),
                       S_F % "0.6666667"),
    "grad_cbrt_scalar": (lambda jax, np_: jax.grad(np_.cbrt)(1.0), W_F % "0.33333334"),
    "grad_square_broadcast": (
        lambda jax, np_: jax.grad(lambda x: (np_.broadcast_to(x, (2,)) ** 2).sum())(1.0),
        S_F % "4."),
    "grad_floor_at_kink": (lambda jax, np_: jax.grad(np_.floor)(1.0), W_F % "0."),
    "grad_ceil_at_kink": (lambda jax, np_: jax.grad(np_.ceil)(1.0), W_F % "0."),
    "grad_round": (lambda jax, np_: jax.grad(np_.round)(1.0), W_F % "0."),
    "grad_stop_gradient": (
        lambda jax, np_: jax.grad(lambda x: jax.lax.stop_gradient(x) * x)(1.0), W_F % "1."),
    "stop_gradient_weak_array": (lambda jax, np_: jax.lax.stop_gradient(np_.asarray(1.0)),
                                 W_F % "1."),
    # vmap hands an unmapped output left unmapped back as the function returned it
    "vmap_float_out_axes_none": (
        lambda jax, np_: jax.vmap(lambda x: 1.0, out_axes=None)(np_.ones(3)), "1.0"),
    "vmap_int_out_axes_none": (
        lambda jax, np_: jax.vmap(lambda x: 1, out_axes=None)(np_.ones(3)), "1"),
    "vmap_tuple_out_axes": (
        lambda jax, np_: jax.vmap(lambda x: (1.0, x), out_axes=(None, 0))(np_.ones(3)),
        "(1.0, Array([1., 1., 1.], dtype=float32))"),
    "vmap_unmapped_arg_out_axes_none": (
        lambda jax, np_: jax.vmap(lambda x, y: y, in_axes=(0, None),
                                  out_axes=None)(np_.ones(3), 2.0), "2.0"),
    "vmap_float_out_axes_0": (lambda jax, np_: jax.vmap(lambda x: 1.0)(np_.ones(3)),
                              W_F % "[1., 1., 1.]"),
    "vmap_float_out_axes_minus_1": (
        lambda jax, np_: jax.vmap(lambda x: 1.0, out_axes=-1)(np_.ones(3)),
        W_F % "[1., 1., 1.]"),
    "jit_vmap_float_out_axes_none": (
        lambda jax, np_: jax.jit(jax.vmap(lambda x: 1.0, out_axes=None))(np_.ones(3)),
        W_F % "1."),
}


def _repr(value):
    return repr(value).replace("ArrayImpl", "Array")


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_measurement(name):
    fn, expected = CASES[name]
    assert _repr(fn(xjax, jnp)) == expected


@pytest.mark.parametrize("name", ["vmap_float_out_axes_none", "vmap_int_out_axes_none"])
def test_vmap_unmapped_python_scalar_is_returned_as_is(name):
    out = CASES[name][0](xjax, jnp)
    assert type(out) in (float, int)


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_jax(name):
    jax = pytest.importorskip("jax")
    import jax.numpy as jax_np
    fn, expected = CASES[name]
    assert _repr(fn(jax, jax_np)) == expected


# -- jnp.array copies: mutating the NumPy source afterwards changes nothing (as in JAX) --


def _copy_then_mutate(make):
    source = np.arange(3.0, dtype=np.float32)
    out = make(source)
    source[0] = 100.0
    return np.asarray(out).tolist()


COPIES = {
    "array_copy_true": lambda x: jnp.array(x, copy=True),
    "array_default": lambda x: jnp.array(x),
    "asarray_copy_true": lambda x: jnp.asarray(x, copy=True),
    "asarray_default": lambda x: jnp.asarray(x),
    "jit_closed_over_array_copy": lambda x: xjax.jit(lambda: jnp.array(x, copy=True))(),
    "jit_closed_over_array": lambda x: xjax.jit(lambda: jnp.array(x))(),
    "jit_closed_over_asarray_copy": lambda x: xjax.jit(lambda: jnp.asarray(x, copy=True))(),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_is_independent_of_the_numpy_source(name):
    assert _copy_then_mutate(COPIES[name]) == [0.0, 1.0, 2.0]


def test_jit_keeps_the_traced_value_of_a_mutated_closure():
    # measured with JAX 0.10.2: the second call still sees the value traced the first time
    source = np.arange(3.0, dtype=np.float32)
    f = xjax.jit(lambda: jnp.array(source, copy=True))
    first = f().tolist()
    source[0] = 100.0
    assert first == f().tolist() == [0.0, 1.0, 2.0]
