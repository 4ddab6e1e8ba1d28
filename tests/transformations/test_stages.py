"""Ahead-of-time stages: jit(f).trace / .lower / .compile (xjax.stages)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import stages


def _f(x, y):
    return {"a": x @ y, "b": jnp.sin(x).sum()}


def test_names_match_jax():
    jax = pytest.importorskip("jax")
    public = {n for n in dir(jax.stages) if not n.startswith("_")}
    assert public <= set(dir(stages))


def test_trace_lower_compile_chain():
    x = jnp.ones((4, 4))
    jitted = xjax.jit(_f)
    traced = jitted.trace(x, y=x)
    assert isinstance(traced, stages.Traced)
    assert "dot_general" in str(traced.jaxpr)
    assert traced.fun_name == "_f"
    assert traced.in_tree == xjax.tree_util.tree_structure(((x,), {"y": x}))
    assert traced.out_info["a"].shape == (4, 4) and traced.out_info["b"].shape == ()
    assert traced.out_avals["b"].dtype == np.float32
    info = traced.args_info
    assert info[0][0].shape == (4, 4) and info[1]["y"].dtype == np.float32
    assert not info[0][0].donated

    lowered = traced.lower()
    assert isinstance(lowered, stages.Lowered)
    text = lowered.as_text()
    assert "func.func" in text and "dot_general" in text
    assert lowered.out_tree == xjax.tree_util.tree_structure({"a": 0, "b": 0})
    assert lowered.compiler_ir() is None
    assert lowered.as_text("hlo").startswith("HloModule ")

    compiled = lowered.compile()
    assert isinstance(compiled, stages.Compiled)
    out = compiled(x, y=x)
    np.testing.assert_allclose(out["a"], np.full((4, 4), 4.0))
    np.testing.assert_allclose(out["b"], 16 * np.sin(1.0), rtol=1e-5)
    assert "func.func" in compiled.as_text()
    assert compiled.runtime_executable() is not None
    assert compiled.out_info["a"].shape == (4, 4)
    assert jitted.lower(x, y=x).compile().in_tree == compiled.in_tree


def test_compiled_checks_its_arguments():
    x = jnp.ones((4, 4))
    compiled = xjax.jit(_f).lower(x, y=x).compile()
    with pytest.raises(TypeError, match="input pytree"):
        compiled(x, x)
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(jnp.ones((3, 3)), y=x)
    with pytest.raises(RuntimeError, match="No such compile option: 'xla_foo'"):
        xjax.jit(_f).lower(x, y=x).compile({"xla_foo": True})


def test_compiler_ir_hlo_gives_the_hlo_text():
    lowered = xjax.jit(lambda x: jnp.sin(x) + 1.0).lower(jnp.ones(3))
    hlo = lowered.compiler_ir(dialect="hlo")
    text = hlo.as_hlo_text()
    assert text.startswith(f"HloModule {hlo.name()}, entry_computation_layout=")
    assert "ENTRY" in text and "sine(" in text and "ROOT" in text
    assert "f32[3]{0} parameter(0)" in text
    for bad in ("mhlo", "foo"):
        with pytest.raises(ValueError, match=f"unknown dialect: {bad}"):
            lowered.compiler_ir(bad)
        with pytest.raises(ValueError, match=f"unknown dialect: {bad}"):
            lowered.as_text(bad)


def test_compile_passes_compiler_options_to_xla():
    f = xjax.jit(lambda x: x * 2.0 + 1.0)
    x = jnp.arange(3.0)
    lowered = f.lower(x)
    assert lowered.compile({}) is not None
    for options in ({"xla_cpu_enable_fast_math": True},
                    {"xla_backend_optimization_level": 0}):
        np.testing.assert_allclose(lowered.compile(options)(x), [1.0, 3.0, 5.0])
    with pytest.raises(RuntimeError, match="'true' is not a valid bool value"):
        lowered.compile({"xla_cpu_enable_fast_math": "true"})
    with pytest.raises(NotImplementedError, match="optimization_level"):
        lowered.compile({"optimization_level": 1})
    np.testing.assert_allclose(f(x), [1.0, 3.0, 5.0])


def test_static_and_donated_arguments():
    x = jnp.arange(3.0)
    g = xjax.jit(lambda x, n: x * n, static_argnums=1)
    compiled = g.lower(x, 2).compile()
    np.testing.assert_allclose(compiled(x), [0.0, 2.0, 4.0])
    assert g.trace(x, 2).in_tree == xjax.tree_util.tree_structure(((x,), {}))
    h = xjax.jit(lambda x, y: x + y, donate_argnums=0)
    info = h.lower(x, x).args_info
    assert info[0][0].donated and not info[0][1].donated
    stats = h.lower(x, x).compile().memory_analysis()
    assert stats.argument_size_in_bytes == 24 and stats.output_size_in_bytes == 12
    assert stats.alias_size_in_bytes == 12


def test_cost_analysis_estimates():
    x = jnp.ones((4, 4))
    costs = xjax.jit(lambda a, b: a @ b).lower(x, x).cost_analysis()
    assert costs["flops"] == 2 * 4 * 4 * 4
    assert costs["bytes accessed"] == 3 * 64
    costs = xjax.jit(lambda a: jnp.exp(a).sum()).lower(x).compile().cost_analysis()
    assert costs["transcendentals"] == 16 and costs["flops"] == 15
    # a compare and a select per element (XLA counts both; Flax's tabulate reads these)
    costs = xjax.jit(lambda a: jnp.where(a > 0, a, 0.0)).lower(x).cost_analysis()
    assert costs["flops"] == 2 * 16


def test_matches_jax_structures():
    jax = pytest.importorskip("jax")
    x = np.ones((4, 4), np.float32)
    ours = xjax.jit(_f).lower(x, y=x)
    theirs = jax.jit(lambda x, y: {"a": x @ y, "b": jax.numpy.sin(x).sum()}).lower(x, y=x)
    assert str(ours.in_tree) == str(theirs.in_tree)
    assert str(ours.out_tree) == str(theirs.out_tree)
    ours_info = xjax.tree_util.tree_leaves(ours.out_info)
    theirs_info = jax.tree_util.tree_leaves(theirs.out_info)
    assert [(s.shape, s.dtype) for s in ours_info] == [(s.shape, s.dtype) for s in theirs_info]


def test_fwd_and_bwd_compiles_once_and_matches_vjp():
    traces = []

    def f(x, w):
        traces.append(1)
        return jnp.tanh(x @ w), {"aux": x.sum()}

    x = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    w = jnp.asarray(np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2))
    ct = jnp.ones((3, 2))
    fwd, bwd = xjax.fwd_and_bwd(f, argnums=(0, 1), has_aux=True)
    _, f_vjp, _ = xjax.vjp(lambda a, b: f(a, b), x, w, has_aux=True)
    expected = f_vjp(ct)
    for _ in range(3):
        y, res, aux = fwd(x, w)
        gx, gw = bwd(res, ct)
    assert len(traces) == 2  # the vjp above and one trace of the jitted fwd
    np.testing.assert_allclose(gx, expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, expected[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux["aux"], np.asarray(x).sum(), rtol=1e-6)
    fwd1, bwd1 = xjax.fwd_and_bwd(lambda a, b: jnp.sin(a) * b, argnums=0, jitted=False)
    y, res = fwd1(jnp.float32(0.5), jnp.float32(2.0))
    np.testing.assert_allclose(bwd1(res, jnp.float32(1.0)), 2 * np.cos(0.5), rtol=1e-6)
