"""The core layer: abstract values, arrays, jaxprs, traces, primitives, pytrees, dtypes and
configuration. It imports only the runtime. The public ``xjax.core`` (JAX's ``jax.core``
names) re-exports from here and from the interpreters."""
