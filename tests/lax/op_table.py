"""The rule check's table (DESIGN.md §4): per primitive, how to test it.

Each family lists its records in ``xjax/testing/op_records/<family>.py`` as ``RECORDS``;
this module gathers them. ``tests/lax/test_primitive_rules.py`` walks every registered
primitive and checks it against its record.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Callable, Sequence

import numpy as np

from xjax._src.core import dtypes
import op_records

FLOATS = (np.float32, np.float16, dtypes.bfloat16)
FLOATS_X64 = (np.float64,)
COMPLEX = (np.complex64,)
SIGNED = (np.int8, np.int16, np.int32)
UNSIGNED = (np.uint8, np.uint16, np.uint32)
INTS = SIGNED + UNSIGNED
BOOL = (np.bool_,)
NUMERIC = FLOATS + COMPLEX + INTS
ALL = NUMERIC + BOOL


@dataclasses.dataclass
class OpRecord:
    """How to test one primitive.

    Attributes
    ----------
    primitive : str
        The registered primitive's name.
    fun : callable
        Calls the public lax wrapper on arrays (closing over static params).
    shapes : sequence of tuples
        One shape per array operand.
    dtypes : sequence of dtypes
        Dtypes to try; every operand gets the dtype unless ``make_args`` decides otherwise.
    make_args : callable(rng, shapes, dtype) -> list of NumPy arrays, optional
        Input generator (defaults to :func:`random_args`).
    tol : float
        Relative and absolute tolerance of impl vs XLA (0 for exact ops).
    name : str
        A label for the test id when a primitive has several records.
    grad_tol, grad_modes, grad_order :
        How ``tests/lax/test_primitive_grads.py`` checks derivatives (float32 inputs made by
        ``make_args``): tolerance (None: check_grads' default), modes, and order.
    """

    primitive: str
    fun: Callable
    shapes: Sequence[tuple]
    dtypes: Sequence
    make_args: Callable | None = None
    tol: float = 0.0
    name: str = ""
    grad_tol: float | None = None
    grad_modes: tuple = ("fwd", "rev")
    grad_order: int = 2

    def args(self, rng, dtype):
        make = self.make_args or random_args
        return make(rng, self.shapes, np.dtype(dtype))


def random_args(rng, shapes, dtype):
    """Random operands of ``dtype``: small integers, normal floats, complex, booleans."""
    return [random_array(rng, shape, dtype) for shape in shapes]


def random_array(rng, shape, dtype, low=None, high=None):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_complex(dtype):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtypes.is_float(dtype):
        lo = -3.0 if low is None else low
        hi = 3.0 if high is None else high
        return rng.uniform(lo, hi, shape).astype(dtype)
    info = np.iinfo(dtype)
    lo = max(info.min, -20) if low is None else low
    hi = min(info.max, 20) if high is None else high
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


# Primitives that need no record, with the reason.
NO_RECORD = {
    "jit": "a call primitive: tested through jit itself (tests/interpreters)",
    "check": "checkify's effectful assertion, functionalized by checkify before it runs: "
             "tested in tests/test_checkify.py",
    **{name: "a collective: computed by vmap, or lowered inside a shard_map over several "
             "devices; tested in tests/interpreters/test_vmap.py, tests/lax/test_collectives.py "
             "and tests/transformations/test_shard_map_devices.py"
       for name in ("psum", "pmax", "pmin", "all_gather", "axis_index")},
    "shard_map": "holds a per-device body over a mesh: tested in "
                 "tests/transformations/test_shard_map.py (one device) and "
                 "test_shard_map_devices.py (several)",
    **{name: "holds a user function and rule: tested in "
             "tests/interpreters/test_custom_derivatives.py"
       for name in ("custom_jvp_call", "custom_vjp_call", "custom_lin", "checkpoint")},
    **{name: "holds a user's Python function: tested in tests/test_callbacks.py"
       for name in ("pure_callback", "io_callback", "debug_callback")},
    **{name: "a collective: computed by vmap, or lowered inside a shard_map over several "
             "devices (not ragged_all_to_all); tested in tests/lax/test_collectives.py and "
             "tests/transformations/test_shard_map_devices.py"
       for name in ("ppermute", "pbroadcast", "all_to_all", "reduce_scatter",
                    "ragged_all_to_all")},
    # rng_bit_generator's batching rule is JAX's (the first key draws the whole batch), not a
    # per-example loop; rng_uniform reads XLA's hidden state, so eager and XLA differ
    **{name: "random bits: tested in tests/lax/test_rng_bit_generator.py"
       for name in ("rng_bit_generator", "rng_uniform")},
    **{name: "a token or staging primitive: tested in tests/lax/test_tokens.py"
       for name in ("create_token", "after_all", "stage", "dce_sink", "composite")},
    "custom_vmap_call": "holds a user function and vmap rule: tested in "
                        "tests/test_custom_batching.py",
    "ffi_call": "calls a foreign C handler: tested in tests/test_ffi.py (compiles a handler)",
}


def all_records() -> list[OpRecord]:
    records = []
    for info in pkgutil.iter_modules(op_records.__path__):
        module = importlib.import_module(f"op_records.{info.name}")
        records.extend(module.RECORDS)
    return records
