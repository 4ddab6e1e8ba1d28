"""Jaxpr objects as JAX shows them: Var repr and identity, DropVar, Literal."""

import re

import numpy as np

import xjax
import xjax.numpy as jnp
from xjax._src.core.jaxpr import DropVar


def test_var_repr_names_its_identity_and_full_dtype():
    closed = xjax.make_jaxpr(lambda x, i: (x * 2, i + 1))(jnp.ones((2, 3), jnp.bfloat16),
                                                          np.int32(1))
    x, i = closed.jaxpr.invars
    assert re.fullmatch(r"Var\(id=\d+\):bfloat16\[2,3\]", repr(x))
    assert re.fullmatch(r"Var\(id=\d+\):int32\[\]", repr(i))
    assert repr(x) != repr(closed.jaxpr.outvars[0])  # identity, not structure
    assert f"id={id(x)}" in repr(x)
    assert repr(DropVar(x.aval)) == "_"
    literal = closed.jaxpr.eqns[0].invars[1]
    assert repr(literal) == "Literal(2.0)"
    assert str(x) == repr(x)  # as JAX: names are given only when a whole jaxpr prints
