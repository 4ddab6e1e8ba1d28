"""``xjax.example_libraries``: the small example libraries JAX ships, ``optimizers`` and
``stax``, written for xjax. Import the submodules themselves, as with JAX::

    from xjax.example_libraries import optimizers, stax
"""

