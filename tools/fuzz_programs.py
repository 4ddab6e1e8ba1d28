"""Differential fuzzing of whole programs: random jnp programs under random transformations,
run on xjax and on JAX, compared value by value (shape, dtype, weak type, numbers, and the
error class when both refuse).

    python tools/fuzz_programs.py --programs 2000 --seed 0      # prints the agreement rate

A program is a list of steps over its inputs and earlier results; the same program is
interpreted with ``xjax``/``xjax.numpy`` and with ``jax``/``jax.numpy``, so both sides run
the same calls. ``tests/transformations/test_program_fuzz.py`` runs a small batch.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import sys
import traceback

import numpy as np

# -- the operations programs are made of ----------------------------------------------------
# name -> (arity, how to call it with (jnp, nn, args, rng-chosen static values))

UNARY = {
    "sin": lambda m, x: m.np.sin(x),
    "cos": lambda m, x: m.np.cos(x),
    "tanh": lambda m, x: m.np.tanh(x),
    "exp": lambda m, x: m.np.exp(m.np.clip(x, -5, 5)),
    "log1p_abs": lambda m, x: m.np.log1p(m.np.abs(x)),
    "sqrt_abs": lambda m, x: m.np.sqrt(m.np.abs(x) + 0.5),
    "square": lambda m, x: m.np.square(x),
    "negative": lambda m, x: -x,
    "abs": lambda m, x: m.np.abs(x),
    "sign": lambda m, x: m.np.sign(x),
    "floor": lambda m, x: m.np.floor(x),
    "round": lambda m, x: m.np.round(x, 1),
    "arctan": lambda m, x: m.np.arctan(x),
    "sigmoid": lambda m, x: m.nn.sigmoid(x),
    "relu": lambda m, x: m.nn.relu(x),
    "softplus": lambda m, x: m.nn.softplus(x),
    "gelu": lambda m, x: m.nn.gelu(x),
    "scale_weak": lambda m, x: x * 2.5 - 1,
    "int_pow": lambda m, x: x ** 3,
    "clip": lambda m, x: m.np.clip(x, -0.5, 0.7),
    "where_pos": lambda m, x: m.np.where(x > 0, x, 0.1 * x),
    "cumsum": lambda m, x: m.np.cumsum(x, axis=-1) if x.ndim else x,
    "sort": lambda m, x: m.np.sort(x, axis=-1) if x.ndim else x,
    "flip": lambda m, x: m.np.flip(x, -1) if x.ndim else x,
    "sum_keep": lambda m, x: m.np.sum(x, axis=-1, keepdims=True) if x.ndim else x,
    "mean": lambda m, x: m.np.mean(x, axis=-1) if x.ndim else x,
    "max": lambda m, x: m.np.max(x, axis=-1) if x.ndim else x,
    "var": lambda m, x: m.np.var(x, axis=-1) if x.ndim else x,
    "logsumexp": lambda m, x: m.nn.logsumexp(x, axis=-1) if x.ndim else x,
    "softmax": lambda m, x: m.nn.softmax(x, axis=-1) if x.ndim else x,
    "reverse": lambda m, x: x[..., ::-1] if x.ndim else x,
    "first": lambda m, x: x[..., :1] if x.ndim else x,
    "ravel": lambda m, x: m.np.ravel(x),
    "norm": lambda m, x: m.np.linalg.norm(x + 0.1),
    "roll": lambda m, x: m.np.roll(x, 1, axis=-1) if x.ndim else x,
    "outer_self": lambda m, x: m.np.outer(x, x).sum(-1) if x.ndim == 1 else x,
    "matmul_t": lambda m, x: x @ x.T if x.ndim == 2 else x,
    "argmax": lambda m, x: m.np.argmax(x, axis=-1) if x.ndim else x,
    "to_int": lambda m, x: (x * 3).astype(m.np.int32),
    "add_arange": lambda m, x: x + m.np.arange(x.shape[-1]) if x.ndim else x + 1,
    "take": lambda m, x: m.np.take(x, m.np.array([0, -1]), axis=-1) if x.ndim else x,
    "expand_sum": lambda m, x: m.np.expand_dims(x, 0).sum(0),
    "stop_gradient": lambda m, x: m.api.lax.stop_gradient(x) * x,
    "checkpoint": lambda m, x: m.api.checkpoint(lambda v: m.np.sin(v) * v)(x),
    "fori_loop": lambda m, x: m.api.lax.fori_loop(
        0, 3, lambda i, c: c * 0.5 + m.np.sin(c), x),
    "cond": lambda m, x: m.api.lax.cond(
        m.np.sum(x) > 0, lambda v: v * 2, lambda v: m.np.cos(v), x),
    "scan": lambda m, x: m.api.lax.scan(
        lambda c, v: (c * 0.5 + v, c * v), m.np.zeros_like(x[0]), x)[1] if x.ndim else x,
    "while_loop": lambda m, x: m.api.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.1), (0, x))[1],
    "map": lambda m, x: m.api.lax.map(lambda v: m.np.tanh(v) * v, x) if x.ndim else x,
    "log_softmax": lambda m, x: m.nn.log_softmax(x, axis=-1) if x.ndim else x,
    "std": lambda m, x: m.np.std(x, axis=0),
    "prod": lambda m, x: m.np.prod(m.np.clip(x, -1.5, 1.5), axis=-1) if x.ndim else x,
    "cumprod": lambda m, x: m.np.cumprod(x * 0.5, axis=-1) if x.ndim else x,
    "erf": lambda m, x: m.api.scipy.special.erf(x),
    "expm1": lambda m, x: m.np.expm1(m.np.clip(x, -3, 3)),
    "sinc": lambda m, x: m.np.sinc(x),
    "min": lambda m, x: m.np.min(x, axis=0),
    "transpose": lambda m, x: x.T,
    "square_mean_centered": lambda m, x: m.np.square(x - m.np.mean(x)),
}

BINARY = {
    "add": lambda m, x, y: x + y,
    "sub": lambda m, x, y: x - y,
    "mul": lambda m, x, y: x * y,
    "div": lambda m, x, y: x / (m.np.abs(y) + 0.5),
    "maximum": lambda m, x, y: m.np.maximum(x, y),
    "minimum": lambda m, x, y: m.np.minimum(x, y),
    "pow": lambda m, x, y: m.np.power(m.np.abs(x) + 0.5, m.np.clip(y, -2, 2)),
    "arctan2": lambda m, x, y: m.np.arctan2(x, y + 0.3),
    "hypot": lambda m, x, y: m.np.hypot(x, y),
    "where": lambda m, x, y: m.np.where(x > y, x, y),
    "logaddexp": lambda m, x, y: m.np.logaddexp(x, y),
    "dot_last": lambda m, x, y: (x * y).sum(-1),
    "stack_sum": lambda m, x, y: m.np.stack(m.np.broadcast_arrays(x, y)).sum(0),
    "concat": lambda m, x, y: m.np.concatenate([m.np.atleast_1d(x), m.np.atleast_1d(y)]),
}

SHAPES = [(), (3,), (4,), (2, 3), (3, 1)]
STATS: collections.Counter = collections.Counter()  # how programs agreed
TRANSFORMS = ["eager", "jit", "grad", "jit_grad", "vmap", "jit_vmap", "jvp", "vmap_grad",
              "value_and_grad", "hessian", "jacfwd", "jacrev", "jit_jvp", "grad_of_remat"]


@dataclasses.dataclass
class Program:
    shapes: list          # input shapes (float32 inputs)
    steps: list           # (op name, operand indices)
    outputs: list         # indices of the values returned
    transform: str

    def describe(self) -> str:
        lines = [f"inputs {self.shapes}, transform {self.transform}"]
        n = len(self.shapes)
        for i, (op, operands) in enumerate(self.steps):
            lines.append(f"  v{n + i} = {op}({', '.join(f'v{j}' for j in operands)})")
        lines.append(f"  return {', '.join(f'v{j}' for j in self.outputs)}")
        return "\n".join(lines)


def random_program(rng: np.random.Generator) -> Program:
    shapes = [SHAPES[rng.integers(len(SHAPES))] for _ in range(rng.integers(1, 3))]
    steps = []
    count = len(shapes)
    for _ in range(rng.integers(1, 6)):
        if rng.random() < 0.6:
            op = list(UNARY)[rng.integers(len(UNARY))]
            steps.append((op, [int(rng.integers(count))]))
        else:
            op = list(BINARY)[rng.integers(len(BINARY))]
            steps.append((op, [int(rng.integers(count)), int(rng.integers(count))]))
        count += 1
    outputs = sorted({count - 1, int(rng.integers(count))})
    return Program(shapes, steps, outputs, TRANSFORMS[rng.integers(len(TRANSFORMS))])


class Backend:
    """The modules one side runs with."""

    def __init__(self, name):
        if name == "jax":
            import jax  # the reference, imported only when asked for
            import jax.numpy as jnp
        else:
            import xjax as jax
            import xjax.numpy as jnp
        self.name, self.api, self.np, self.nn = name, jax, jnp, jax.nn


def _body(program: Program, backend: Backend):
    def fun(*inputs):
        values = list(inputs)
        for op, operands in program.steps:
            table = UNARY if op in UNARY else BINARY
            values.append(table[op](backend, *[values[j] for j in operands]))
        return tuple(values[j] for j in program.outputs)
    return fun


def _scalar_loss(fun, backend):
    def loss(*inputs):
        outs = fun(*inputs)
        return sum(backend.np.sum(o) for o in outs)
    return loss


def run(program: Program, backend: Backend, inputs):
    """The program's results under its transformation (a tuple of arrays)."""
    api = backend.api
    fun = _body(program, backend)
    kind = program.transform
    if kind == "eager":
        return fun(*inputs)
    if kind == "jit":
        return api.jit(fun)(*inputs)
    if kind in ("grad", "jit_grad"):
        grad = api.grad(_scalar_loss(fun, backend))
        return (api.jit(grad) if kind == "jit_grad" else grad)(*inputs),
    if kind == "value_and_grad":
        value, grad = api.value_and_grad(_scalar_loss(fun, backend))(*inputs)
        return value, grad
    if kind in ("vmap", "jit_vmap"):
        batched = api.vmap(fun)
        batched_inputs = [np.stack([x, x * 0.5 + 0.1, -x]) for x in inputs]
        return (api.jit(batched) if kind == "jit_vmap" else batched)(*batched_inputs)
    if kind == "vmap_grad":
        grad = api.vmap(api.grad(_scalar_loss(fun, backend)))
        return grad(*[np.stack([x, x * 0.5 + 0.1, -x]) for x in inputs]),
    if kind in ("jvp", "jit_jvp"):
        tangents = [np.ones_like(x) for x in inputs]
        jvp = lambda *xs: api.jvp(fun, xs, tuple(tangents))
        primal, tangent = (api.jit(jvp) if kind == "jit_jvp" else jvp)(*inputs)
        return (*primal, *tangent)
    if kind == "hessian":  # second order in the first input
        return api.hessian(_scalar_loss(fun, backend))(*inputs),
    if kind in ("jacfwd", "jacrev"):  # the first output in the first input
        jacobian = getattr(api, kind)(lambda *xs: fun(*xs)[0])
        return jacobian(*inputs),
    if kind == "grad_of_remat":
        return api.grad(api.checkpoint(_scalar_loss(fun, backend)))(*inputs),
    raise ValueError(kind)


