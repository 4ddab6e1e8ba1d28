"""Taylor-mode propagation rules for ``xjax.experimental.jet``.

A series is a list ``[v0, v1, ..., vK]``: the primal ``v0`` and the Taylor coefficients
``v_k = f^(k)(0) / k!`` of a curve ``t -> v(t)`` (not factorial-scaled; ``jet`` converts at
its boundary). A rule maps the primals and coefficient lists of a primitive's operands to its
output's: ``rule(prim, primals, series, **params) -> (primal_out, terms_out)`` where
``prim`` is the primitive, ``series`` has one list of K terms per operand (zeros filled in,
except for rules marked ``zeros_as_none``, which see None) and ``terms_out`` is a list of K
terms (a list of such lists for primitives with several results). A None rule marks a
primitive whose output does not depend on the inputs' curves.

The recurrences are the standard ones of automatic differentiation by Taylor series
(Griewank & Walther, *Evaluating Derivatives*, ch. 13): Cauchy products for bilinear
maps, and ``v' = f'(u) u'`` solved coefficient by coefficient for elementary functions.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import higher_order as control_flow, lax
import xjax._src.numpy as jnp

RULES: dict = {}  # primitive name -> rule


# -- series algebra on coefficient lists --

def cauchy(a, b, op=lambda x, y: x * y):
    """Coefficients of the product of two series (``op`` is the bilinear map)."""
    return [sum(op(a[j], b[k - j]) for j in range(k + 1)) for k in range(len(a))]


def quotient(u, w, v0=None):
    """Coefficients of ``u / w``; ``v0`` overrides the primal."""
    v = []
    for k in range(len(u)):
        correction = sum(v[j] * w[k - j] for j in range(k))
        v.append((u[k] - correction) / w[0] if k or v0 is None else v0)
    return v


def chain(v0, d, u):
    """Coefficients of ``v`` with ``v' = d(t) u'(t)``: ``d`` is the series of ``f'(u)``
    (its first K entries are used), ``v0 = f(u0)``."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum(j * d[k - j] * u[j] for j in range(1, k + 1)) / k)
    return v


def exp_series(u, v0):
    """``exp(u)`` given ``v0 = exp(u0)``: ``v' = v u'``, each term from the previous."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k)
    return v


def log_series(u, v0):
    """``log(u)`` given ``v0 = log(u0)``: from ``u v' = u'``."""
    v = [v0]
    for k in range(1, len(u)):
        conv = sum(j * v[j] * u[k - j] for j in range(1, k))
        v.append((u[k] - conv / k) / u[0])
    return v


def sqrt_series(u, v0):
    """``sqrt(u)`` given ``v0``: from ``v * v = u``."""
    v = [v0]
    for k in range(1, len(u)):
        v.append((u[k] - sum(v[j] * v[k - j] for j in range(1, k))) / (2 * v0))
    return v


def power_series(u, y, v0):
    """``u ** y`` for a constant exponent ``y`` given ``v0``: from ``u v' = y v u'``
    (needs ``u0 != 0``)."""
    v = [v0]
    for k in range(1, len(u)):
        acc = sum(((y + 1) * j - k) * u[j] * v[k - j] for j in range(1, k + 1))
        v.append(acc / (k * u[0]))
    return v


def sin_cos_series(u, s0, c0, sign=-1):
    """``(sin u, cos u)`` (``sign=-1``) or ``(sinh u, cosh u)`` (``sign=1``)."""
    s, c = [s0], [c0]
    for k in range(1, len(u)):
        s.append(sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
        c.append(sign * sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k)
    return s, c


def self_chain(u, v0, deriv_of_output):
    """``v = f(u)`` where ``f'`` is a polynomial in ``f``: ``deriv_of_output(v, k)`` returns
    coefficient ``k`` of ``f'(v(t))`` from ``v[0..k]``."""
    v, d = [v0], [deriv_of_output([v0], 0)]
    for k in range(1, len(u)):
        v.append(sum(j * d[k - j] * u[j] for j in range(1, k + 1)) / k)
        d.append(deriv_of_output(v, k))
    return v


def constant_series(value, like):
    return [value] + [jnp.zeros_like(t) for t in like[1:]]


# -- registration helpers --

def _split(primals, series):
    """Each operand as one list ``[primal, t1, ..., tK]``."""
    return [[p, *s] for p, s in zip(primals, series)]


