"""``xjax.lax``: the strict lower layer. No type promotion, explicit shapes, one primitive
per operation (DESIGN.md §4)."""

from xjax.lax.elementwise import *  # noqa: F401,F403
from xjax.lax.transcendental import *  # noqa: F401,F403
from xjax.lax.compare import *  # noqa: F401,F403
from xjax.lax.bitwise import *  # noqa: F401,F403
from xjax.lax.convert import *  # noqa: F401,F403
from xjax.lax.special import *  # noqa: F401,F403
from xjax.lax.convolution import *  # noqa: F401,F403
from xjax.lax.shape import *  # noqa: F401,F403
from xjax.lax.slicing import *  # noqa: F401,F403
from xjax.lax.reduce import *  # noqa: F401,F403
from xjax.lax.cumulative import *  # noqa: F401,F403
from xjax.lax.dot import *  # noqa: F401,F403
from xjax.lax.autodiff_ops import *  # noqa: F401,F403
from xjax.lax.stacking import *  # noqa: F401,F403
from xjax.lax.parallel import *  # noqa: F401,F403
from xjax.lax.prng import *  # noqa: F401,F403
from xjax.lax.fft import *  # noqa: F401,F403
from xjax.lax.sorting import *  # noqa: F401,F403
from xjax.lax.barrier import *  # noqa: F401,F403
from xjax.lax.approx_topk import *  # noqa: F401,F403
from xjax.lax.api_helpers import *  # noqa: F401,F403
from xjax.lax.windowed import *  # noqa: F401,F403
from xjax.lax.rng import *  # noqa: F401,F403
from xjax.lax.conv_helpers import *  # noqa: F401,F403
from xjax.lax.dot_extras import *  # noqa: F401,F403
from xjax.lax.tokens import *  # noqa: F401,F403
from xjax.lax.array_extras import *  # noqa: F401,F403
from xjax.lax import linalg  # noqa: F401,E402
