"""What the linear-algebra primitives (``xjax.lax.linalg``) share: dtype checks, the
leading-batch-dims batching rule, lowering through a lax program, NumPy kernels applied per
matrix, and small matrix helpers written with lax (used by rules and lowerings).

How each decomposition is computed, and why (single-threaded float32 timings on this
project's CPU; each module gives its own):

- eagerly (NumPy ``impl``): LAPACK, as JAX's CPU backend. ``cholesky``, ``qr``, ``eigh``
  and ``svd`` call ``numpy.linalg`` (potrf, geqrf/orgqr, syevd, gesdd). NumPy exposes no LU
  or triangular solve: ``lu`` and ``triangular_solve`` use SciPy's LAPACK wrappers (getrf,
  trtrs) when SciPy is importable (an optional accelerator, not a dependency), otherwise
  NumPy code (a 500x500 LU: getrf 1.4 ms, the NumPy code ~30 ms). ``eig`` and ``schur`` run
  the same LAPACK custom call as under ``jit`` (the primitive compiled alone, cached per
  shape), so eager and jitted results agree bit for bit.
- under ``jit`` (``lower``): XLA's own ``stablehlo.cholesky`` and ``stablehlo.fft``; LAPACK
  through XLA FFI custom calls registered by ``xjax.runtime.ffi`` on NumPy's bundled
  OpenBLAS: ``lu`` (getrf), ``triangular_solve`` (trsm), ``eig`` (geev), ``schur`` (gees).
  Without that library they fall back to lax programs (``lu``) or raise
  ``NotImplementedError`` (``eig``, ``schur``). QR, eigh and SVD are lax programs compiled
  by XLA: Householder QR, parallel cyclic Jacobi eigh, one-sided Jacobi SVD. They agree with
  LAPACK to rounding but run 8-20x slower than it at n = 100-500 (100x100 eigh 12 ms vs
  0.6 ms) and compile in about a second.

Lowering through a lax program needs the staging interpreter and control flow, which live
above lax: they are imported when a lowering runs (as JAX's ``mlir.lower_fun`` does), never
when this module is imported.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.lax.batch_rules import bdim_at_front, batch_size, not_mapped
from xjax._src.lowering.stablehlo import aval_type, dense_layout
from xjax._src.core.avals import ShapedArray
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_function
from xjax._src.runtime import default_backend, ffi
from xjax._src.lax.compare import select_n
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.dot import dot_general
from xjax._src.lax.elementwise import conj as lax_conj, real as lax_real
from xjax._src.lax.gather_scatter import GatherDimensionNumbers, gather
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import broadcast_in_dim, expand_dims, squeeze, full as lax_full, transpose
from xjax._src import lax
from xjax._src.interpreters.eval import run_primitive_with_xla
from xjax._src.interpreters.staging import trace_to_jaxpr

# -- dtypes --


def check_inexact(name: str, dtype, position: int = 0) -> None:
    """JAX's TypeError for a non-float operand of a linear-algebra primitive."""
    if not (dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name} at position "
                        f"{position}. Accepted dtypes at position {position} are subtypes of "
                        "floating, complexfloating.")


def check_lapack_dtype(dtype) -> None:
    """LAPACK (JAX's CPU kernels) has no 16-bit floats: JAX raises this when it compiles."""
    if np.dtype(dtype) not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f"Unsupported dtype {np.dtype(dtype).name}: the CPU's "
                                  "linear-algebra kernels need float32, float64, complex64 or "
                                  "complex128.")


def check_matrix(name: str, aval, square: bool = False) -> None:
    if aval.ndim < 2:
        raise ValueError(f"Argument to {name} must have ndims >= 2, got shape {aval.shape}")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"Argument to {name} must be a batch of square matrices, got "
                         f"{aval.shape}")


def real_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtypes.is_complex(dtype):
        return np.dtype(np.float64 if dtype == np.complex128 else np.float32)
    return dtype


def complex_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtypes.is_complex(dtype):
        return dtype
    return np.dtype(np.complex128 if dtype == np.float64 else np.complex64)


# -- optional SciPy (LAPACK getrf/trtrs for the eager kernels) --

_scipy_linalg = None


def scipy_linalg():
    """``scipy.linalg`` when importable (and not disabled), else None."""
    global _scipy_linalg
    if _scipy_linalg is None:
        try:
            import scipy.linalg
            _scipy_linalg = scipy.linalg
        except ImportError:
            _scipy_linalg = False
    return _scipy_linalg or None