def unary(name):
    """Register a rule computed from the operand's full series ``u``: ``f(u) -> v``."""
    def register(fn):
        def rule(prim, primals, series, **params):
            v = fn(_split(primals, series)[0], **params)
            return v[0], v[1:]
        RULES[name] = rule
        return fn
    return register


def zero(*names):
    for name in names:
        RULES[name] = None  # the output's series is zero: the primitive is just evaluated


def linear(*names, positions=None):
    """Rules for primitives linear in the operands at ``positions`` (all by default): the
    terms are the primitive applied to the operands' terms, the others kept primal."""
    def rule(prim, primals, series, **params):
        out = prim.bind(*primals, **params)
        picks = range(len(primals)) if positions is None else positions
        terms = []
        for k in range(len(series[0])):
            args = [series[i][k] if i in picks else p for i, p in enumerate(primals)]
            terms.append(prim.bind(*args, **params))
        if prim.multiple_results:
            terms = [list(ts) for ts in zip(*terms)]
        return out, terms
    for name in names:
        RULES[name] = rule


# -- zero and linear primitives --

zero("le", "lt", "gt", "ge", "eq", "ne", "not", "and", "or", "xor", "floor", "ceil", "round",
     "sign", "stop_gradient", "is_finite", "shift_left", "shift_right_arithmetic",
     "shift_right_logical", "bitcast_convert_type", "argmax", "argmin", "population_count",
     "clz", "reduce_and", "reduce_or", "reduce_xor", "iota", "nextafter")

linear("neg", "real", "imag", "conj", "complex", "add", "add_any", "sub",
       "convert_element_type", "broadcast_in_dim", "concatenate", "split", "pad", "reshape",
       "squeeze", "rev", "transpose", "slice", "reduce_sum", "reduce_window_sum", "fft",
       "copy", "device_put", "cumsum", "sharding_constraint", "reduce_precision", "tile",
       "stack", "unstack", "optimization_barrier")
linear("dynamic_slice", "gather", positions=(0,))
linear("dynamic_update_slice", positions=(0, 1))
linear("scatter-add", "scatter-sub", "scatter", positions=(0, 2))


def _select_n(prim, primals, series, **params):
    which, *cases = primals
    terms = [lax.select_n(which, *[s[k] for s in series[1:]]) for k in range(len(series[0]))]
    return lax.select_n(which, *cases), terms


RULES["select_n"] = _select_n


# -- bilinear --

def _bilinear(prim, primals, series, **params):
    a, b = _split(primals, series)
    v = cauchy(a, b, lambda x, y: prim.bind(x, y, **params))
    return v[0], v[1:]


for _name in ("mul", "dot_general", "conv_general_dilated"):
    RULES[_name] = _bilinear


def _div(prim, primals, series, **params):
    u, w = _split(primals, series)
    v = quotient(u, w, v0=lax.div(primals[0], primals[1]))
    return v[0], v[1:]


RULES["div"] = _div


def _rem(prim, primals, series, **params):
    x, y = primals
    out = lax.rem(x, y)
    quotient_int = lax.round((x - out) / y)  # trunc(x / y), piecewise constant
    return out, [sx - quotient_int * sy for sx, sy in zip(*series)]


RULES["rem"] = _rem


# -- elementary functions --

@unary("exp")
def _exp(u):
    return exp_series(u, lax.exp(u[0]))


@unary("exp2")
def _exp2(u):
    ln2 = math.log(2.0)
    return exp_series([t * ln2 for t in u], lax.exp2(u[0]))


@unary("expm1")
def _expm1(u):
    v = exp_series(u, lax.exp(u[0]))
    return [lax.expm1(u[0])] + v[1:]


@unary("log")
def _log(u):
    return log_series(u, lax.log(u[0]))


@unary("log1p")
def _log1p(u):
    v = log_series([1 + u[0]] + u[1:], lax.log1p(u[0]))
    return v


@unary("sqrt")
def _sqrt(u):
    return sqrt_series(u, lax.sqrt(u[0]))


@unary("rsqrt")
def _rsqrt(u):
    root = sqrt_series(u, lax.sqrt(u[0]))
    return quotient(constant_series(jnp.ones_like(u[0]), root), root, v0=lax.rsqrt(u[0]))


@unary("cbrt")
def _cbrt(u):
    return power_series(u, 1.0 / 3.0, lax.cbrt(u[0]))


@unary("square")
def _square(u):
    v = cauchy(u, u)
    return [lax.square(u[0])] + v[1:]


@unary("sin")
def _sin(u):
    return sin_cos_series(u, lax.sin(u[0]), lax.cos(u[0]))[0]


