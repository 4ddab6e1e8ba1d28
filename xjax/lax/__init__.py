"""``xjax.lax``: the strict lower layer. No type promotion, explicit shapes, one primitive
per operation (DESIGN.md §4).
"""

from xjax._src.lax.dot_algorithms import (  # noqa: F401
    AccuracyMode as AccuracyMode, DotAlgorithm as DotAlgorithm,
    DotAlgorithmPreset as DotAlgorithmPreset, PrecisionLike as PrecisionLike,
    Tolerance as Tolerance,
)
from xjax._src.lax.placement import (  # noqa: F401
    ArrayCopySemantics as ArrayCopySemantics, device_put_p as device_put_p,
    sharding_constraint_p as sharding_constraint_p,
    with_sharding_constraint as with_sharding_constraint,
)
from xjax._src.lax.convolution import (  # noqa: F401
    ConvDimensionNumbers as ConvDimensionNumbers, conv as conv,
    conv_dimension_numbers as conv_dimension_numbers,
    conv_general_dilated as conv_general_dilated,
    conv_general_dilated_p as conv_general_dilated_p,
    conv_with_general_padding as conv_with_general_padding, padtype_to_pads as padtype_to_pads,
)
from xjax._src.lax.conv_helpers import (  # noqa: F401
    ConvGeneralDilatedDimensionNumbers as ConvGeneralDilatedDimensionNumbers,
    conv_general_dilated_local as conv_general_dilated_local,
    conv_general_permutations as conv_general_permutations,
    conv_general_shape_tuple as conv_general_shape_tuple, conv_shape_tuple as conv_shape_tuple,
)
from xjax._src.lax.dot import (  # noqa: F401
    DotDimensionNumbers as DotDimensionNumbers, Precision as Precision,
    batch_matmul as batch_matmul, dot as dot, dot_general as dot_general,
    dot_general_p as dot_general_p,
)
from xjax._src.lax.fft import (  # noqa: F401
    FftType as FftType, fft as fft, fft_p as fft_p,
)
from xjax._src.lax.gather_scatter import (  # noqa: F401
    GatherDimensionNumbers as GatherDimensionNumbers, GatherScatterMode as GatherScatterMode,
    ScatterDimensionNumbers as ScatterDimensionNumbers, gather as gather, gather_p as gather_p,
    scatter as scatter, scatter_add as scatter_add, scatter_add_p as scatter_add_p,
    scatter_max as scatter_max, scatter_max_p as scatter_max_p, scatter_min as scatter_min,
    scatter_min_p as scatter_min_p, scatter_mul as scatter_mul, scatter_mul_p as scatter_mul_p,
    scatter_p as scatter_p, scatter_sub as scatter_sub, scatter_sub_p as scatter_sub_p,
)
from xjax._src.higher_order.ragged_dot import (  # noqa: F401
    RaggedDotDimensionNumbers as RaggedDotDimensionNumbers, ragged_dot as ragged_dot,
    ragged_dot_general as ragged_dot_general, ragged_dot_general_p as ragged_dot_general_p,
)
from xjax._src.lax.rng import (  # noqa: F401
    RandomAlgorithm as RandomAlgorithm, rng_bit_generator as rng_bit_generator,
    rng_bit_generator_p as rng_bit_generator_p, rng_uniform as rng_uniform,
    rng_uniform_p as rng_uniform_p,
)
from xjax._src.lax.elementwise import (  # noqa: F401
    RoundingMethod as RoundingMethod, abs as abs, abs_p as abs_p, add as add, add_p as add_p,
    ceil as ceil, ceil_p as ceil_p, complex as complex, complex_p as complex_p, conj as conj,
    conj_p as conj_p, copy_p as copy_p, div as div, div_p as div_p, floor as floor,
    floor_p as floor_p, imag as imag, imag_p as imag_p, integer_pow as integer_pow,
    integer_pow_p as integer_pow_p, is_finite as is_finite, is_finite_p as is_finite_p,
    max as max, max_p as max_p, min as min, min_p as min_p, mul as mul, mul_p as mul_p,
    neg as neg, neg_p as neg_p, nextafter as nextafter, nextafter_p as nextafter_p, pow as pow,
    pow_p as pow_p, real as real, real_p as real_p, reciprocal as reciprocal, rem as rem,
    rem_p as rem_p, round as round, round_p as round_p, sign as sign, sign_p as sign_p,
    square as square, square_p as square_p, sub as sub, sub_p as sub_p,
)
from xjax._src.lax.transcendental import (  # noqa: F401
    acos as acos, acos_p as acos_p, acosh as acosh, acosh_p as acosh_p, asin as asin,
    asin_p as asin_p, asinh as asinh, asinh_p as asinh_p, atan as atan, atan2 as atan2,
    atan2_p as atan2_p, atan_p as atan_p, atanh as atanh, atanh_p as atanh_p, cbrt as cbrt,
    cbrt_p as cbrt_p, cos as cos, cos_p as cos_p, cosh as cosh, cosh_p as cosh_p, exp as exp,
    exp2 as exp2, exp2_p as exp2_p, exp_p as exp_p, expm1 as expm1, expm1_p as expm1_p,
    log as log, log1p as log1p, log1p_p as log1p_p, log_p as log_p, logistic as logistic,
    logistic_p as logistic_p, rsqrt as rsqrt, rsqrt_p as rsqrt_p, sin as sin, sin_p as sin_p,
    sinh as sinh, sinh_p as sinh_p, sqrt as sqrt, sqrt_p as sqrt_p, tan as tan, tan_p as tan_p,
    tanh as tanh, tanh_p as tanh_p,
)
from xjax._src.lax.tokens import (  # noqa: F401
    after_all as after_all, after_all_p as after_all_p, composite as composite,
    create_token as create_token, create_token_p as create_token_p, dce_sink as dce_sink,
    dce_sink_p as dce_sink_p, platform_dependent as platform_dependent, stage as stage,
    stage_p as stage_p,
)
from xjax._src.lax.parallel import (  # noqa: F401
    all_gather as all_gather, all_gather_p as all_gather_p, axis_index as axis_index,
    axis_index_p as axis_index_p, axis_size as axis_size, pmax as pmax, pmax_p as pmax_p,
    pmean as pmean, pmin as pmin, pmin_p as pmin_p, psum as psum, psum_p as psum_p,
)
from xjax._src.lax.parallel_permute import (  # noqa: F401
    all_to_all as all_to_all, all_to_all_p as all_to_all_p, pbroadcast as pbroadcast,
    pcast as pcast, ppermute as ppermute, ppermute_p as ppermute_p, precv as precv,
    psend as psend, pshuffle as pshuffle, psum_scatter as psum_scatter, pswapaxes as pswapaxes,
    ragged_all_to_all as ragged_all_to_all, ragged_all_to_all_p as ragged_all_to_all_p,
)
from xjax._src.lax.bitwise import (  # noqa: F401
    and_p as and_p, bitwise_and as bitwise_and, bitwise_not as bitwise_not,
    bitwise_or as bitwise_or, bitwise_xor as bitwise_xor, clz as clz, clz_p as clz_p,
    mulhi as mulhi, mulhi_p as mulhi_p, not_p as not_p, or_p as or_p,
    population_count as population_count, population_count_p as population_count_p,
    shift_left as shift_left, shift_left_p as shift_left_p,
    shift_right_arithmetic as shift_right_arithmetic,
    shift_right_arithmetic_p as shift_right_arithmetic_p,
    shift_right_logical as shift_right_logical, shift_right_logical_p as shift_right_logical_p,
    xor_p as xor_p,
)
from xjax._src.higher_order.approx_topk import (  # noqa: F401
    approx_max_k as approx_max_k, approx_min_k as approx_min_k,
    approx_top_k_p as approx_top_k_p,
)
from xjax._src.lax.reduce import (  # noqa: F401
    argmax as argmax, argmax_p as argmax_p, argmin as argmin, argmin_p as argmin_p,
    reduce_and as reduce_and, reduce_and_p as reduce_and_p, reduce_max as reduce_max,
    reduce_max_p as reduce_max_p, reduce_min as reduce_min, reduce_min_p as reduce_min_p,
    reduce_or as reduce_or, reduce_or_p as reduce_or_p, reduce_prod as reduce_prod,
    reduce_prod_p as reduce_prod_p, reduce_sum as reduce_sum, reduce_sum_p as reduce_sum_p,
    reduce_xor as reduce_xor, reduce_xor_p as reduce_xor_p,
)
from xjax._src.higher_order.associative_scan import (  # noqa: F401
    associative_scan as associative_scan,
)
from xjax._src.lax.special import (  # noqa: F401
    bessel_i0e as bessel_i0e, bessel_i0e_p as bessel_i0e_p, bessel_i1e as bessel_i1e,
    bessel_i1e_p as bessel_i1e_p, betainc as betainc, digamma as digamma,
    digamma_p as digamma_p, erf as erf, erf_inv as erf_inv, erf_inv_p as erf_inv_p,
    erf_p as erf_p, erfc as erfc, erfc_p as erfc_p, igamma as igamma,
    igamma_grad_a as igamma_grad_a, igamma_grad_a_p as igamma_grad_a_p, igamma_p as igamma_p,
    igammac as igammac, igammac_p as igammac_p, lgamma as lgamma, lgamma_p as lgamma_p,
    polygamma as polygamma, polygamma_p as polygamma_p, random_gamma_grad as random_gamma_grad,
    regularized_incomplete_beta_p as regularized_incomplete_beta_p, zeta as zeta,
    zeta_p as zeta_p,
)
from xjax._src.lax.convert import (  # noqa: F401
    bitcast_convert_type as bitcast_convert_type,
    bitcast_convert_type_p as bitcast_convert_type_p,
    convert_element_type as convert_element_type,
    convert_element_type_p as convert_element_type_p, reduce_precision as reduce_precision,
    reduce_precision_p as reduce_precision_p,
)
from xjax._src.lax.shape import (  # noqa: F401
    broadcast as broadcast, broadcast_in_dim as broadcast_in_dim,
    broadcast_in_dim_p as broadcast_in_dim_p, broadcast_to_rank as broadcast_to_rank,
    broadcasted_iota as broadcasted_iota, collapse as collapse, expand_dims as expand_dims,
    full as full, full_like as full_like, iota as iota, iota_p as iota_p, reshape as reshape,
    reshape_p as reshape_p, rev as rev, rev_p as rev_p, squeeze as squeeze,
    squeeze_p as squeeze_p, transpose as transpose, transpose_p as transpose_p,
    zeros_like_array as zeros_like_array,
)
from xjax._src.transformations.lax_array_extras import (  # noqa: F401
    broadcast_like as broadcast_like, empty as empty, scatter_apply as scatter_apply,
)
from xjax._src.lax.shapes_and_dtypes import (  # noqa: F401
    broadcast_shapes as broadcast_shapes, dtype as dtype, shape_as_value as shape_as_value,
)
from xjax._src.lax.compare import (  # noqa: F401
    clamp as clamp, clamp_p as clamp_p, eq as eq, eq_p as eq_p, eq_to_p as eq_to_p, ge as ge,
    ge_p as ge_p, gt as gt, gt_p as gt_p, le as le, le_p as le_p, le_to_p as le_to_p, lt as lt,
    lt_p as lt_p, lt_to_p as lt_to_p, ne as ne, ne_p as ne_p, select as select,
    select_n as select_n, select_n_p as select_n_p,
)
from xjax._src.lax.concat_pad import (  # noqa: F401
    concatenate as concatenate, concatenate_p as concatenate_p, pad as pad, pad_p as pad_p,
)
from xjax._src.higher_order.cond import (  # noqa: F401
    cond as cond, cond_p as cond_p, switch as switch,
)
from xjax._src.lax.windowed import (  # noqa: F401
    conv_general_dilated_patches as conv_general_dilated_patches,
    conv_transpose as conv_transpose, conv_transpose_shape_tuple as conv_transpose_shape_tuple,
    reduce_window as reduce_window, reduce_window_max_p as reduce_window_max_p,
    reduce_window_min_p as reduce_window_min_p,
    reduce_window_shape_tuple as reduce_window_shape_tuple,
    reduce_window_sum_p as reduce_window_sum_p,
)
from xjax._src.lax.cumulative import (  # noqa: F401
    cumlogsumexp as cumlogsumexp, cumlogsumexp_p as cumlogsumexp_p, cummax as cummax,
    cummax_p as cummax_p, cummin as cummin, cummin_p as cummin_p, cumprod as cumprod,
    cumprod_p as cumprod_p, cumsum as cumsum, cumsum_p as cumsum_p,
)
from xjax._src.higher_order.linear_solve import (  # noqa: F401
    custom_linear_solve as custom_linear_solve, linear_solve_p as linear_solve_p,
)
from xjax._src.transformations.custom_root import (  # noqa: F401
    custom_root as custom_root,
)
from xjax._src.lax.slicing import (  # noqa: F401
    dynamic_index_in_dim as dynamic_index_in_dim, dynamic_slice as dynamic_slice,
    dynamic_slice_in_dim as dynamic_slice_in_dim, dynamic_slice_p as dynamic_slice_p,
    dynamic_update_index_in_dim as dynamic_update_index_in_dim,
    dynamic_update_slice as dynamic_update_slice,
    dynamic_update_slice_in_dim as dynamic_update_slice_in_dim,
    dynamic_update_slice_p as dynamic_update_slice_p, index_in_dim as index_in_dim,
    index_take as index_take, slice as slice, slice_in_dim as slice_in_dim, slice_p as slice_p,
)
from xjax._src.higher_order.loops import (  # noqa: F401
    fori_loop as fori_loop, while_loop as while_loop, while_p as while_p,
)
from xjax._src.transformations.lax_map import (  # noqa: F401
    map as map,
)
from xjax._src.lax.barrier import (  # noqa: F401
    optimization_barrier as optimization_barrier,
    optimization_barrier_p as optimization_barrier_p,
)
from xjax._src.higher_order.reduce import (  # noqa: F401
    reduce as reduce, reduce_p as reduce_p,
)
from xjax._src.higher_order.reduce_window import (  # noqa: F401
    reduce_window_p as reduce_window_p,
)
from xjax._src.lax.scaled_dot import (  # noqa: F401
    scaled_dot as scaled_dot,
)
from xjax._src.higher_order.scan import (  # noqa: F401
    scan as scan, scan_p as scan_p,
)
from xjax._src.lax.select_and_scatter import (  # noqa: F401
    select_and_gather_add_p as select_and_gather_add_p,
    select_and_scatter_add_p as select_and_scatter_add_p,
    select_and_scatter_p as select_and_scatter_p,
)
from xjax._src.lax.sorting import (  # noqa: F401
    sort as sort, sort_key_val as sort_key_val, sort_p as sort_p, top_k as top_k,
    top_k_p as top_k_p,
)
from xjax._src.lax.stacking import (  # noqa: F401
    split as split, split_p as split_p, stack as stack, stack_p as stack_p, tile as tile,
    tile_p as tile_p, unstack as unstack, unstack_p as unstack_p,
)
from xjax._src.lax.autodiff_ops import (  # noqa: F401
    stop_gradient as stop_gradient, stop_gradient_p as stop_gradient_p,
)
from xjax._src.lax.prng import (  # noqa: F401
    threefry2x32 as threefry2x32, threefry2x32_p as threefry2x32_p,
)
from xjax.lax import linalg as linalg  # noqa: F401
