"""``name``: the identity primitive behind ``jax.ad_checkpoint.checkpoint_name``.

It marks a value with a name that ``checkpoint`` policies (``save_only_these_names``, ...)
can see when deciding what to save for the backward pass; everywhere else it is the
identity. Rules as JAX 0.10.2 defines them: the jvp names the primal but not the tangent
(so a tangent jaxpr never holds a ``name``), the lowering is the operand itself and the
batch rule keeps the batch axis where it is. JAX gives it no transpose rule (it never
meets one); xjax's is the identity on the cotangent, so a ``name`` staged into a linear
jaxpr by hand still transposes.
"""

from __future__ import annotations

from xjax._src.core.primitive import Primitive
from xjax._src.lax.ad_rules import transpose_by_parts

__all__ = ["name_p"]


def _name_abstract_eval(x, *, name):
    return x


def _name_impl(x, *, name):
    return x


def _name_lower(ctx, x, *, name):
    return x


def _name_jvp(primals, tangents, *, name):
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t  # the tangent is not named, as in JAX


def _name_batch(args, dims, *, name):
    (x,), (dim,) = args, dims
    return name_p.bind(x, name=name), dim


name_p = Primitive(
    "name", abstract_eval=_name_abstract_eval, impl=_name_impl, lower=_name_lower,
    jvp=_name_jvp, transpose=transpose_by_parts(lambda ct, x, *, name: ct),
    batch=_name_batch)
