"""Which CPU modules compile with XLA's elemental IR emitters (lower_jaxpr.ELEMENTAL_EMITTERS),
and that those modules compute what the plugin's fusion emitters compute."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax, nn, random
from xjax._src.lowering import lower_jaxpr
from xjax._src.lowering.lower_jaxpr import (ELEMENTAL_EMITTERS, TREE_REWRITE_OPTIONAL,
                                            WIDE_VECTOR_MIN_ELEMENTS, WIDE_VECTORS,
                                            lower_module)

FUSION_EMITTERS = {"xla_cpu_use_fusion_emitters": True}
RNG = np.random.default_rng(7)
X = RNG.standard_normal(4096).astype(np.float32)
M = RNG.standard_normal((64, 96)).astype(np.float32)
IMAGES = RNG.standard_normal((2, 16, 16, 3)).astype(np.float32)


def _options(fun, *args, platform="cpu"):
    return lower_module(xjax.make_jaxpr(fun)(*args), platform=platform).compiler_options


def _max_pool(v):
    return lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


ELEMENTAL = {
    "selu": (lambda v: 1.05 * jnp.where(v > 0, v, 1.67 * jnp.exp(v) - 1.67), X),
    "erf": (lax.erf, X),
    "log1p": (lambda v: jnp.log1p(jnp.abs(v)), X),
    "column_mean": (lambda v: v.mean(0), M),
    "gather": (lambda v: v[jnp.array([3, 1, 60])], M),
}
FUSION = {
    "dot_epilogue": (lambda v: jnp.tanh(v @ v.T + 1.0), M),  # 1.2x slower elemental
    "tan": (jnp.tan, X),  # JAX's bits come from the fusion emitters
    "scan": (lambda v: lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(96), v)[0], M),
    "scatter_add": (lambda v: jnp.zeros(8).at[jnp.arange(64) % 8].add(v[:, 0]), M),
    "concatenate": (lambda v: jnp.concatenate([v, v * 2]), M),
    # the elemental emitters' reduce_window differed from JAX's on max pooling's jvp with
    # padding and NaNs (tests/lax/test_select_and_scatter.py); cumsum is one too
    "max_pool": (_max_pool, IMAGES),
    "cumsum": (lambda v: jnp.cumsum(v, 1), M),
    # their reduce_precision turned a NaN into inf (tests/lax/test_convert.py)
    "reduce_precision": (lambda v: lax.reduce_precision(v, 5, 0), X),
    "split_max": (lambda v: (v.max(1), v.sum(0)), RNG.standard_normal((300, 200))
                  .astype(np.float32)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTAL))
def test_elementwise_and_reduction_modules_use_the_elemental_emitters(name):
    fun, x = ELEMENTAL[name]
    assert _options(fun, x) == ELEMENTAL_EMITTERS
    assert _options(fun, x, platform=None) is None  # portable lowering: no CPU options
    lowered = xjax.jit(fun).lower(x)
    elemental = np.asarray(lowered.compile()(x))
    fusion = np.asarray(lowered.compile(FUSION_EMITTERS)(x))
    np.testing.assert_array_equal(elemental, fusion)  # the same bits either way


@pytest.mark.parametrize("name", sorted(FUSION))
def test_loops_scatter_dot_epilogues_and_tan_keep_the_fusion_emitters(name):
    fun, x = FUSION[name]
    assert _options(fun, x) is None


def test_short_minor_reductions_keep_their_own_option():
    # without the tree rewrite only the fusion emitters vectorize the plain reduce
    rows = RNG.standard_normal((32, 1000)).astype(np.float32)
    assert _options(lambda v: nn.softmax(v, axis=1), rows) == TREE_REWRITE_OPTIONAL


def test_random_bits_and_normals_are_unchanged_by_the_emitters():
    key = random.key(3)
    fun = xjax.jit(lambda k: random.normal(k, (5000,)))
    lowered = fun.lower(key)
    assert _options(lambda k: random.normal(k, (5000,)), key) == ELEMENTAL_EMITTERS
    np.testing.assert_array_equal(np.asarray(lowered.compile()(key)),
                                  np.asarray(lowered.compile(FUSION_EMITTERS)(key)))
    sample = np.asarray(fun(key), np.float64)
    assert abs(sample.mean()) < 0.05 and abs(sample.std() - 1) < 0.05


def test_jitted_erf_gives_jax_bits():
    jax = pytest.importorskip("jax")
    x = (RNG.standard_normal(200_000) * 2).astype(np.float32)
    ours = np.asarray(xjax.jit(lax.erf)(x))
    np.testing.assert_array_equal(ours, np.asarray(jax.jit(jax.lax.erf)(x)))


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38,
                    1.0, -1.0, 0.5, 2.0, 88.7, -88.7, 89.0, -104.0, 1e10, 0.7, 3.0, -3.0],
                   np.float32)
UNARY = ["abs", "cbrt", "ceil", "cos", "exp", "expm1", "floor", "is_finite", "log", "log1p",
         "logistic", "neg", "round", "rsqrt", "sign", "sin", "sqrt", "tanh"]
BINARY = ["add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem", "gt", "ne"]


@pytest.mark.parametrize("name", UNARY + BINARY + ["complex_div", "complex_log", "to_int32",
                                                   "to_bfloat16"])
def test_elemental_emitters_agree_on_nan_inf_zeros_and_subnormals(name):
    a, b = np.repeat(SPECIAL, SPECIAL.size), np.tile(SPECIAL, SPECIAL.size)
    if name in UNARY:
        fun, args = getattr(lax, name), (SPECIAL,)
    elif name in BINARY:
        fun, args = getattr(lax, name), (a, b)
    else:
        fun, args = {"complex_div": lambda p, q: lax.complex(p, q) / lax.complex(q, p),
                     "complex_log": lambda p, q: lax.log(lax.complex(p, q)),
                     "to_int32": lambda p, q: p.astype(np.int32),
                     "to_bfloat16": lambda p, q: p.astype(jnp.bfloat16)}[name], (a, b)
    assert _options(fun, *args) == ELEMENTAL_EMITTERS
    lowered = xjax.jit(fun).lower(*args)
    elemental = np.asarray(lowered.compile()(*args)).astype(np.complex128)
    fusion = np.asarray(lowered.compile(FUSION_EMITTERS)(*args)).astype(np.complex128)
    np.testing.assert_array_equal(elemental, fusion)


def test_elemental_erf_reaches_one_at_infinity():
    # the fusion emitters' erf gives 0.9999998 at +-inf and at 3.4e38
    out = np.asarray(xjax.jit(lax.erf)(SPECIAL[:4]))
    np.testing.assert_array_equal(out, [np.nan, 1.0, -1.0, 0.0])


# -- 16-lane vectors on CPUs with 512-bit AVX-512 units (lower_jaxpr.WIDE_VECTORS) --

BIG = RNG.standard_normal(WIDE_VECTOR_MIN_ELEMENTS + 5).astype(np.float32)
WIDE = {
    "selu": lambda v: 1.05 * jnp.where(v > 0, v, 1.67 * jnp.exp(v) - 1.67),
    "transcendentals": lambda v: jnp.tanh(v) + jnp.sin(v) * jnp.log1p(jnp.abs(v)) - lax.erf(v),
    "atanh": lambda v: jnp.arctanh(v / 5),
    "float64": lambda v: jnp.exp(v.astype(jnp.float64) * 0.5),
    "integers": lambda v: (v * 1000).astype(jnp.int32) // 7 + jnp.int32(3),
}


@pytest.fixture
def wide_machine(monkeypatch):
    monkeypatch.setattr(lower_jaxpr, "native_wide_vectors", lambda: True)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_min_max=false")


def test_large_elementwise_modules_ask_for_wide_vectors(wide_machine, monkeypatch):
    selu = WIDE["selu"]
    assert _options(selu, BIG) == {**ELEMENTAL_EMITTERS, **WIDE_VECTORS}
    assert _options(jnp.tan, BIG) == WIDE_VECTORS  # fusion emitters, wide vectors
    assert _options(selu, X) == ELEMENTAL_EMITTERS  # small: the compile would not pay
    # a reduction or a dot: 16 lanes would add in another order than JAX's
    for fun in (lambda v: jnp.exp(v).sum(), lambda v: jnp.exp(v) * jnp.dot(v[:8], v[8:16])):
        assert "xla_cpu_prefer_vector_width" not in (_options(fun, BIG) or {})
    assert _options(selu, BIG, platform=None) is None
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_prefer_vector_width=256")  # the user's choice
    assert _options(selu, BIG) == ELEMENTAL_EMITTERS
    monkeypatch.setattr(lower_jaxpr, "native_wide_vectors", lambda: False)
    monkeypatch.delenv("XLA_FLAGS")
    assert _options(selu, BIG) == ELEMENTAL_EMITTERS


@pytest.mark.parametrize("name", sorted(WIDE))
def test_wide_vectors_give_the_same_bits(name):
    # on any machine: XLA takes the width as a preference (no AVX-512: 8 lanes either way)
    lowered = xjax.jit(WIDE[name]).lower(BIG)
    wide = np.asarray(lowered.compile(WIDE_VECTORS)(BIG))
    narrow = np.asarray(lowered.compile({"xla_cpu_prefer_vector_width": 256})(BIG))
    np.testing.assert_array_equal(wide.view(np.uint8), narrow.view(np.uint8))
