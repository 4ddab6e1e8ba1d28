"""``xjax.numpy``: NumPy's API on xjax arrays, composed from ``xjax.lax``.

>>> import xjax.numpy as jnp
>>> jnp.add(1, 1.0)
Array(2., dtype=float32, weak_type=True)

Importing this package gives ``xjax.Array`` and tracers their operators and methods
(``x + y``, ``x[idx]``, ``x.at[idx].set(y)``, ``x.sum()``...).
"""

from xjax._src.numpy.io import (  # noqa: F401
    ComplexWarning as ComplexWarning, array_repr as array_repr, array_str as array_str,
    from_dlpack as from_dlpack, frombuffer as frombuffer, fromfile as fromfile,
    fromiter as fromiter, fromstring as fromstring, load as load, save as save, savez as savez,
)
from xjax._src.numpy.ufuncs import (  # noqa: F401
    abs as abs, absolute as absolute, acos as acos, acosh as acosh, add as add, angle as angle,
    arccos as arccos, arccosh as arccosh, arcsin as arcsin, arcsinh as arcsinh,
    arctan as arctan, arctan2 as arctan2, arctanh as arctanh, around as around, asin as asin,
    asinh as asinh, atan as atan, atan2 as atan2, atanh as atanh, cbrt as cbrt, ceil as ceil,
    conj as conj, conjugate as conjugate, copysign as copysign, cos as cos, cosh as cosh,
    deg2rad as deg2rad, degrees as degrees, divide as divide, divmod as divmod, exp as exp,
    exp2 as exp2, expm1 as expm1, fabs as fabs, float_power as float_power,
    floor as floor, floor_divide as floor_divide, fmod as fmod, heaviside as heaviside,
    hypot as hypot, imag as imag, isinf as isinf, ldexp as ldexp, log as log, log10 as log10,
    log1p as log1p, log2 as log2, logaddexp as logaddexp, logaddexp2 as logaddexp2,
    maximum as maximum, minimum as minimum, mod as mod, modf as modf, multiply as multiply,
    negative as negative, nextafter as nextafter, positive as positive, pow as pow,
    power as power, rad2deg as rad2deg, radians as radians, real as real,
    reciprocal as reciprocal, remainder as remainder, rint as rint, round as round,
    sign as sign, signbit as signbit, sin as sin, sinc as sinc, sinh as sinh, sqrt as sqrt,
    square as square, subtract as subtract, tan as tan, tanh as tanh,
    true_divide as true_divide, trunc as trunc,
)
from xjax._src.numpy.reductions import (  # noqa: F401
    all as all, amax as amax, amin as amin, any as any, argmax as argmax, argmin as argmin,
    average as average, count_nonzero as count_nonzero, cumprod as cumprod, cumsum as cumsum,
    cumulative_prod as cumulative_prod, cumulative_sum as cumulative_sum, max as max,
    mean as mean, min as min, nanargmax as nanargmax, nanargmin as nanargmin,
    nancumprod as nancumprod, nancumsum as nancumsum, nanmax as nanmax, nanmean as nanmean,
    nanmin as nanmin, nanprod as nanprod, nanstd as nanstd, nansum as nansum, nanvar as nanvar,
    prod as prod, ptp as ptp, std as std, sum as sum, var as var,
)
from xjax._src.numpy.logic import (  # noqa: F401
    allclose as allclose, argwhere as argwhere, array_equal as array_equal,
    array_equiv as array_equiv, bitwise_and as bitwise_and, bitwise_count as bitwise_count,
    bitwise_invert as bitwise_invert, bitwise_left_shift as bitwise_left_shift,
    bitwise_not as bitwise_not, bitwise_or as bitwise_or,
    bitwise_right_shift as bitwise_right_shift, bitwise_xor as bitwise_xor, clip as clip,
    equal as equal, flatnonzero as flatnonzero, fmax as fmax, fmin as fmin, greater as greater,
    greater_equal as greater_equal, invert as invert, isclose as isclose,
    iscomplex as iscomplex, iscomplexobj as iscomplexobj, isfinite as isfinite, isnan as isnan,
    isneginf as isneginf, isposinf as isposinf, isreal as isreal, isrealobj as isrealobj,
    left_shift as left_shift, less as less, less_equal as less_equal,
    logical_and as logical_and, logical_not as logical_not, logical_or as logical_or,
    logical_xor as logical_xor, nan_to_num as nan_to_num, nonzero as nonzero,
    not_equal as not_equal, right_shift as right_shift, select as select, where as where,
)
from xjax._src.numpy.shape_ops import (  # noqa: F401
    append as append, array_split as array_split, atleast_1d as atleast_1d,
    atleast_2d as atleast_2d, atleast_3d as atleast_3d, broadcast_arrays as broadcast_arrays,
    broadcast_shapes as broadcast_shapes, broadcast_to as broadcast_to,
    column_stack as column_stack, concat as concat, concatenate as concatenate, diff as diff,
    dsplit as dsplit, dstack as dstack, expand_dims as expand_dims, flip as flip,
    fliplr as fliplr, flipud as flipud, hsplit as hsplit, hstack as hstack,
    matrix_transpose as matrix_transpose, moveaxis as moveaxis, ndim as ndim,
    permute_dims as permute_dims, ravel as ravel, repeat as repeat, reshape as reshape,
    roll as roll, rollaxis as rollaxis, rot90 as rot90, row_stack as row_stack, shape as shape,
    size as size, split as split, squeeze as squeeze, stack as stack, swapaxes as swapaxes,
    tile as tile, transpose as transpose, unstack as unstack, vsplit as vsplit,
    vstack as vstack,
)
from xjax._src.numpy.misc import (  # noqa: F401
    apply_along_axis as apply_along_axis, apply_over_axes as apply_over_axes, block as block,
    choose as choose, compress as compress, delete as delete, diagflat as diagflat,
    ediff1d as ediff1d, extract as extract, fill_diagonal as fill_diagonal,
    fromfunction as fromfunction, insert as insert, mask_indices as mask_indices,
    packbits as packbits, place as place, put as put, put_along_axis as put_along_axis,
    resize as resize, unpackbits as unpackbits,
)
from xjax._src.numpy.creation import (  # noqa: F401
    arange as arange, array as array, asarray as asarray, copy as copy, empty as empty,
    empty_like as empty_like, eye as eye, full as full, full_like as full_like,
    geomspace as geomspace, identity as identity, linspace as linspace, logspace as logspace,
    ones as ones, ones_like as ones_like, zeros as zeros, zeros_like as zeros_like,
)
from xjax._src.numpy.sorting import (  # noqa: F401
    argpartition as argpartition, argsort as argsort, intersect1d as intersect1d,
    lexsort as lexsort, partition as partition, setdiff1d as setdiff1d, setxor1d as setxor1d,
    sort as sort, sort_complex as sort_complex, union1d as union1d, unique as unique,
    unique_all as unique_all, unique_counts as unique_counts, unique_inverse as unique_inverse,
    unique_values as unique_values,
)
from xjax._src.numpy.array_methods import (  # noqa: F401
    astype as astype,
)
from xjax._src.numpy.numerical import (  # noqa: F401
    bartlett as bartlett, blackman as blackman, corrcoef as corrcoef, cov as cov,
    frexp as frexp, gradient as gradient, hamming as hamming, hanning as hanning, i0 as i0,
    interp as interp, kaiser as kaiser, matvec as matvec, spacing as spacing,
    trapezoid as trapezoid, unwrap as unwrap, vecmat as vecmat,
)
from xjax._src.numpy.scalar_types import (  # noqa: F401
    bfloat16 as bfloat16, bool as bool, bool_ as bool_, cdouble as cdouble,
    character as character, complex128 as complex128, complex64 as complex64,
    complex_ as complex_, complexfloating as complexfloating, csingle as csingle,
    double as double, flexible as flexible, float16 as float16, float32 as float32,
    float64 as float64, float_ as float_, floating as floating, generic as generic,
    inexact as inexact, int16 as int16, int32 as int32, int64 as int64, int8 as int8,
    int_ as int_, integer as integer, number as number, object_ as object_,
    signedinteger as signedinteger, single as single, uint as uint, uint16 as uint16,
    uint32 as uint32, uint64 as uint64, uint8 as uint8, unsignedinteger as unsignedinteger,
)
from xjax._src.numpy.histograms import (  # noqa: F401
    bincount as bincount, histogram as histogram, histogram2d as histogram2d,
    histogram_bin_edges as histogram_bin_edges, histogramdd as histogramdd,
)
from xjax._src.numpy.index_objects import (  # noqa: F401
    c_ as c_, mgrid as mgrid, ogrid as ogrid, r_ as r_,
)
from xjax._src.numpy import (  # noqa: F401
    can_cast as can_cast, dtype as dtype, e as e, euler_gamma as euler_gamma, finfo as finfo,
    float4_e2m1fn as float4_e2m1fn, float6_e2m3fn as float6_e2m3fn,
    float6_e3m2fn as float6_e3m2fn, float8_e3m4 as float8_e3m4, float8_e4m3 as float8_e4m3,
    float8_e4m3b11fnuz as float8_e4m3b11fnuz, float8_e4m3fn as float8_e4m3fn,
    float8_e4m3fnuz as float8_e4m3fnuz, float8_e5m2 as float8_e5m2,
    float8_e5m2fnuz as float8_e5m2fnuz, float8_e8m0fnu as float8_e8m0fnu,
    get_printoptions as get_printoptions, iinfo as iinfo, inf as inf, int1 as int1,
    int2 as int2, int4 as int4, isdtype as isdtype, isscalar as isscalar, iterable as iterable,
    nan as nan, ndarray as ndarray, newaxis as newaxis, pi as pi, printoptions as printoptions,
    set_printoptions as set_printoptions, uint1 as uint1, uint2 as uint2, uint4 as uint4,
)
from xjax._src.numpy.linalg_basic import (  # noqa: F401
    convolve as convolve, correlate as correlate, cross as cross, dot as dot, inner as inner,
    kron as kron, matmul as matmul, outer as outer, tensordot as tensordot, vdot as vdot,
    vecdot as vecdot,
)
from xjax._src.numpy.matrices import (  # noqa: F401
    diag as diag, diagonal as diagonal, trace as trace, tri as tri, tril as tril, triu as triu,
)
from xjax._src.numpy.index_tricks import (  # noqa: F401
    diag_indices as diag_indices, diag_indices_from as diag_indices_from,
    index_exp as index_exp, indices as indices, isin as isin, ix_ as ix_, meshgrid as meshgrid,
    ravel_multi_index as ravel_multi_index, s_ as s_, tril_indices as tril_indices,
    tril_indices_from as tril_indices_from, triu_indices as triu_indices,
    triu_indices_from as triu_indices_from, unravel_index as unravel_index,
)
from xjax._src.numpy.control_flow_functions import (  # noqa: F401
    digitize as digitize, gcd as gcd, lcm as lcm, piecewise as piecewise, polyval as polyval,
    searchsorted as searchsorted,
)
from xjax._src.numpy.einsum import (  # noqa: F401
    einsum as einsum, einsum_path as einsum_path,
)
from xjax._src.numpy.vectorize import (  # noqa: F401
    frompyfunc as frompyfunc, ufunc as ufunc, vectorize as vectorize,
)
from xjax._src.core.dtypes import (  # noqa: F401
    issubdtype as issubdtype, promote_types as promote_types, result_type as result_type,
)
from xjax._src.numpy.quantiles import (  # noqa: F401
    median as median, nanmedian as nanmedian, nanpercentile as nanpercentile,
    nanquantile as nanquantile, percentile as percentile, quantile as quantile,
)
from xjax._src.numpy.padding import (  # noqa: F401
    pad as pad,
)
from xjax._src.numpy.polynomial import (  # noqa: F401
    poly as poly, polyadd as polyadd, polyder as polyder, polydiv as polydiv,
    polyfit as polyfit, polyint as polyint, polymul as polymul, polysub as polysub,
    roots as roots, trim_zeros as trim_zeros, vander as vander,
)
from xjax._src.numpy.indexing import (  # noqa: F401
    take as take, take_along_axis as take_along_axis,
)
from xjax.numpy import fft as fft  # noqa: F401
from xjax.numpy import linalg as linalg  # noqa: F401
