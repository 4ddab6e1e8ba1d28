"""``xjax.scipy.spatial``: as in JAX, only the ``transform`` submodule exists, and it is not
loaded with the package (``import xjax.scipy.spatial.transform``)."""
