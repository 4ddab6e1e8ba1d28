"""``xjax.scipy.special``: SciPy's special functions on xjax arrays, as in
``jax.scipy.special``.

Functions with an XLA primitive call ``xjax.lax`` (lgamma, digamma, igamma, betainc, the
scaled Bessel functions, ...); the others are composed from lax/jnp operations: rational
approximations, power series and continued fractions with fixed term counts (no data-dependent
loops, so everything jits and differentiates). Arguments are promoted to a floating dtype
like JAX's (ints become the default float; float16/bfloat16 stay). Where JAX attaches a
``custom_jvp`` for a stable derivative (xlogy, xlog1py, entr, logit, erfcx, dawsn, log_ndtr,
expi, expn, ...) so do we.

>>> import xjax.numpy as jnp
>>> from xjax.scipy import special
>>> special.gammaln(jnp.array([0.5, 5.]))
Array([0.5723649, 3.1780539], dtype=float32)
"""

from xjax._src.scipy.special import (  # noqa: F401
    Fraction as Fraction, annotations as annotations, bernoulli as bernoulli, beta as beta,
    betainc as betainc, betaln as betaln, boxcox as boxcox, boxcox1p as boxcox1p, comb as comb,
    digamma as digamma, entr as entr, erf as erf, erfc as erfc, erfcx as erfcx,
    erfinv as erfinv, expit as expit, factorial as factorial, gamma as gamma,
    gammainc as gammainc, gammaincc as gammaincc, gammaln as gammaln, gammasgn as gammasgn,
    i0 as i0, i0e as i0e, i1 as i1, i1e as i1e, kl_div as kl_div, log_softmax as log_softmax,
    loggamma as loggamma, logit as logit, logsumexp as logsumexp, multigammaln as multigammaln,
    poch as poch, polygamma as polygamma, rel_entr as rel_entr, softmax as softmax,
    wofz as wofz, xlog1py as xlog1py, xlogy as xlogy, zeta as zeta,
)
from xjax._src.scipy._special_series import (  # noqa: F401
    bessel_jn as bessel_jn, exp1 as exp1, expi as expi, expn as expn, fresnel as fresnel,
    hyp1f1 as hyp1f1, sici as sici, spence as spence,
)
from xjax._src.transformations.custom_derivatives import (  # noqa: F401
    custom_jvp as custom_jvp,
)
from xjax._src.scipy._special_normal import (  # noqa: F401
    dawsn as dawsn, log_ndtr as log_ndtr, ndtr as ndtr, ndtri as ndtri, owens_t as owens_t,
)
from xjax._src.scipy._special_faddeeva import (  # noqa: F401
    faddeeva as faddeeva,
)
from xjax._src.scipy._special_hyp import (  # noqa: F401
    hyp2f1 as hyp2f1,
)
from xjax._src.numpy._promotion import (  # noqa: F401
    promote_args_inexact as promote_args_inexact,
)
from xjax._src.scipy._special_sph import (  # noqa: F401
    sph_harm_y as sph_harm_y,
)
import xjax.numpy as jnp  # noqa: F401
from xjax import lax as lax  # noqa: F401