class use_scipy:
    """Context manager turning the SciPy kernels off (tests of the NumPy fallbacks)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __enter__(self):
        global _scipy_linalg
        self.saved = _scipy_linalg
        if not self.enabled:
            _scipy_linalg = False
        return self

    def __exit__(self, *exc):
        global _scipy_linalg
        _scipy_linalg = self.saved


def per_matrix(kernel, arrays, core_ndims, n_out: int):
    """Apply ``kernel`` (one matrix problem -> ``n_out`` arrays) to every problem of the
    leading batch dims of ``arrays`` (``core_ndims[i]`` trailing dims of ``arrays[i]`` make one
    problem); return ``n_out`` stacked arrays."""
    batch = arrays[0].shape[:arrays[0].ndim - core_ndims[0]]
    count = int(np.prod(batch)) if batch else 1
    flat = [a.reshape((count,) + a.shape[a.ndim - k:]) for a, k in
            zip(arrays, core_ndims, strict=True)]
    results = [kernel(*(f[i] for f in flat)) for i in range(count)]
    if count == 0:  # no problems: ask the kernel for shapes with a dummy problem
        dummy = kernel(*(np.zeros(f.shape[1:], f.dtype) for f in flat))
        return [np.zeros(batch + np.shape(d), np.asarray(d).dtype) for d in dummy]
    outs = []
    for j in range(n_out):
        stacked = np.stack([np.asarray(r[j]) for r in results])
        outs.append(stacked.reshape(batch + stacked.shape[1:]))
    return outs


# -- batching: every linear-algebra primitive takes leading batch dims --


def batch_leading(primitive):
    """The batching rule of a primitive whose operands carry leading batch dims: the batch
    axis moves to the front of every operand (unmapped ones are broadcast) and of every
    output."""

    def batch(args, dims, **params):
        size = batch_size(args, dims)
        moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
        out = primitive.bind(*moved, **params)
        if primitive.multiple_results:
            return out, [0] * len(out)
        return out, 0

    return batch


# -- lowering through a lax program --


def lower_via_lax(algorithm, name: str, multiple_results: bool = False):
    """A lowering rule that emits ``algorithm(*operands, **params)`` (lax calls on
    tracers, control flow included) as a private function of the module, called once per
    equation. The program is traced when the rule runs; see the module docstring."""

    def lower(ctx, *operands, **params):
        module = ctx.module
        key = ("xjax._src.higher_order.linalg.api", name, tuple(sorted(params.items(), key=lambda kv: kv[0])),
               tuple(ctx.avals_in))
        callee = module.cache.get(key)
        if callee is None:
            def flat(*args):
                out = algorithm(*args, **params)
                return list(out) if multiple_results else [out]
            closed = trace_to_jaxpr(flat, list(ctx.avals_in))
            consts = [np.asarray(c) for c in closed.consts]
            callee = (lower_jaxpr_function(module, name, closed.jaxpr).name, consts)
            module.cache[key] = callee
        fname, consts = callee
        const_names = [ctx.builder.constant(c) for c in consts]
        outs = ctx.builder.op("func.call", const_names + list(operands),
                              [aval_type(a) for a in ctx.avals_out], {"callee": f"@{fname}"})
        return outs if multiple_results else outs[0]

    return lower


# -- matrix helpers written with lax (rules and lowerings) --


def ndim(x) -> int:
    return len(get_aval(x).shape)


def shape(x) -> tuple:
    return tuple(get_aval(x).shape)


def dtype(x) -> np.dtype:
    return get_aval(x).dtype


def constant(value, dtype_) -> object:
    """A lax operand holding the NumPy ``value`` (cast to ``dtype_``)."""
    return to_operand(np.asarray(value, dtype=dtype_))


def full(shape_, value, dtype_):
    return lax_full(tuple(shape_), value, dtype_)


def mT(x):
    """Swap the last two axes."""
    n = ndim(x)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def conj(x):
    if dtypes.is_complex(dtype(x)):
        return lax_conj(x)
    return x


def mH(x):
    """Conjugate transpose of the last two axes."""
    return conj(mT(x))


def matmul(a, b):
    """``a @ b`` with equal leading batch dims (lax.dot_general)."""
    n = ndim(a)
    batch = tuple(range(n - 2))
    return dot_general(a, b, (((n - 1,), (n - 2,)), (batch, batch)))


def iota_mask(shape_, op: str, offset: int = 0):
    """Boolean mask of the last two axes: ``row op col + offset`` (op: 'ge', 'le', 'eq',
    'gt', 'lt')."""
    n = len(shape_)
    rows = lax.broadcasted_iota(np.int32, shape_, n - 2)
    cols = lax.broadcasted_iota(np.int32, shape_, n - 1)
    if offset:
        cols = lax.add(cols, full(shape_, offset, np.int32))
    return getattr(lax, op)(rows, cols)


def where(mask, x, y):
    """``x`` where ``mask``, else ``y`` (select_n takes the false case first)."""
    return select_n(mask, y, x)


def zeros_like(x):
    return full(shape(x), 0, dtype(x))


def tril(x, k: int = 0):
    """NumPy's tril of the last two axes: keep ``col - row <= k``."""
    return where(iota_mask(shape(x), "ge", -k), x, zeros_like(x))


def triu(x, k: int = 0):
    """NumPy's triu of the last two axes: keep ``col - row >= k``."""
    return where(iota_mask(shape(x), "le", -k), x, zeros_like(x))


def eye_like(x):
    """Identity matrices of ``x``'s shape and dtype."""
    return convert_element_type(iota_mask(shape(x), "eq"), dtype(x))


