"""Mutable array references (``jax.ref``): ``new_ref``, ``Ref`` reads and writes, ``freeze``.

A :class:`Ref` holds its current value: an Array eagerly, a tracer while being traced.
Reads index that value; writes replace it with a functional update (dynamic_update_slice
or scatter), so under ``jit`` a Ref program becomes an ordinary jaxpr (``make_jaxpr`` shows
the updates, not JAX's ``get``/``swap`` equations) and ``grad``/``vmap`` of functions that
use Refs internally need no rules of their own. Refs that cross into ``jit`` or
control-flow bodies are threaded through them (``xjax/interpreters/refs.py``).

Indexing follows JAX's Refs, which differ from array indexing: static integers and
``ds`` slices out of range raise ``ValueError``; traced integers and index arrays are
clamped (after negative indices wrap); a written value must have exactly the indexed
shape and the Ref's dtype (no broadcasting, no promotion).
"""

from xjax._src.core.ref_avals import (  # noqa: F401
    AbstractRef as AbstractRef,
)
from xjax._src.transformations.ref import (  # noqa: F401
    Ref as Ref, addupdate as addupdate, ds as ds, empty_ref as empty_ref, free_ref as free_ref,
    freeze as freeze, get as get, new_ref as new_ref, set as set, swap as swap,
)
from xjax._src.transformations.ref import __all__ as __all__  # noqa: F401