@unary("cos")
def _cos(u):
    return sin_cos_series(u, lax.sin(u[0]), lax.cos(u[0]))[1]


@unary("sinh")
def _sinh(u):
    return sin_cos_series(u, lax.sinh(u[0]), lax.cosh(u[0]), sign=1)[0]


@unary("cosh")
def _cosh(u):
    return sin_cos_series(u, lax.sinh(u[0]), lax.cosh(u[0]), sign=1)[1]


def _square_coeff(v, k):
    return sum(v[j] * v[k - j] for j in range(k + 1))


@unary("tanh")
def _tanh(u):
    # tanh' = 1 - tanh^2
    return self_chain(u, lax.tanh(u[0]),
                      lambda v, k: (1 if k == 0 else 0) - _square_coeff(v, k))


@unary("tan")
def _tan(u):
    # tan' = 1 + tan^2
    return self_chain(u, lax.tan(u[0]),
                      lambda v, k: (1 if k == 0 else 0) + _square_coeff(v, k))


@unary("logistic")
def _logistic(u):
    # logistic' = s - s^2
    return self_chain(u, lax.logistic(u[0]), lambda v, k: v[k] - _square_coeff(v, k))


def _one_plus_square(u, sign_square=1, sign_one=1):
    """Series of ``sign_one + sign_square * u^2``."""
    sq = cauchy(u, u)
    return [sign_one + sign_square * sq[0]] + [sign_square * t for t in sq[1:]]


def _recip(w):
    return quotient(constant_series(jnp.ones_like(w[0]), w), w)


def _rsqrt_of(w):
    root = sqrt_series(w, lax.sqrt(w[0]))
    return _recip(root)


@unary("atan")
def _atan(u):
    return chain(lax.atan(u[0]), _recip(_one_plus_square(u)), u)


@unary("asin")
def _asin(u):
    return chain(lax.asin(u[0]), _rsqrt_of(_one_plus_square(u, -1)), u)


@unary("acos")
def _acos(u):
    d = _rsqrt_of(_one_plus_square(u, -1))
    return chain(lax.acos(u[0]), [-t for t in d], u)


@unary("asinh")
def _asinh(u):
    return chain(lax.asinh(u[0]), _rsqrt_of(_one_plus_square(u)), u)


@unary("acosh")
def _acosh(u):
    return chain(lax.acosh(u[0]), _rsqrt_of(_one_plus_square(u, 1, -1)), u)


@unary("atanh")
def _atanh(u):
    return chain(lax.atanh(u[0]), _recip(_one_plus_square(u, -1)), u)


@unary("erf")
def _erf(u):
    scale = 2.0 / math.sqrt(math.pi)
    minus_square = [-t for t in cauchy(u, u)]
    gauss = exp_series(minus_square, lax.exp(minus_square[0]))
    return chain(lax.erf(u[0]), [scale * t for t in gauss], u)


@unary("erfc")
def _erfc(u):
    v = _erf(u)
    return [lax.erfc(u[0])] + [-t for t in v[1:]]


@unary("erf_inv")
def _erf_inv(u):
    # erf_inv' = (sqrt(pi)/2) exp(v^2), a function of the output: update its series as
    # each output coefficient becomes known.
    scale = math.sqrt(math.pi) / 2.0
    v = [lax.erf_inv(u[0])]
    square = [v[0] * v[0]]
    gauss = [lax.exp(square[0])]
    for k in range(1, len(u)):
        v.append(sum(j * scale * gauss[k - j] * u[j] for j in range(1, k + 1)) / k)
        square.append(_square_coeff(v, k))
        gauss.append(sum(j * gauss[k - j] * square[j] for j in range(1, k + 1)) / k)
    return v


def _pow(prim, primals, series, **params):
    x, y = primals
    out = lax.pow(x, y)
    x_terms = series[0] if series[0] is not None else [jnp.zeros_like(x)] * len(series[1])
    u = [x, *x_terms]
    if series[1] is None:
        v = power_series(u, y, out)  # constant exponent: no log of x needed
    else:  # x ** y = exp(y log x)
        log_x = log_series(u, lax.log(x))
        v = exp_series(cauchy([y, *series[1]], log_x), out)
    return out, v[1:]


_pow.zeros_as_none = True
RULES["pow"] = _pow


