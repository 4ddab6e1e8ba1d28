"""Placeholder: filled by work in progress; exports nothing yet."""

__all__: list = []
