"""``xjax.nn``: activation functions, softmax and friends, one-hot encoding, attention and
parameter initializers, as in ``jax.nn``.

>>> import xjax, xjax.numpy as jnp
>>> xjax.nn.relu(jnp.array([-1., 2.]))
Array([0., 2.], dtype=float32)
"""

from xjax._src.core.stubs import not_implemented
from xjax._src.nn import initializers  # noqa: F401
from xjax._src.nn.attention import dot_product_attention  # noqa: F401
from xjax._src.nn.functions import (celu, elu, gelu, glu, hard_sigmoid, hard_silu,  # noqa: F401
                               hard_swish, hard_tanh, identity, leaky_relu, log1mexp,
                               log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot,
                               relu, relu6, selu, sigmoid, silu, soft_sign, softmax, softplus,
                               sparse_plus, sparse_sigmoid, squareplus, standardize, swish,
                               tanh)


def _scaled_unsupported(name):
    return not_implemented(name, f"xjax.nn.{name} (block-scaled low-precision matmul for "
                                 "cuDNN) is not supported")


scaled_matmul = _scaled_unsupported("scaled_matmul")
scaled_dot_general = _scaled_unsupported("scaled_dot_general")
get_scaled_dot_general_config = _scaled_unsupported("get_scaled_dot_general_config")
