"""JAX-internal behaviour Equinox's own tests found missing in xjax's adapters and jaxprs:
calling a ``jax.extend.core.Primitive``'s ``impl`` on tracers, ``JaxprEqn.effects`` and
rebinding equations with ``get_bind_params`` (JAX's convention since 0.9.2).

References: NumPy; JAX where installed.
"""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.core import ShapedArray
from xjax.extend import core
import xjax.interpreters.ad  # noqa: F401  (the jvp rule table the tests fill)
import xjax.interpreters.mlir  # noqa: F401


def _twice_primitive(name):
    """A primitive with an impl written in xjax operations, as Equinox's wrapper primitives
    (``unvmap_any`` and the like) are."""
    p = core.Primitive(name)
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda aval: ShapedArray(aval.shape, aval.dtype))
    return p


def test_impl_called_on_tracers_traces_the_users_impl():
    # Equinox's finalise_jaxpr calls ``p.impl`` while tracing, to inline the primitive.
    twice_p = _twice_primitive("twice_for_impl_on_tracers")
    closed = xjax.make_jaxpr(lambda x: twice_p.impl(x) + 1)(jnp.ones(3))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul", "add"]
    out = xjax.jit(lambda x: twice_p.impl(x))(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])


def test_impl_called_on_an_array_returns_the_users_result():
    twice_p = _twice_primitive("twice_for_impl_on_arrays")
    out = twice_p.impl(jnp.arange(3))
    assert isinstance(out, xjax.Array)
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    # eager bind still evaluates through the same rule
    np.testing.assert_array_equal(np.asarray(twice_p.bind(jnp.arange(3))), [0, 2, 4])


def test_equations_and_jaxprs_report_no_effects():
    closed = xjax.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0)
    assert all(eqn.effects == set() for eqn in closed.jaxpr.eqns)
    assert closed.jaxpr.effects == set() and closed.effects == set()
    assert closed.jaxpr.eqns[0].effects is core.no_effects


def test_effects_match_jax():
    jax = pytest.importorskip("jax")
    fun = lambda x: jnp.cos(x) + 1.0
    theirs = jax.make_jaxpr(lambda x: jax.numpy.cos(x) + 1.0)(1.0)
    ours = xjax.make_jaxpr(fun)(1.0)
    assert [e.effects for e in ours.jaxpr.eqns] == [e.effects for e in theirs.jaxpr.eqns]


def _custom_jvp_equation():
    @xjax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), 3.0 * tangents[0]))
    closed = xjax.make_jaxpr(f)(0.5)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == "custom_jvp_call"
    return eqn


def test_get_bind_params_returns_params_as_in_jax():
    closed = xjax.make_jaxpr(lambda x: x * 2)(1.0)
    params = closed.jaxpr.eqns[0].primitive.get_bind_params(closed.jaxpr.eqns[0].params)
    assert type(params) is dict and params == closed.jaxpr.eqns[0].params


def test_custom_jvp_call_trades_its_jaxpr_for_subfuns():
    eqn = _custom_jvp_equation()
    params = eqn.primitive.get_bind_params(eqn.params)
    assert set(params) == {"subfuns", "symbolic_zeros"}
    fun, jvp = params["subfuns"]
    # the primal as a wrapped function (Equinox inlines it this way)
    np.testing.assert_allclose(np.asarray(fun.call_wrapped(0.5)[0]), np.sin(0.5), rtol=1e-6)
    # the rule in JAX's flat convention: primals then tangents in, outputs then tangents out
    out, tangent = jvp.call_wrapped(0.5, 1.0)
    np.testing.assert_allclose(np.asarray(out), np.sin(0.5), rtol=1e-6)
    assert float(tangent) == 3.0


def test_custom_jvp_call_rebinds_from_its_subfuns():
    eqn = _custom_jvp_equation()
    params = eqn.primitive.get_bind_params(eqn.params)

    def rebound(x):
        return eqn.primitive.bind(x, **params)[0]

    np.testing.assert_allclose(np.asarray(xjax.jit(rebound)(0.5)), np.sin(0.5), rtol=1e-6)
    # the user's rule survives the round trip
    _, tangent = xjax.jvp(rebound, (0.5,), (1.0,))
    assert float(tangent) == 3.0
    with pytest.raises(NotImplementedError, match="subfuns"):
        eqn.primitive.bind(0.5, subfuns=(lambda x: x, lambda x, t: (x, t)),
                           symbolic_zeros=False)


def _identity_with_python_rule(module, name):
    """An identity primitive (of ``module``: xjax or JAX) whose jvp rule returns Python
    tangents as given: the rule passes them through a function that binds only arrays,
    as Equinox's ``nondifferentiable_backward`` does."""
    p = module.extend.core.Primitive(name)
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda aval: aval)
    mlir = module.interpreters.mlir
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))

    def identity(x):
        return x if isinstance(x, float) else p.bind(x)

    module.interpreters.ad.primitive_jvps[p] = lambda primals, tangents: (
        identity(primals[0]), identity(tangents[0]))
    return identity


def test_user_jvp_rules_keep_python_scalars():
    identity = _identity_with_python_rule(xjax, "identity_with_python_rule")
    out, tangent = xjax.jvp(identity, (1.0,), (2.0,))
    assert (out, tangent) == (1.0, 2.0) and type(tangent) is float
    # under jit the tangent is traced, and comes back an array
    out, tangent = xjax.jit(lambda x, t: xjax.jvp(identity, (x,), (t,)))(1.0, 2.0)
    assert isinstance(tangent, xjax.Array) and float(tangent) == 2.0


def test_user_jvp_rules_keep_python_scalars_as_jax():
    jax = pytest.importorskip("jax")
    import jax.extend.core  # noqa: F401
    import jax.interpreters.ad  # noqa: F401
    import jax.interpreters.mlir  # noqa: F401
    theirs = _identity_with_python_rule(jax, "identity_with_python_rule_jax")
    ours = _identity_with_python_rule(xjax, "identity_with_python_rule_ours")
    assert [type(v) for v in jax.jvp(theirs, (1.0,), (2.0,))] == \
        [type(v) for v in xjax.jvp(ours, (1.0,), (2.0,))]
