"""``lax.custom_linear_solve`` and its primitive ``linear_solve_p`` (being built).

``PUBLIC`` maps the names this module adds to ``xjax.lax``."""

PUBLIC: dict = {}
