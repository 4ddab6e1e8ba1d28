"""Lowering a jaxpr to a StableHLO module by running each primitive's ``lower`` rule."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np

from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from xjax._src.core.primitive import Absent
from xjax._src.lowering.cpu_features import native_wide_vectors
from xjax._src.lowering.stablehlo import FunctionBuilder, ModuleBuilder, aval_type, sharding_value

# Constants at most this many bytes are embedded in the module; larger ones become arguments
# so compiling does not copy them and the executable can be reused with other values.
MAX_EMBEDDED_CONSTANT_BYTES = 1024


class LoweringContext:
    """What a lowering rule sees besides its operands: the function being built and the
    avals of the equation's inputs and outputs."""

    __slots__ = ("builder", "avals_in", "avals_out")

    def __init__(self, builder: FunctionBuilder, avals_in, avals_out):
        self.builder = builder
        self.avals_in = avals_in
        self.avals_out = avals_out

    @property
    def module(self) -> ModuleBuilder:
        return self.builder.module


def lower_jaxpr_body(builder: FunctionBuilder, jaxpr: Jaxpr, const_values, arg_values):
    """Emit ``jaxpr``'s equations into ``builder``; return the names of its outputs."""
    env = {}

    def read(atom):
        if type(atom) is Literal:
            return builder.constant(np.asarray(atom.val, dtype=atom.aval.dtype))
        return env[atom]

    for var, value in zip(jaxpr.constvars, const_values, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, arg_values, strict=True):
        env[var] = value
    uses = _use_counts(jaxpr)
    value_uses = builder.value_uses
    for eqn in jaxpr.eqns:
        rule = eqn.primitive.lower
        if isinstance(rule, Absent):
            raise NotImplementedError(f"primitive {eqn.primitive.name} cannot be compiled "
                                      f"with XLA yet: {rule.reason}")
        ctx = LoweringContext(builder, [a.aval for a in eqn.invars],
                              [v.aval for v in eqn.outvars])
        outs = rule(ctx, *[read(a) for a in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
            value_uses[value] = value_uses.get(value, 0) + uses.get(var, 0)
    return [read(v) for v in jaxpr.outvars]


def _use_counts(jaxpr: Jaxpr) -> dict:
    """How many times each variable is read (by equations and as an output): rules that
    mirror XLA rewrites of single-use values read it through ``builder.value_uses``."""
    uses: dict = {}
    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            if type(atom) is not Literal:
                uses[atom] = uses.get(atom, 0) + 1
    for atom in jaxpr.outvars:
        if type(atom) is not Literal:
            uses[atom] = uses.get(atom, 0) + 1
    return uses


def lower_jaxpr_function(module: ModuleBuilder, name: str, jaxpr: Jaxpr,
                         visibility="private") -> FunctionBuilder:
    """A function taking (constvars..., invars...) and returning the outvars."""
    arg_types = [aval_type(v.aval) for v in jaxpr.constvars + jaxpr.invars]
    fb = module.function(name, arg_types, visibility)
    n_consts = len(jaxpr.constvars)
    outs = lower_jaxpr_body(fb, jaxpr, fb.args[:n_consts], fb.args[n_consts:])
    fb.ret(outs)
    return fb


# XLA's CPU compiler rewrites every reduce longer than 32 along a dimension into a
# reduce-window and a reduce (a tree: accurate for long sums); along the minor dimension
# that form runs 2x slower than the plain vectorized loop (a 4096x768 layer norm: 2.1 ms,
# JAX 0.97 ms). A module whose every reduce is along a short stretch of the minor dimension
# (lax.reduce notes them in ModuleBuilder.short_minor_reductions) compiles without the
# rewrite; anything else keeps it (sums over major dimensions need it to run fast).
TREE_REWRITE_OPTIONAL = {"xla_disable_hlo_passes": "tree_reduction_rewriter"}


class LoweredModule:
    """A lowered ``main``: its text, the consts passed as its leading arguments, the
    indices of ``main``'s arguments the program may reuse for its results (donation), and
    XLA options the module compiles best with (``compiler_options``)."""

    __slots__ = ("text", "const_args", "donated_args", "compiler_options")

    def __init__(self, text, const_args, donated_args, compiler_options=None):
        self.text = text
        self.const_args = const_args
        self.donated_args = donated_args
        self.compiler_options = compiler_options


# The CPU plugin generates kernels with its MLIR fusion emitters by default; XLA's older
# elemental IR emitters compile the same module 25-40% faster and give the same bits for the
# operations below, except erf, whose bits become JAX's (JAX's XLA emits erf in the
# elemental form). The fusion emitters stay where they run faster or give JAX's bits:
# loops (a scan ran 1.4x slower without them), scatter (1.55x), concatenate/pad (1.27x),
# the split max/min (1.13x), an elementwise epilogue of a dot (tanh(x @ w + b) on 128x512:
# 1.2x; it writes over the dot's result in place, and the elemental kernel's vector loop,
# guarded by a runtime overlap check, then runs scalar), modules without the tree rewrite
# (their plain reductions are vectorized only by the fusion emitters), and tan (JAX's
# bits). So a module compiles with the elemental emitters only when every operation in it
# is one of these (measured no slower; reductions under the tree rewrite). Random bits run
# 25% faster this way. Left out, as the full test suite found: clamp (not implemented for
# complex numbers), reduce_precision (a NaN became inf) and reduce_window (max pooling's
# jvp with padding and NaNs differed from JAX's).
ELEMENTAL_EMITTERS = {"xla_cpu_use_fusion_emitters": False}
ELEMENTAL_EMITTER_OPS = frozenset("stablehlo." + name for name in (
    "abs add and atan2 bitcast_convert broadcast_in_dim cbrt ceil compare complex "
    "constant convert cosine count_leading_zeros divide dynamic_slice dynamic_update_slice "
    "exponential exponential_minus_one floor gather imag iota is_finite log log_plus_one "
    "logistic maximum minimum multiply negate not or popcnt power real reduce remainder "
    "reshape return round_nearest_afz round_nearest_even rsqrt select shift_left "
    "shift_right_arithmetic shift_right_logical "
    "sign sine slice sqrt subtract tanh transpose xor").split()) | {
    "chlo.erf", "func.return", "func.call"}
_OPERATION_NAME = re.compile(r'"([a-z_]+\.[a-z_]+)"\(')


# On CPUs whose AVX-512 units are 512 bits wide (cpu_features.native_wide_vectors: AMD Zen 5)
# XLA's kernels run elementwise work up to 2x faster with 16-lane vectors than with its
# default 8 (selu over 1e6 float32 233 -> 140 us, random.normal 2.3 -> 1.1 ms, JAX 0.22 and
# 2.2), with the same bits. They cost compile time (a 20-op chain or random.normal +8 ms)
# and reduce along the minor dimension in another order than JAX's (other bits). So a
# module asks for them only when it has no reduction, dot or convolution, and an array of
# at least WIDE_VECTOR_MIN_ELEMENTS elements (its kernels then run long enough to repay the
# compile), and the user's XLA_FLAGS does not choose the width.
WIDE_VECTORS = {"xla_cpu_prefer_vector_width": 512}
WIDE_VECTOR_MIN_ELEMENTS = 1 << 18
# operations whose order of additions XLA's own kernels may vectorize (small dots are
# emitted as LLVM loops too)
_ACCUMULATING = ("stablehlo.reduce", "stablehlo.dot", "stablehlo.convolution")


def _compiler_options(module: ModuleBuilder, text: str, jaxpr: Jaxpr):
    short = module.short_minor_reductions
    if short and text.count('"stablehlo.reduce"(') == short:
        return TREE_REWRITE_OPTIONAL
    if module.platform != "cpu":
        return None
    operations = set(_OPERATION_NAME.findall(text))
    options = ELEMENTAL_EMITTERS if operations <= ELEMENTAL_EMITTER_OPS else None
    if _wide_vectors_pay(operations, jaxpr):
        options = {**(options or {}), **WIDE_VECTORS}
    return options


def _wide_vectors_pay(operations, jaxpr: Jaxpr) -> bool:
    if not native_wide_vectors() or "xla_cpu_prefer_vector_width" in os.environ.get(
            "XLA_FLAGS", ""):
        return False
    if any(name.startswith(_ACCUMULATING) for name in operations):
        return False
    sizes = [v.aval.size for v in jaxpr.invars]
    sizes += [v.aval.size for eqn in jaxpr.eqns for v in eqn.outvars]
    return max(sizes, default=0) >= WIDE_VECTOR_MIN_ELEMENTS


DONATION_FAQ = "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."


def donation_attributes(in_avals, out_avals, donated) -> list[str | None]:
    """``main``'s argument attributes for the donated inputs, as JAX 0.10 sets them.

    A donated input aliases the first unclaimed output of identical shape and dtype
    (``tf.aliasing_output = N``); else one of equal element count lets XLA reuse it
    (``jax.buffer_donor = true``); else it is unusable and JAX's UserWarning is emitted.
    """
    attrs: list[str | None] = [None] * len(in_avals)
    if not any(donated):
        return attrs
    waiting: dict = {}
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d:
            waiting.setdefault((aval.shape, aval.dtype), []).append(i)
    matched_outputs = set()
    for j, aval in enumerate(out_avals):
        queue = waiting.get((aval.shape, aval.dtype))
        if queue:
            attrs[queue.pop(0)] = f"tf.aliasing_output = {j} : i32"
            matched_outputs.add(j)
    by_size: dict = {}
    for j, aval in enumerate(out_avals):
        if j not in matched_outputs:
            by_size.setdefault(aval.size, []).append(j)
    unusable = []
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d and attrs[i] is None:
            if by_size.get(aval.size):
                by_size[aval.size].pop(0)
                attrs[i] = "jax.buffer_donor = true"
            else:
                unusable.append(aval.str_short())
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                      f"{DONATION_FAQ}", UserWarning, stacklevel=2)
    return attrs


def lower_module(closed: ClosedJaxpr, name: str = "main_module",
                 donated=None, partitioning=None, platform=None) -> LoweredModule:
    """Lower a closed jaxpr to a module whose ``main`` takes (large consts..., invars...).

    ``donated`` flags the invars the caller donates (``jit``'s ``donate_argnums``); see
    :func:`donation_attributes`. ``partitioning`` (a :class:`Partitioning`) makes it one
    SPMD program over several devices: the mesh, and a sharding for every argument (the
    large consts are replicated). ``platform`` names the platform it is compiled for (rules
    may choose forms its compiler runs faster; None: portable forms only).
    """
    lowered, module = _lower_module_once(closed, name, donated, partitioning, platform, True)
    if lowered.compiler_options is not TREE_REWRITE_OPTIONAL and module.plain_extremes_emitted:
        # the module keeps the tree rewrite, under which a plain max/min runs scalar
        lowered, _ = _lower_module_once(closed, name, donated, partitioning, platform, False)
    return lowered


def _lower_module_once(closed, name, donated, partitioning, platform, plain_short_extremes):
    jaxpr = closed.jaxpr
    module = ModuleBuilder(f"jit_{name}", platform)
    module.plain_short_extremes = plain_short_extremes
    embedded, passed, passed_vars = [], [], []
    for var, value in zip(jaxpr.constvars, closed.consts, strict=True):
        if var.aval.size * var.aval.dtype.itemsize <= MAX_EMBEDDED_CONSTANT_BYTES:
            embedded.append((var, value))
        else:
            passed.append(value)
            passed_vars.append(var)
    arg_vars = passed_vars + jaxpr.invars
    if partitioning is not None:  # before the body: sharding constraints read the mesh
        partitioning.annotate_module(module)
    fb = module.function("main", [aval_type(v.aval) for v in arg_vars], "public")
    const_names = {}
    for var, value in embedded:
        const_names[var] = fb.constant(np.asarray(value, dtype=var.aval.dtype))
    for var, arg in zip(passed_vars, fb.args, strict=False):
        const_names[var] = arg
    outs = lower_jaxpr_body(fb, jaxpr, [const_names[v] for v in jaxpr.constvars],
                            fb.args[len(passed_vars):])
    fb.ret(outs)
    donated_args = ()
    if donated is not None and any(donated):
        attrs = donation_attributes([v.aval for v in jaxpr.invars],
                                    [v.aval for v in jaxpr.outvars], donated)
        n = len(passed_vars)
        fb.arg_attrs[n:] = attrs
        donated_args = tuple(n + i for i, a in enumerate(attrs) if a is not None)
    if partitioning is not None:
        partitioning.annotate_main(fb, [v.aval for v in passed_vars])
    text = module.text()
    return (LoweredModule(text, passed, donated_args, _compiler_options(module, text, jaxpr)),
            module)


class Partitioning:
    """How a module is split over devices: the device ``mesh`` (a ``Mesh``) and the
    sharding of each invar (per dimension, the mesh axes it is split over, e.g.
    ``[["x"], []]``); the partitioner chooses the results', except those ``out_specs``
    gives (None: its choice)."""

    __slots__ = ("mesh", "in_specs", "out_specs")

    def __init__(self, mesh, in_specs, out_specs=None):
        self.mesh = mesh
        self.in_specs = list(in_specs)
        self.out_specs = out_specs

    def annotate_module(self, module) -> None:
        module.num_partitions = self.mesh.size
        module.meshes["mesh"] = ("<[" + ", ".join(f'"{n}"={s}' for n, s in
                                                  self.mesh.shape.items()) + "]>")
        module.partition_mesh = self.mesh

    def annotate_main(self, main, const_avals) -> None:
        specs = [[[]] * len(a.shape) for a in const_avals] + self.in_specs
        main.arg_attrs = [_join_attrs(attr, sharding_attribute(spec))
                          for attr, spec in zip(main.arg_attrs, specs, strict=True)]
        for i, spec in enumerate(self.out_specs or ()):
            if spec is not None:
                main.result_attrs[i] = sharding_attribute(spec)


def sharding_attribute(spec) -> str:
    """``sdy.sharding`` of a value split as ``spec`` (per dimension, the mesh axes)."""
    return f"sdy.sharding = {sharding_value(spec)}"


def _join_attrs(first, second):
    return second if not first else f"{first}, {second}"
