"""``xjax.lax``: the strict lower layer. No type promotion, explicit shapes, one primitive
per operation (DESIGN.md §4)."""

from xjax.lax.elementwise import *  # noqa: F401,F403
from xjax.lax.convolution import *  # noqa: F401,F403
