"""``xjax.lax``: the strict lower layer. No type promotion, explicit shapes, one primitive
per operation (DESIGN.md §4)."""

from xjax._src.lax.elementwise import *  # noqa: F401,F403
from xjax._src.lax.transcendental import *  # noqa: F401,F403
from xjax._src.lax.compare import *  # noqa: F401,F403
from xjax._src.lax.bitwise import *  # noqa: F401,F403
from xjax._src.lax.convert import *  # noqa: F401,F403
from xjax._src.lax.special import *  # noqa: F401,F403
from xjax._src.lax.convolution import *  # noqa: F401,F403
from xjax._src.lax.shape import *  # noqa: F401,F403
from xjax._src.lax.concat_pad import *  # noqa: F401,F403
from xjax._src.lax.slicing import *  # noqa: F401,F403
from xjax._src.lax.reduce import *  # noqa: F401,F403
from xjax._src.lax.cumulative import *  # noqa: F401,F403
from xjax._src.lax.dot import *  # noqa: F401,F403
from xjax._src.lax.autodiff_ops import *  # noqa: F401,F403
from xjax._src.lax.stacking import *  # noqa: F401,F403
from xjax._src.lax.parallel import *  # noqa: F401,F403
from xjax._src.lax.parallel_permute import *  # noqa: F401,F403
from xjax._src.lax.prng import *  # noqa: F401,F403
from xjax._src.lax.fft import *  # noqa: F401,F403
from xjax._src.lax.sorting import *  # noqa: F401,F403
from xjax._src.lax.barrier import *  # noqa: F401,F403
from xjax._src.lax.shapes_and_dtypes import *  # noqa: F401,F403
from xjax._src.lax.placement import *  # noqa: F401,F403
from xjax._src.lax.windowed import *  # noqa: F401,F403
from xjax._src.lax.select_and_scatter import *  # noqa: F401,F403
from xjax._src.lax.rng import *  # noqa: F401,F403
from xjax._src.lax.conv_helpers import *  # noqa: F401,F403
from xjax._src.lax.dot_algorithms import *  # noqa: F401,F403
from xjax._src.lax.scaled_dot import *  # noqa: F401,F403
from xjax._src.lax.tokens import *  # noqa: F401,F403
