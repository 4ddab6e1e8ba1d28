"""Placeholder: filled by work in progress."""

__all__: list = []
