"""``python -m xjax.run (SCRIPT | -m MODULE) [ARGS ...]``: run a JAX program on xjax unchanged
(``import jax`` in it, and in the libraries it uses, gives xjax)."""

from xjax._src.jax_adapters.run import main as main

if __name__ == "__main__":
    main()
