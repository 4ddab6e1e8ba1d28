"""``xjax.extend.core.primitives``: xjax's lax primitives by their JAX names (``add_p``,
``sin_p``, ``dot_general_p``, ...), found in xjax's modules when first asked for.
"""

from xjax._src.lax.elementwise import (  # noqa: F401
    abs_p as abs_p, add_any_p as add_any_p, add_p as add_p, ceil_p as ceil_p,
    complex_p as complex_p, conj_p as conj_p, copy_p as copy_p, div_p as div_p,
    floor_p as floor_p, imag_p as imag_p, integer_pow_p as integer_pow_p,
    is_finite_p as is_finite_p, max_p as max_p, min_p as min_p, mul_p as mul_p, neg_p as neg_p,
    nextafter_p as nextafter_p, pow_p as pow_p, real_p as real_p, rem_p as rem_p,
    round_p as round_p, sign_p as sign_p, square_p as square_p, sub_p as sub_p,
)
from xjax._src.lax.transcendental import (  # noqa: F401
    acos_p as acos_p, acosh_p as acosh_p, asin_p as asin_p, asinh_p as asinh_p,
    atan2_p as atan2_p, atan_p as atan_p, atanh_p as atanh_p, cbrt_p as cbrt_p, cos_p as cos_p,
    cosh_p as cosh_p, exp2_p as exp2_p, exp_p as exp_p, expm1_p as expm1_p, log1p_p as log1p_p,
    log_p as log_p, logistic_p as logistic_p, rsqrt_p as rsqrt_p, sin_p as sin_p,
    sinh_p as sinh_p, sqrt_p as sqrt_p, tan_p as tan_p, tanh_p as tanh_p,
)
from xjax._src.lax.tokens import (  # noqa: F401
    after_all_p as after_all_p, composite_p as composite_p, create_token_p as create_token_p,
    dce_sink_p as dce_sink_p, stage_p as stage_p,
)
from xjax._src.lax.parallel import (  # noqa: F401
    all_gather_p as all_gather_p, axis_index_p as axis_index_p, pmax_p as pmax_p,
    pmin_p as pmin_p, psum_p as psum_p,
)
from xjax._src.lax.parallel_permute import (  # noqa: F401
    all_to_all_p as all_to_all_p, pbroadcast_p as pbroadcast_p, ppermute_p as ppermute_p,
    ragged_all_to_all_p as ragged_all_to_all_p, reduce_scatter_p as reduce_scatter_p,
)
from xjax._src.lax.bitwise import (  # noqa: F401
    and_p as and_p, clz_p as clz_p, mulhi_p as mulhi_p, not_p as not_p, or_p as or_p,
    population_count_p as population_count_p, shift_left_p as shift_left_p,
    shift_right_arithmetic_p as shift_right_arithmetic_p,
    shift_right_logical_p as shift_right_logical_p, xor_p as xor_p,
)
from xjax._src.higher_order.approx_topk import (  # noqa: F401
    approx_top_k_p as approx_top_k_p,
)
from xjax._src.lax.reduce import (  # noqa: F401
    argmax_p as argmax_p, argmin_p as argmin_p, reduce_and_p as reduce_and_p,
    reduce_max_p as reduce_max_p, reduce_min_p as reduce_min_p, reduce_or_p as reduce_or_p,
    reduce_prod_p as reduce_prod_p, reduce_sum_p as reduce_sum_p, reduce_xor_p as reduce_xor_p,
)
from xjax._src.lax.special import (  # noqa: F401
    bessel_i0e_p as bessel_i0e_p, bessel_i1e_p as bessel_i1e_p, digamma_p as digamma_p,
    erf_inv_p as erf_inv_p, erf_p as erf_p, erfc_p as erfc_p,
    igamma_grad_a_p as igamma_grad_a_p, igamma_p as igamma_p, igammac_p as igammac_p,
    lgamma_p as lgamma_p, polygamma_p as polygamma_p,
    regularized_incomplete_beta_p as regularized_incomplete_beta_p, zeta_p as zeta_p,
)
from xjax._src.lax.convert import (  # noqa: F401
    bitcast_convert_type_p as bitcast_convert_type_p,
    convert_element_type_p as convert_element_type_p, reduce_precision_p as reduce_precision_p,
)
from xjax._src.lax.shape import (  # noqa: F401
    broadcast_in_dim_p as broadcast_in_dim_p, iota_p as iota_p, reshape_p as reshape_p,
    rev_p as rev_p, squeeze_p as squeeze_p, transpose_p as transpose_p,
)
from xjax._src.experimental.checkify import (  # noqa: F401
    check_p as check_p,
)
from xjax._src.higher_order.custom_derivatives import (  # noqa: F401
    checkpoint_p as checkpoint_p, custom_jvp_call_p as custom_jvp_call_p,
    custom_lin_p as custom_lin_p, custom_vjp_call_p as custom_vjp_call_p,
)
from xjax._src.higher_order.linalg.triangular import (  # noqa: F401
    cholesky_p as cholesky_p, triangular_solve_p as triangular_solve_p,
)
from xjax._src.lax.compare import (  # noqa: F401
    clamp_p as clamp_p, eq_p as eq_p, eq_to_p as eq_to_p, ge_p as ge_p, gt_p as gt_p,
    le_p as le_p, le_to_p as le_to_p, lt_p as lt_p, lt_to_p as lt_to_p, ne_p as ne_p,
    select_n_p as select_n_p,
)
from xjax._src.lax.concat_pad import (  # noqa: F401
    concatenate_p as concatenate_p, pad_p as pad_p,
)
from xjax._src.higher_order.cond import (  # noqa: F401
    cond_p as cond_p,
)
from xjax._src.lax.convolution import (  # noqa: F401
    conv_general_dilated_p as conv_general_dilated_p,
)
from xjax._src.lax.cumulative import (  # noqa: F401
    cumlogsumexp_p as cumlogsumexp_p, cummax_p as cummax_p, cummin_p as cummin_p,
    cumprod_p as cumprod_p, cumsum_p as cumsum_p,
)
from xjax._src.transformations.custom_batching import (  # noqa: F401
    custom_vmap_call_p as custom_vmap_call_p,
)
from xjax._src.higher_order.callbacks import (  # noqa: F401
    debug_callback_p as debug_callback_p, io_callback_p as io_callback_p,
    pure_callback_p as pure_callback_p,
)
from xjax._src.lax.placement import (  # noqa: F401
    device_put_p as device_put_p, sharding_constraint_p as sharding_constraint_p,
)
from xjax._src.lax.dot import (  # noqa: F401
    dot_general_p as dot_general_p,
)
from xjax._src.lax.slicing import (  # noqa: F401
    dynamic_slice_p as dynamic_slice_p, dynamic_update_slice_p as dynamic_update_slice_p,
    slice_p as slice_p,
)
from xjax._src.higher_order.linalg.eig import (  # noqa: F401
    eig_p as eig_p,
)
from xjax._src.higher_order.linalg.eigh import (  # noqa: F401
    eigh_p as eigh_p,
)
from xjax._src.api.ffi import (  # noqa: F401
    ffi_call_p as ffi_call_p,
)
from xjax._src.lax.fft import (  # noqa: F401
    fft_p as fft_p,
)
from xjax._src.lax.gather_scatter import (  # noqa: F401
    gather_p as gather_p, scatter_add_p as scatter_add_p, scatter_max_p as scatter_max_p,
    scatter_min_p as scatter_min_p, scatter_mul_p as scatter_mul_p, scatter_p as scatter_p,
    scatter_sub_p as scatter_sub_p,
)
from xjax._src.higher_order.linear_solve import (  # noqa: F401
    linear_solve_p as linear_solve_p,
)
from xjax._src.higher_order.linalg.lu import (  # noqa: F401
    lu_p as lu_p, lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
)
from xjax._src.lax.checkpoint_name import (  # noqa: F401
    name_p as name_p,
)
from xjax._src.lax.barrier import (  # noqa: F401
    optimization_barrier_p as optimization_barrier_p,
)
from xjax._src.higher_order.jit_call import (  # noqa: F401
    pjit_p as pjit_p,
    pjit_p as jit_p,  # JAX 0.10's name for the same primitive (printed "jit")
)
from xjax._src.higher_order.linalg.qr import (  # noqa: F401
    qr_p as qr_p,
)
from xjax._src.higher_order.ragged_dot import (  # noqa: F401
    ragged_dot_general_p as ragged_dot_general_p,
)
from xjax._src.random.random_gamma import (  # noqa: F401
    random_gamma_p as random_gamma_p,
)
from xjax._src.higher_order.reduce import (  # noqa: F401
    reduce_p as reduce_p,
)
from xjax._src.lax.windowed import (  # noqa: F401
    reduce_window_max_p as reduce_window_max_p, reduce_window_min_p as reduce_window_min_p,
    reduce_window_sum_p as reduce_window_sum_p,
)
from xjax._src.higher_order.reduce_window import (  # noqa: F401
    reduce_window_p as reduce_window_p,
)
from xjax._src.lax.rng import (  # noqa: F401
    rng_bit_generator_p as rng_bit_generator_p, rng_uniform_p as rng_uniform_p,
)
from xjax._src.higher_order.scan import (  # noqa: F401
    scan_p as scan_p,
)
from xjax._src.higher_order.linalg.schur import (  # noqa: F401
    schur_p as schur_p,
)
from xjax._src.lax.select_and_scatter import (  # noqa: F401
    select_and_gather_add_p as select_and_gather_add_p,
    select_and_scatter_add_p as select_and_scatter_add_p,
    select_and_scatter_p as select_and_scatter_p,
)
from xjax._src.lax.sorting import (  # noqa: F401
    sort_p as sort_p, top_k_p as top_k_p,
)
from xjax._src.lax.stacking import (  # noqa: F401
    split_p as split_p, stack_p as stack_p, tile_p as tile_p, unstack_p as unstack_p,
)
from xjax._src.lax.autodiff_ops import (  # noqa: F401
    stop_gradient_p as stop_gradient_p,
)
from xjax._src.higher_order.linalg.svd import (  # noqa: F401
    svd_p as svd_p,
)
from xjax._src.lax.prng import (  # noqa: F401
    threefry2x32_p as threefry2x32_p,
)
from xjax._src.higher_order.loops import (  # noqa: F401
    while_p as while_p,
)
from xjax._src.jax_adapters.extend.core.primitives import __getattr__ as __getattr__  # noqa: F401
from xjax._src.jax_adapters.extend.core.primitives import __dir__ as __dir__  # noqa: F401
