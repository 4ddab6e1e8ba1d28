"""Stax: a small neural-network specification library (mirrors
``jax.example_libraries.stax``).

Like JAX's module this is a teaching example; full libraries are Flax and Haiku. A layer is
an ``(init_fun, apply_fun)`` pair:

- ``init_fun(rng, input_shape) -> (output_shape, params)`` draws the layer's parameters.
- ``apply_fun(params, inputs, **kwargs) -> outputs`` runs it; ``rng=key`` is passed down
  to layers that need randomness (:func:`Dropout`).

Layer constructors are CamelCase (``Dense``, ``Conv``, ``Relu``); combinators
(:func:`serial`, :func:`parallel`) build layers from layers.

Examples
--------
>>> import xjax as jax
>>> import xjax.numpy as jnp
>>> from xjax.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))
>>> out_shape, params = init_fun(jax.random.key(0), (-1, 3))
>>> out_shape
(-1, 2)
>>> apply_fun(params, jnp.ones((5, 3))).shape
(5, 2)
"""

import functools
import math

import xjax._src.numpy as jnp
from xjax._src import lax, random
from xjax._src.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                          softplus, standardize)
from xjax._src.nn.initializers import glorot_normal, normal, ones, zeros

# Older names kept by JAX's module.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A dense (fully connected) layer: ``inputs @ W + b``, ``W`` of shape
    ``(input_shape[-1], out_dim)``."""
    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        w_key, b_key = random.split(rng)
        return output_shape, (W_init(w_key, (input_shape[-1], out_dim)),
                              b_init(b_key, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    # The kernel's dimensions in rhs_spec order: 'O' is out_chan, 'I' the input's channel
    # count, and the spatial letters take filter_shape in turn.
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index('C')]
    return [out_chan if c == 'O' else in_chan if c == 'I' else next(spatial)
            for c in rhs_spec]


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                b_init, output_shape_of, conv):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index('I'), rhs_spec.index('O'))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers)
        bias_shape = [out_chan if c == 'C' else 1 for c in out_spec]
        w_key, b_key = random.split(rng)
        return output_shape, (W_init(w_key, kernel_shape), b_init(b_key, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W, strides) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding='VALID',
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer with explicit ``(lhs, rhs, out)`` dimension-number specs, e.g.
    ``('NHWC', 'HWIO', 'NHWC')``, plus a bias per output channel."""
    ones_ = (1,) * len(filter_shape)

    def conv(inputs, W, strides):
        return lax.conv_general_dilated(inputs, W, strides, padding, ones_, ones_,
                                        dimension_numbers=dimension_numbers)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_general_shape_tuple, conv)


Conv = functools.partial(GeneralConv, ('NHWC', 'HWIO', 'NHWC'))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding='VALID', W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (``lax.conv_transpose``) with explicit dimension-number
    specs, plus a bias per output channel."""
    def conv(inputs, W, strides):
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_transpose_shape_tuple, conv)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ('NHC', 'HIO', 'NHC'))
ConvTranspose = functools.partial(GeneralConvTranspose, ('NHWC', 'HWIO', 'NHWC'))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization over ``axis``: standardize, then scale by ``gamma`` and shift by
    ``beta`` (parameters over the remaining axes; ``()`` when disabled). No running
    statistics are kept."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, shape) if center else ()
        gamma = gamma_init(gamma_key, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # Index that re-inserts the normalized axes as size-1 dimensions.
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``."""
    init_fun = lambda rng, input_shape: (input_shape, ())
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _with_unit_axes(window, axes):
    # Insert size-1 entries at the (sorted) batch and channel axes.
    window = tuple(window)
    for i in sorted(axes):
        window = window[:i] + (1,) + window[i:]
    return window


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding='VALID', spec=None):
        """A pooling layer over the spatial axes; ``spec`` (e.g. ``'NHWC'``, the default
        layout) names where the batch and channel axes are."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index('N'), spec.index('C')
        full_window = _with_unit_axes(window_shape, non_spatial_axes)
        full_strides = _with_unit_axes(strides, non_spatial_axes)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            unit = (1,) * len(full_window)
            out_shape = lax.reduce_window_shape_tuple(input_shape, full_window, full_strides,
                                                      pads, unit, unit)
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides,
                                    padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index('N'), spec.index('C')
        spatial_shape = tuple(d for i, d in enumerate(inputs.shape)
                              if i not in non_spatial_axes)
        # How many input elements (padding excluded) each output window covered.
        window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.,
                                         lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def Flatten():
    """A layer flattening all but the leading (batch) dimension."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = Flatten()


def Identity():
    """A layer returning its inputs."""
    init_fun = lambda rng, input_shape: (input_shape, ())
    apply_fun = lambda params, inputs, **kwargs: inputs
    return init_fun, apply_fun


Identity = Identity()


def FanOut(num):
    """A layer returning a list of ``num`` copies of its input."""
    init_fun = lambda rng, input_shape: ([input_shape] * num, ())
    apply_fun = lambda params, inputs, **kwargs: [inputs] * num
    return init_fun, apply_fun


def FanInSum():
    """A layer summing a sequence of inputs of one shape."""
    init_fun = lambda rng, input_shape: (input_shape[0], ())
    apply_fun = lambda params, inputs, **kwargs: sum(inputs)
    return init_fun, apply_fun


FanInSum = FanInSum()


def FanInConcat(axis=-1):
    """A layer concatenating a sequence of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        first = input_shape[0]
        return first[:ax] + (concat_size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode='train'):
    """Dropout. In ``mode='train'`` each input is kept with probability ``rate`` (note:
    ``rate`` is the keep rate, as in JAX's stax) and scaled by ``1 / rate``; otherwise the
    layer is the identity. ``apply_fun`` needs ``rng=key``.

    Raises
    ------
    ValueError
        When ``apply_fun`` is called without an ``rng`` key.
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get('rng', None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`).")
        if mode != 'train':
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# --------------------------------------------------------------------------------------------
# combinators


def serial(*layers):
    """Compose layers one after another.

    Parameters
    ----------
    *layers : (init_fun, apply_fun) pairs

    Returns
    -------
    (init_fun, apply_fun)
        The composed layer; its params are the list of the layers' params. The init key is
        split once per layer in turn; an ``rng`` given to ``apply_fun`` is split into one key
        per layer.
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for layer_init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = layer_init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop('rng', None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for layer_apply, layer_params, layer_rng in zip(apply_funs, params, rngs):
            inputs = layer_apply(layer_params, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layers side by side, the k-th to the k-th of a sequence of inputs (commonly
    between :func:`FanOut` and :func:`FanInSum` / :func:`FanInConcat`).

    Parameters
    ----------
    *layers : (init_fun, apply_fun) pairs

    Returns
    -------
    (init_fun, apply_fun)
        The combined layer, taking and returning sequences as long as ``layers``.
        ``init_fun`` returns an iterator over ``(output_shapes, params)``, as JAX's does.
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[layer_init(key, shape)
                     for layer_init, key, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop('rng', None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [layer_apply(p, x, rng=r, **kwargs)
                for layer_apply, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` once the input shape is known (at init
    from the given shape, at apply from ``inputs.shape``)."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