def real(x):
    if dtypes.is_complex(dtype(x)):
        return lax_real(x)
    return x


def symmetrize(x):
    """(x + x^H) / 2, as JAX's wrappers symmetrize Hermitian inputs."""
    return lax.div(lax.add(x, mH(x)), full((), 2, dtype(x)))


def batch_not_mapped(dims) -> bool:
    return all(d is not_mapped for d in dims)


def take_rows(x, idx):
    """``x[..., idx, :]`` per batch: ``x`` (..., m, n), ``idx`` (..., r) of int32 indices
    (in bounds) -> (..., r, n)."""
    nb = ndim(x) - 2
    batch = tuple(range(nb))
    dnums = GatherDimensionNumbers(offset_dims=(nb + 1,), collapsed_slice_dims=(nb,),
                                   start_index_map=(nb,), operand_batching_dims=batch,
                                   start_indices_batching_dims=batch)
    return gather(x, expand_dims(idx, (nb + 1,)), dnums, (1,) * (nb + 1) + (shape(x)[-1],),
                  mode="promise_in_bounds")


def take_last(x, idx):
    """``x[..., idx]`` per batch for ``x`` (..., m) and ``idx`` (..., r)."""
    n = ndim(x)
    return squeeze(take_rows(expand_dims(x, (n,)), idx), (n,))


def bcast(x, shape_, dims):
    """broadcast_in_dim with ``x``'s axes placed at ``dims`` of ``shape_``."""
    return broadcast_in_dim(x, tuple(shape_), tuple(dims))


def lead(shape_, k: int) -> tuple:
    """The first ``len(shape_) - k`` axis numbers (the batch axes of a rank-``k`` core)."""
    return tuple(range(len(shape_) - k))


def loop_index(i):
    """A fori_loop index as int32 (it is int64 with x64 enabled), to mix with int32 shapes."""
    return i if dtype(i) == np.int32 else convert_element_type(i, np.int32)


def slice_at(x, start, size: int, axis: int):
    """``lax.dynamic_slice_in_dim`` with every start of ``start``'s dtype (int32 here, where
    the lax wrapper would add default-int zeros: int64 under x64)."""
    starts = [start if d == axis else lax.full((), 0, dtype(start)) for d in range(ndim(x))]
    sizes = [size if d == axis else n for d, n in enumerate(shape(x))]
    return lax.dynamic_slice(x, starts, sizes)


def update_at(x, update, start, axis: int):
    """``lax.dynamic_update_slice_in_dim`` with int32 starts (see :func:`slice_at`)."""
    starts = [start if d == axis else lax.full((), 0, dtype(start)) for d in range(ndim(x))]
    return lax.dynamic_update_slice(x, update, starts)


# -- LAPACK through xjax's XLA FFI custom calls (CPU) --


def lapack_target_missing(name: str, target: str, routine: str, aval):
    """Why ``target`` (an FFI custom call to LAPACK ``routine``) cannot compute ``name`` for
    ``aval`` under ``jit`` here, as a NotImplementedError to raise; None when it can."""
    check_lapack_dtype(aval.dtype)
    if default_backend() != "cpu":
        return NotImplementedError(f"{name} is only implemented on the CPU (LAPACK {routine}, "
                                   "as in JAX)")
    if target not in ffi.ffi_targets("cpu"):
        return NotImplementedError(
            f"{name} under jit needs LAPACK {routine} from the OpenBLAS bundled with NumPy's "
            "wheels (numpy.libs/libscipy_openblas64_*.so), which was not found")
    return None


def lower_lapack_call(ctx, target: str, operand, attributes: dict):
    """``stablehlo.custom_call @target`` (XLA FFI, api_version 4) of one matrix operand with
    integer ``attributes``, making ``ctx.avals_out``. Matrices (the operand's rank) are
    column-major with the batch dims outermost, as LAPACK wants them (XLA transposes);
    vectors keep the default layout."""
    rank = len(ctx.avals_in[0].shape)
    matrix = dense_layout([rank - 2, rank - 1, *range(rank - 3, -1, -1)])

    def layout(aval):
        return matrix if len(aval.shape) == rank else dense_layout(
            list(range(len(aval.shape) - 1, -1, -1)))

    config = ", ".join(f"{k} = {int(v)} : i64" for k, v in attributes.items())
    attrs = {"call_target_name": f'"{target}"', "api_version": "4 : i32",
             "backend_config": f"{{{config}}}", "operand_layouts": f"[{matrix}]",
             "result_layouts": f"[{', '.join(layout(a) for a in ctx.avals_out)}]"}
    return ctx.builder.op("stablehlo.custom_call", [operand],
                          [aval_type(a) for a in ctx.avals_out], attrs)


def run_compiled(primitive, arrays, **params):
    """Run ``primitive`` on NumPy ``arrays`` compiled alone by XLA (cached per shape): the
    eager path of a primitive whose only kernel is a LAPACK custom call."""
    avals = [ShapedArray(a.shape, a.dtype) for a in arrays]
    return run_primitive_with_xla(primitive, list(arrays), avals, params)