def _describe(value, backend: Backend):
    aval = backend.api.typeof(value)
    return (tuple(aval.shape), str(aval.dtype), bool(getattr(aval, "weak_type", False)))


def compare(program: Program, seed: int, ours: Backend, reference: Backend):
    """None when the two sides agree, else a description of the difference."""
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, size=s).astype(np.float32) for s in program.shapes]
    results = []
    for backend in (ours, reference):
        try:
            results.append(("ok", run(program, backend, inputs)))
        except Exception as e:  # noqa: BLE001  (an error is a result to compare)
            results.append(("error", e))
    (kind_a, a), (kind_b, b) = results
    if kind_a == "error" or kind_b == "error":
        if kind_a == kind_b and type(a).__name__ == type(b).__name__:
            STATS["both refused"] += 1
            return None
        return (f"xjax {kind_a} {type(a).__name__ if kind_a == 'error' else ''} vs JAX "
                f"{kind_b} {type(b).__name__ if kind_b == 'error' else ''}: "
                f"{str(a if kind_a == 'error' else b)[:200]}")
    flat_a = ours.api.tree_util.tree_leaves(a)
    flat_b = reference.api.tree_util.tree_leaves(b)
    if len(flat_a) != len(flat_b):
        return f"{len(flat_a)} outputs vs {len(flat_b)}"
    for i, (x, y) in enumerate(zip(flat_a, flat_b, strict=True)):
        type_x, type_y = _describe(x, ours), _describe(y, reference)
        if type_x != type_y:
            return f"output {i}: type {type_x} vs JAX {type_y}"
        if np.dtype(x.dtype).kind == "V":  # float0 tangents of integers: no numbers
            continue
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        scale = 1.0 + np.max(np.abs(np.nan_to_num(y, posinf=0, neginf=0)), initial=0.0)
        if not np.allclose(x, y, rtol=2e-4, atol=2e-5 * scale, equal_nan=True):
            return f"output {i}: values differ by {np.nanmax(np.abs(x - y)):.3g}"
    STATS["same values"] += 1
    return None


def fuzz(programs: int, seed: int, verbose: bool = False):
    """(number agreeing, [(program, difference)]) over ``programs`` random programs."""
    ours, reference = Backend("xjax"), Backend("jax")
    rng = np.random.default_rng(seed)
    differences = []
    for index in range(programs):
        program = random_program(rng)
        try:
            difference = compare(program, seed * 100003 + index, ours, reference)
        except Exception:  # noqa: BLE001  (a crash of the comparison itself is a difference)
            difference = "comparison crashed:\n" + traceback.format_exc(limit=3)
        if difference is not None:
            differences.append((program, difference))
            if verbose:
                print(f"[{index}] {difference}\n{program.describe()}\n", flush=True)
    return programs - len(differences), differences


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    agree, differences = fuzz(args.programs, args.seed, args.verbose)
    causes = collections.Counter(d.split(":")[0] for _, d in differences)
    print(f"{agree}/{args.programs} programs agree with JAX "
          f"({100.0 * agree / args.programs:.2f}%), seed {args.seed}: "
          f"{STATS['same values']} with the same values, {STATS['both refused']} refused by "
          f"both with the same error class")
    for cause, n in causes.most_common():
        print(f"  {n:4d}  {cause}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
