"""xjax._src.transformations.jit"""
