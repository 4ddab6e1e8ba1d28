"""Checkpoint policies: what ``checkpoint`` saves and recomputes under each of
``jax.checkpoint_policies``, ``checkpoint_name``, ``print_saved_residuals`` and
``jax.ad_checkpoint``'s other names."""

import contextlib
import inspect
import io
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.transformations.checkpoint import checkpoint_name, print_saved_residuals, saved_residuals

P = xjax.checkpoint_policies
RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (2, 3)).astype(np.float32)
W = RNG.uniform(-1, 1, (3, 3)).astype(np.float32)


def _f(x, w, np_=jnp, name=checkpoint_name):
    """A dot, a named sin, a batched dot and a second dot: something for every policy."""
    y = name(np_.sin(x @ w), "a")
    z = np_.einsum("bi,bi->b", y, x)
    return np_.sum(np_.sin(name(z, "b"))) + np_.sum(np_.cos(y @ w))


# (label, how to build the policy from a checkpoint_policies namespace)
POLICIES = [
    ("nothing_saveable", lambda p: p.nothing_saveable),
    ("everything_saveable", lambda p: p.everything_saveable),
    ("dots_saveable", lambda p: p.dots_saveable),
    ("checkpoint_dots", lambda p: p.checkpoint_dots),
    ("dots_with_no_batch_dims_saveable", lambda p: p.dots_with_no_batch_dims_saveable),
    ("save_only_these_names", lambda p: p.save_only_these_names("a")),
    ("save_any_names_but_these", lambda p: p.save_any_names_but_these("a")),
    ("save_anything_except_these_names", lambda p: p.save_anything_except_these_names("a")),
    ("save_from_both_policies",
     lambda p: p.save_from_both_policies(p.dots_with_no_batch_dims_saveable,
                                         p.save_only_these_names("b"))),
    ("offload_dot_with_no_batch_dims",
     lambda p: p.offload_dot_with_no_batch_dims("device", "pinned_host")),
    ("save_and_offload_only_these_names",
     lambda p: p.save_and_offload_only_these_names(
         names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
         offload_src="device", offload_dst="pinned_host")),
    ("user_policy", lambda p: (lambda prim, *avals, **params: prim.name == "sin")),
]
POLICY_IDS = [label for label, _ in POLICIES]


