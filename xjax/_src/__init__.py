"""xjax's implementation. Nothing here is public: the modules under ``xjax/`` re-export the
public names (``xjax.numpy``, ``xjax.lax``, ...). The layers and what each may import are in
``docs/architecture.md``."""

import warnings as _warnings

# NumPy kernels warn on invalid values (0/0, log(-1)); XLA and JAX compute them silently.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"xjax\.")
