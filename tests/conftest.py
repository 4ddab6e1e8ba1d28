import xjax

# Every jaxpr built during the tests is type-checked, and impls must return their aval's dtype.
xjax.config.update("xjax_check_jaxprs", True)
