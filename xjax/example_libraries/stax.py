"""Stax: a small neural-network specification library (mirrors ``jax.example_libraries.stax``).

The implementation and its full description: :mod:`xjax._src.example_libraries.stax`."""

from xjax._src.example_libraries.stax import (  # noqa: F401
    AvgPool as AvgPool, BatchNorm as BatchNorm, Conv as Conv,
    Conv1DTranspose as Conv1DTranspose, ConvTranspose as ConvTranspose, Dense as Dense,
    Dropout as Dropout, Elu as Elu, Exp as Exp, FanInConcat as FanInConcat,
    FanInSum as FanInSum, FanOut as FanOut, Flatten as Flatten, Gelu as Gelu,
    GeneralConv as GeneralConv, GeneralConvTranspose as GeneralConvTranspose,
    Identity as Identity, LeakyRelu as LeakyRelu, LogSoftmax as LogSoftmax, MaxPool as MaxPool,
    Relu as Relu, Selu as Selu, Sigmoid as Sigmoid, Softmax as Softmax, Softplus as Softplus,
    SumPool as SumPool, Tanh as Tanh, elementwise as elementwise, glorot as glorot,
    logsoftmax as logsoftmax, parallel as parallel, randn as randn, serial as serial,
    shape_dependent as shape_dependent,
)
from xjax._src.nn.functions import (  # noqa: F401
    elu as elu, gelu as gelu, leaky_relu as leaky_relu, log_softmax as log_softmax,
    relu as relu, selu as selu, sigmoid as sigmoid, softmax as softmax, softplus as softplus,
    standardize as standardize,
)
from xjax._src.nn.initializers import (  # noqa: F401
    glorot_normal as glorot_normal, normal as normal, ones as ones, zeros as zeros,
)
import xjax.numpy as jnp  # noqa: F401
from xjax import lax as lax  # noqa: F401
from xjax import random as random  # noqa: F401
import functools as functools  # noqa: F401  (a name JAX's module shows too)
import math as math  # noqa: F401  (a name JAX's module shows too)
