"""``xjax.nn``: activation functions, softmax and friends, one-hot encoding, attention and
parameter initializers, as in ``jax.nn``.

>>> import xjax, xjax.numpy as jnp
>>> xjax.nn.relu(jnp.array([-1., 2.]))
Array([0., 2.], dtype=float32)
"""

from xjax._src.nn.functions import (  # noqa: F401
    celu as celu, elu as elu, gelu as gelu, glu as glu, hard_sigmoid as hard_sigmoid,
    hard_silu as hard_silu, hard_swish as hard_swish, hard_tanh as hard_tanh,
    identity as identity, leaky_relu as leaky_relu, log1mexp as log1mexp,
    log_sigmoid as log_sigmoid, log_softmax as log_softmax, logmeanexp as logmeanexp,
    logsumexp as logsumexp, mish as mish, one_hot as one_hot, relu as relu, relu6 as relu6,
    selu as selu, sigmoid as sigmoid, silu as silu, soft_sign as soft_sign, softmax as softmax,
    softplus as softplus, sparse_plus as sparse_plus, sparse_sigmoid as sparse_sigmoid,
    squareplus as squareplus, standardize as standardize, swish as swish, tanh as tanh,
)
from xjax._src.nn.attention import (  # noqa: F401
    dot_product_attention as dot_product_attention,
)
from xjax._src.nn import (  # noqa: F401
    get_scaled_dot_general_config as get_scaled_dot_general_config,
    scaled_dot_general as scaled_dot_general, scaled_matmul as scaled_matmul,
)
from xjax._src.core.stubs import (  # noqa: F401
    not_implemented as not_implemented,
)
from xjax.nn import initializers as initializers  # noqa: F401
