"""xjax._src.higher_order.linalg"""
