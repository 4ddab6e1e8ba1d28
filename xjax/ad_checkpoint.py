"""Rematerialisation helpers (``jax.ad_checkpoint``): placeholder, being built."""

from xjax.core.stubs import not_implemented
from xjax.custom_derivatives import checkpoint, checkpoint_policies, remat  # noqa: F401

checkpoint_name = not_implemented("checkpoint_name", "xjax.ad_checkpoint.checkpoint_name is "
                                  "not implemented yet")
print_saved_residuals = not_implemented("print_saved_residuals", "xjax.ad_checkpoint."
                                        "print_saved_residuals is not implemented yet")
