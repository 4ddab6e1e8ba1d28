"""``xjax.image``: image resizing (being built)."""