def _integer_pow(prim, primals, series, *, y):
    u = _split(primals, series)[0]
    out = lax.integer_pow(primals[0], y)
    if y == 0:
        return out, None
    base = _recip(u) if y < 0 else u
    result, n = None, abs(y)
    while n:  # square-and-multiply on series: exact at u0 = 0, unlike u ** y via logs
        if n & 1:
            result = base if result is None else cauchy(result, base)
        n >>= 1
        if n:
            base = cauchy(base, base)
    return out, result[1:]


RULES["integer_pow"] = _integer_pow


def _abs(prim, primals, series, **params):
    x, = primals
    if jnp.iscomplexobj(x):  # |z| = sqrt(z conj(z)), a real series
        u = [x, *series[0]]
        square = [lax.real(c) for c in cauchy(u, [lax.conj(t) for t in u])]
        return lax.abs(x), sqrt_series(square, lax.abs(x))[1:]
    sign = lax.select(x < 0, jnp.full_like(x, -1), jnp.full_like(x, 1))
    return lax.abs(x), [sign * t for t in series[0]]


RULES["abs"] = _abs


def _extremum(pick):
    """``max``/``min``: the chosen operand's terms; at ties, the average of both."""
    def rule(prim, primals, series, **params):
        x, y = jnp.broadcast_arrays(*primals)
        chosen = pick(x, y)
        tie = x == y
        terms = []
        for sx, sy in zip(*series):
            sx, sy = jnp.broadcast_arrays(sx, sy)
            terms.append(lax.select(tie, (sx + sy) / 2, lax.select(chosen, sx, sy)))
        return lax.select(chosen, x, y), terms
    return rule


RULES["max"] = _extremum(lambda x, y: x > y)
RULES["min"] = _extremum(lambda x, y: x < y)


def _clamp(prim, primals, series, **params):
    lo, x, hi = primals
    inner, inner_terms = RULES["max"](prim, (lo, x), (series[0], series[1]))
    return RULES["min"](prim, (inner, hi), (inner_terms, series[2]))


RULES["clamp"] = _clamp


def _reduce_choose(reduce):
    """``reduce_max``/``reduce_min``: the terms averaged over the positions attaining the
    extremum."""
    def rule(prim, primals, series, *, axes, **params):
        x, = primals
        out = reduce(x, axes=axes, **params)
        kept = [1 if i in axes else d for i, d in enumerate(np.shape(x))]
        hits = (x == lax.reshape(out, tuple(kept))).astype(series[0][0].dtype)
        count = jnp.sum(hits, axis=tuple(axes))
        return out, [jnp.sum(t * hits, axis=tuple(axes)) / count for t in series[0]]
    return rule


RULES["reduce_max"] = _reduce_choose(lambda x, *, axes, **p: lax.reduce_max_p.bind(
    x, axes=axes, **p))
RULES["reduce_min"] = _reduce_choose(lambda x, *, axes, **p: lax.reduce_min_p.bind(
    x, axes=axes, **p))


def _atan2(prim, primals, series, **params):
    x, y = primals
    u, w = _split(primals, series)
    ratio = quotient(u, w, v0=x / y)
    return lax.atan2(x, y), chain(lax.atan2(x, y), _recip(_one_plus_square(ratio)),
                                  ratio)[1:]


RULES["atan2"] = _atan2


# -- cumulative reductions: jet of their associative-scan form --

def _cumulative(combine):
    def rule(prim, primals, series, *, axis, reverse):
        from xjax._src.experimental.jet import jet_composite  # jet imports this module

        def scan(x):
            return control_flow.associative_scan(combine, x, axis=axis, reverse=reverse)

        _, terms = jet_composite(scan, primals, series)
        return prim.bind(*primals, axis=axis, reverse=reverse), terms
    return rule


RULES["cumprod"] = _cumulative(lax.mul)
RULES["cummax"] = _cumulative(lax.max)
RULES["cummin"] = _cumulative(lax.min)
RULES["cumlogsumexp"] = _cumulative(jnp.logaddexp)


def _reduce_prod(prim, primals, series, *, axes, **params):
    from xjax._src.experimental.jet import jet_composite  # jet imports this module
    x, = primals
    kept = [d for d in range(np.ndim(x)) if d not in axes]

    def product(v):
        # Reduced axes last and flattened, then the last entry of a running product.
        moved = lax.transpose(v, (*kept, *axes))
        flat = jnp.reshape(moved, (*[np.shape(x)[d] for d in kept], -1))
        return control_flow.associative_scan(lax.mul, flat, axis=flat.ndim - 1)[..., -1]

    _, terms = jet_composite(product, primals, series)
    return prim.bind(x, axes=axes, **params), terms


RULES["reduce_prod"] = _reduce_prod
