"""xjax._src.transformations"""