def _numeric_grad(f, x, eps=1e-3):
    """Central differences in float64 (an independent reference)."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _backward_bodies(closed):
    """The bodies of the differentiated checkpoints (what the backward pass recomputes)."""
    out = []
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name == "checkpoint" and eqn.params["differentiated"]:
            out.append(eqn.params["jaxpr"].jaxpr)
    return out


def _prims(jaxpr):
    return sorted(e.primitive.name for e in jaxpr.eqns)


def _dead_eqns(jaxpr):
    """Equations none of whose outputs is read later or returned."""
    read = {v for v in jaxpr.outvars}
    dead = []
    for eqn in reversed(jaxpr.eqns):
        if not any(v in read for v in eqn.outvars):
            dead.append(eqn.primitive.name)
        read.update(eqn.invars)
    return dead


def _residual_kinds(f, *args):
    """Residuals as (shape-dtype, where-from without the source location)."""
    return [(a.str_short(short_dtypes=True), src.split(" from ")[0] if " from " in src and
             not src.startswith("from") else src) for a, src in saved_residuals(f, *args)]


# -- values --

@pytest.mark.parametrize("label,make", POLICIES, ids=POLICY_IDS)
def test_grad_matches_plain_and_finite_differences(label, make):
    g = xjax.checkpoint(_f, policy=make(P))
    got = xjax.grad(g, argnums=(0, 1))(X, W)
    want = xjax.grad(_f, argnums=(0, 1))(X, W)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    fd = _numeric_grad(lambda x: _f(x, W.astype(np.float64), np, lambda v, n: v), X)
    np.testing.assert_allclose(got[0], fd, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("label,make", POLICIES, ids=POLICY_IDS)
def test_grad_under_jit_and_of_jit(label, make):
    g = xjax.checkpoint(_f, policy=make(P))
    want = xjax.grad(_f)(X, W)
    np.testing.assert_allclose(xjax.jit(xjax.grad(g))(X, W), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xjax.grad(xjax.jit(g))(X, W), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("label,make", POLICIES[2:6], ids=POLICY_IDS[2:6])
def test_second_order(label, make):
    g = xjax.checkpoint(_f, policy=make(P))

    def hvp(fun):
        return xjax.grad(lambda x: jnp.sum(xjax.grad(fun)(x, W) ** 2))(X)

    np.testing.assert_allclose(hvp(g), hvp(_f), rtol=1e-4, atol=1e-5)


# -- what is saved and what is recomputed --

def _simple(x, w):
    return jnp.sum(jnp.sin(checkpoint_name(jnp.sin(x @ w), "a")))


def _backward(policy):
    g = xjax.checkpoint(_simple, policy=policy)
    bodies = _backward_bodies(xjax.make_jaxpr(xjax.grad(g))(X, W))
    assert len(bodies) == 1
    return bodies[0]


def test_nothing_saveable_recomputes_everything():
    body = _backward(P.nothing_saveable)
    # the forward dot again, and the transpose's dot; both sins' inputs are recomputed
    assert _prims(body).count("dot_general") == 2
    assert _prims(body).count("sin") == 1
    assert _residual_kinds(xjax.checkpoint(_simple), X, W) == [
        ("f32[2,3]", "from the argument x"), ("f32[3,3]", "from the argument w")]


def test_dots_saveable_saves_the_dot_and_recomputes_sin():
    body = _backward(P.dots_saveable)
    assert _prims(body).count("dot_general") == 1  # only the transpose's
    assert "sin" in _prims(body)
    kinds = _residual_kinds(xjax.checkpoint(_simple, policy=P.dots_saveable), X, W)
    assert ("f32[2,3]", "output of dot_general") in kinds


def test_save_only_these_names_saves_the_named_value():
    body = _backward(P.save_only_these_names("a"))
    assert "name" not in _prims(body) and "sin" not in _prims(body)
    kinds = _residual_kinds(xjax.checkpoint(_simple, policy=P.save_only_these_names("a")),
                            X, W)
    assert ("f32[2,3]", "named 'a'") in kinds
    other = _residual_kinds(xjax.checkpoint(_simple, policy=P.save_only_these_names("z")),
                            X, W)
    assert all("named" not in src for _, src in other)


def test_save_any_names_but_these_excludes_the_names():
    saved = _residual_kinds(xjax.checkpoint(_simple, policy=P.save_any_names_but_these("z")),
                            X, W)
    excluded = _residual_kinds(
        xjax.checkpoint(_simple, policy=P.save_any_names_but_these("a")), X, W)
    assert ("f32[2,3]", "named 'a'") in saved
    assert all("named" not in src for _, src in excluded)


def test_offload_policies_save():
    policy = P.offload_dot_with_no_batch_dims("device", "pinned_host")
    assert _prims(_backward(policy)).count("dot_general") == 1


def test_everything_saveable_recomputes_nothing():
    g = xjax.checkpoint(_simple, policy=P.everything_saveable)
    closed = xjax.make_jaxpr(xjax.grad(g))(X, W)
    assert not _backward_bodies(closed)
    text = str(closed)
    assert text.count("sin") == 2  # the forward's only


@pytest.mark.parametrize("label,make", POLICIES, ids=POLICY_IDS)
def test_recomputation_has_no_dead_code(label, make):
    g = xjax.checkpoint(_f, policy=make(P))
    for body in _backward_bodies(xjax.make_jaxpr(xjax.grad(g))(X, W)):
        assert not _dead_eqns(body)


def test_user_policy_gets_primitive_avals_and_params():
    seen = []

    def policy(prim, *avals, **params):
        seen.append((prim.name, tuple(a.shape for a in avals), sorted(params)))
        return prim.name == "sin"

    xjax.grad(xjax.checkpoint(_simple, policy=policy))(X, W)
    assert ("dot_general", ((2, 3), (3, 3)),
            ["dimension_numbers", "preferred_element_type"]) in [
        (n, s, [k for k in p if k in ("dimension_numbers", "preferred_element_type")])
        for n, s, p in seen]
    assert ("name", ((2, 3),), ["name"]) in seen


def test_policy_answers_saveable_and_recompute():
    from xjax.ad_checkpoint import Offloadable, Recompute, Saveable

    def policy(prim, *_, **__):
        if prim.name == "dot_general":
            return Offloadable("device", "pinned_host")
        return Saveable if prim.name == "sin" else Recompute

    body = _backward(policy)
    assert "sin" not in _prims(body) and _prims(body).count("dot_general") == 1


# -- compositions --

def test_nested_checkpoints():
    inner = xjax.checkpoint(lambda x, w: jnp.sin(x @ w), policy=P.dots_saveable)
    for outer_policy in (None, P.dots_saveable, P.save_only_these_names("a")):
        outer = xjax.checkpoint(
            lambda x, w: jnp.sum(jnp.cos(checkpoint_name(inner(x, w), "a") @ w)),
            policy=outer_policy)
        plain = lambda x, w: jnp.sum(jnp.cos(jnp.sin(x @ w) @ w))  # noqa: E731
        for a, b in zip(xjax.grad(outer, (0, 1))(X, W), xjax.grad(plain, (0, 1))(X, W)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpoint_under_vmap():
    g = xjax.checkpoint(_f, policy=P.dots_saveable)
    xs = np.stack([X, 2 * X])
    got = xjax.vmap(xjax.grad(g), in_axes=(0, None))(xs, W)
    want = np.stack([xjax.grad(_f)(x, W) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = xjax.grad(lambda xs: jnp.sum(xjax.vmap(g, in_axes=(0, None))(xs, W)))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_jit_inside_checkpoint():
    body = xjax.jit(lambda x, w: jnp.sin(jnp.sin(x @ w) @ w))
    g = xjax.checkpoint(lambda x, w: jnp.sum(body(x, w)), policy=P.dots_saveable)
    plain = lambda x, w: jnp.sum(jnp.sin(jnp.sin(x @ w) @ w))  # noqa: E731
    np.testing.assert_allclose(xjax.grad(g)(X, W), xjax.grad(plain)(X, W), rtol=1e-5)
    kinds = _residual_kinds(g, X, W)
    assert kinds.count(("f32[2,3]", "output of dot_general")) == 2


def test_scan_inside_and_around_checkpoint():
    def scanned(x, w):
        def step(c, _):
            return jnp.sin(c @ w), None
        return jnp.sum(lax.scan(step, x, None, length=3)[0])

    step_ck = xjax.checkpoint(lambda c, w: jnp.sin(c @ w), policy=P.dots_saveable)

    def around(x, w):
        return jnp.sum(lax.scan(lambda c, _: (step_ck(c, w), None), x, None, length=3)[0])

    want = xjax.grad(scanned, (0, 1))(X, W)
    for fun in (xjax.checkpoint(scanned, policy=P.dots_saveable), around):
        for a, b in zip(xjax.grad(fun, (0, 1))(X, W), want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_static_argnums():
    def f(x, w, n):
        for _ in range(n):  # Python control flow on the static argument
            x = jnp.sin(x @ w)
        return jnp.sum(x)

    g = xjax.checkpoint(f, static_argnums=(2,), policy=P.dots_saveable)
    g_neg = xjax.checkpoint(f, static_argnums=-1, policy=P.dots_saveable)
    for n in (1, 2):
        want = xjax.grad(f)(X, W, n)
        np.testing.assert_allclose(xjax.grad(g)(X, W, n), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(xjax.grad(g_neg)(X, W, n), want, rtol=1e-5, atol=1e-6)
    assert len(_residual_kinds(lambda x, w: g(x, w, 2), X, W)) == 2 + 2


def test_keyword_arguments():
    h = xjax.checkpoint(lambda x, *, scale: jnp.sin(x @ W) * scale, policy=P.dots_saveable)
    got = xjax.grad(lambda x: jnp.sum(h(x, scale=2.0)))(X)
    want = xjax.grad(lambda x: jnp.sum(jnp.sin(x @ W) * 2.0))(X)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_prevent_cse_puts_the_recomputation_behind_a_barrier():
    f = lambda x: jnp.sin(jnp.sin(x))  # noqa: E731
    guarded = xjax.jit(xjax.grad(xjax.checkpoint(f))).lower(1.0).as_text()
    unguarded = xjax.jit(xjax.grad(xjax.checkpoint(f, prevent_cse=False))).lower(1.0).as_text()
    assert "optimization_barrier" in guarded
    assert "optimization_barrier" not in unguarded
    per_arg = xjax.checkpoint(lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False))
    np.testing.assert_allclose(xjax.jit(xjax.grad(per_arg))(0.5, 2.0), 2 * np.cos(0.5),
                               rtol=1e-6)


# -- checkpoint_name --

def test_checkpoint_name_is_the_identity():
    tree = {"a": np.arange(3.0, dtype=np.float32), "b": (np.float32(2.0),)}
    out = checkpoint_name(tree, "t")
    np.testing.assert_array_equal(out["a"], tree["a"])
    np.testing.assert_array_equal(out["b"][0], 2.0)
    np.testing.assert_array_equal(xjax.jit(lambda x: checkpoint_name(x, "t"))(X), X)
    np.testing.assert_array_equal(xjax.vmap(lambda x: checkpoint_name(x, "t"))(X), X)
    np.testing.assert_allclose(xjax.grad(lambda x: jnp.sum(checkpoint_name(x, "t") ** 2))(X),
                               2 * X, rtol=1e-6)
    t = xjax.linear_transpose(lambda x: checkpoint_name(x, "t") * 3.0, X)(np.ones_like(X))
    np.testing.assert_allclose(t[0], 3.0 * np.ones_like(X))


def test_checkpoint_name_in_a_jaxpr():
    text = str(xjax.make_jaxpr(lambda x: checkpoint_name(x * 2, "a"))(1.0))
    assert "c:f32[] = name[name=a] b" in text
    tangent_text = str(xjax.make_jaxpr(lambda x: xjax.jvp(
        lambda y: checkpoint_name(y, "a"), (x,), (x,)))(1.0))
    assert tangent_text.count("name[") == 1  # the primal only, as in JAX


# -- print_saved_residuals --

def _printed(f, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(f, *args)
    return buf.getvalue().splitlines()


def test_print_saved_residuals_format():
    lines = _printed(xjax.checkpoint(_simple, policy=P.save_only_these_names("a")), X, W)
    line = inspect.getsourcelines(_simple)[1] + 1  # the checkpoint_name call, as JAX names it
    assert lines == ["f32[2,3] from the argument x", "f32[3,3] from the argument w",
                     f"f32[2,3] named 'a' from {os.path.abspath(__file__)}:{line}:27 (_simple)"]
    lines = _printed(lambda d: jnp.sin(d["a"]) * d["b"], {"a": 1.0, "b": 2.0})
    assert lines[0] == "f32[] from the argument d['b']"
    assert lines[1].startswith("f32[] output of ")


# -- errors and the module's names --

def test_bad_policies_raise_jax_errors():
    with pytest.raises(TypeError, match="policy must be a callable"):
        xjax.grad(xjax.checkpoint(jnp.sin, policy=3))(1.0)
    with pytest.raises(TypeError, match="Value returned by a remat policy"):
        xjax.grad(xjax.checkpoint(jnp.sin, policy=lambda *a, **k: 3))(1.0)
    with pytest.raises(TypeError, match="instead of an instantiated"):
        xjax.grad(xjax.checkpoint(jnp.sin, policy=lambda *a, **k: xjax.ad_checkpoint.Offloadable)
                  )(1.0)
    with pytest.raises(ValueError, match="should not intersect"):
        P.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
            offload_src="device", offload_dst="pinned_host")
    both = P.save_from_both_policies(P.dots_saveable,
                                     P.offload_dot_with_no_batch_dims("device", "pinned_host"))
    with pytest.raises(ValueError, match="should be a boolean"):
        xjax.grad(xjax.checkpoint(_simple, policy=both))(X, W)


def test_bad_arguments_raise_jax_errors():
    with pytest.raises(TypeError, match="static_argnums"):
        xjax.checkpoint(jnp.sin, static_argnums="0")
    with pytest.raises(ValueError, match="static_argnums"):
        xjax.grad(xjax.checkpoint(jnp.sin, static_argnums=(3,)))(1.0)
    with pytest.raises(TypeError, match="prevent_cse"):
        xjax.checkpoint(jnp.sin, prevent_cse=1)


def test_ad_checkpoint_names():
    import xjax.ad_checkpoint as adc
    assert adc.checkpoint_policies is xjax.checkpoint_policies
    assert adc.Saveable is not adc.Recompute
    assert adc.Offloadable("a", "b").dst == "b"
    assert P.checkpoint_dots is P.dots_saveable
    assert P.checkpoint_dots_with_no_batch_dims is P.dots_with_no_batch_dims_saveable
    with pytest.raises(AttributeError, match="removed in JAX v0.10.0; use jax.checkpoint"):
        adc.checkpoint  # noqa: B018
    with pytest.raises(AttributeError, match="use jax.remat instead"):
        adc.remat  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        adc.nope  # noqa: B018


# -- against JAX --

@pytest.mark.parametrize("label,make", POLICIES, ids=POLICY_IDS)
def test_residuals_match_jax(label, make):
    jax = pytest.importorskip("jax")
    from jax.ad_checkpoint import checkpoint_name as jax_name
    if label in ("offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"):
        pytest.skip("JAX moves offloaded residuals to host memory; xjax saves them (one "
                    "memory space), checked in test_offload_policies_save")
    if label == "everything_saveable":
        pytest.skip("xjax splits an everything_saveable checkpoint like jit: same residuals, "
                    "reported as outputs of the jitted split")
    jax_f = jax.checkpoint(lambda x, w: _f(x, w, jax.numpy, jax_name), policy=make(
        jax.checkpoint_policies))
    want = _jax_residual_kinds(jax, jax_f, X, W)
    got = _residual_kinds(xjax.checkpoint(_f, policy=make(P)), X, W)
    assert got == want


def _jax_residual_kinds(jax, f, *args):
    from jax._src.ad_checkpoint import saved_residuals as jax_saved
    return [(a.str_short(short_dtypes=True), src.split(" from ")[0] if " from " in src and
             not src.startswith("from") else src) for a, src in jax_saved(f, *args)]


@pytest.mark.parametrize("label,make", POLICIES[2:9], ids=POLICY_IDS[2:9])
def test_recomputation_matches_jax(label, make):
    jax = pytest.importorskip("jax")
    from jax.ad_checkpoint import checkpoint_name as jax_name
    jax_f = jax.checkpoint(lambda x, w: _f(x, w, jax.numpy, jax_name),
                           policy=make(jax.checkpoint_policies))
    jax_closed = jax.make_jaxpr(jax.grad(jax_f))(X, W)
    jax_bodies = [e.params["jaxpr"] for e in jax_closed.jaxpr.eqns
                  if e.primitive.name == "remat2" and e.params["differentiated"]]
    bodies = _backward_bodies(xjax.make_jaxpr(xjax.grad(xjax.checkpoint(_f, policy=make(P))))(
        X, W))
    assert [_recomputed(b) for b in bodies] == [_recomputed(b) for b in jax_bodies]


def _recomputed(jaxpr):
    """The non-linear primitives of a backward body: what it recomputes."""
    nonlinear = {"sin", "cos", "dot_general", "name", "neg"}
    return sorted(e.primitive.name for e in jaxpr.eqns
                  if e.primitive.name in nonlinear and not _reads_cotangent(jaxpr, e))


def _reads_cotangent(jaxpr, eqn):
    """Whether ``eqn`` depends on the body's last input (the output cotangent)."""
    tainted = {jaxpr.invars[-1]}
    for e in jaxpr.eqns:
        if any(a in tainted for a in e.invars if type(a).__name__ != "Literal"):
            tainted.update(e.outvars)
        if e is eqn:
            return any(v in tainted for v in e.outvars)
    return False
