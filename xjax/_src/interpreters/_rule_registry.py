"""Rule tables keyed by primitive, as JAX's ``ad.primitive_jvps``,
``ad.primitive_transposes`` and ``batching.primitive_batchers``.

xjax keeps every rule on its primitive (DESIGN.md §4). These tables are a view of one rule
slot: setting ``table[p] = rule`` installs ``rule`` on ``p`` (JAX's jvp, transpose and
batching conventions are xjax's), and reading ``table[p]`` gives the rule ``p`` has, whether
it came through the table or with the primitive.
"""

from __future__ import annotations

from xjax._src.core.primitive import Absent, Primitive


def has_rule(rule) -> bool:
    """Whether ``rule`` is a real rule: not ``Absent`` nor a placeholder of
    :class:`xjax.extend.core.Primitive`."""
    return callable(rule) and not isinstance(rule, Absent) and \
        getattr(rule, "missing", False) is not True


class RuleTable(dict):
    """A dict from primitives to their ``slot`` rule that writes through to the primitive."""

    def __init__(self, slot: str, table_name: str, adapt=None):
        super().__init__()
        self.slot = slot
        self.table_name = table_name
        self.adapt = adapt  # rule -> the rule installed on the primitive (calling convention)

    def __setitem__(self, primitive, rule):
        if not isinstance(primitive, Primitive):
            raise TypeError(f"{self.table_name} keys must be primitives, got {primitive!r}")
        if not callable(rule):
            raise TypeError(f"{self.table_name}[{primitive.name!r}] must be callable, "
                            f"got {rule!r}")
        super().__setitem__(primitive, rule)
        setattr(primitive, self.slot, rule if self.adapt is None else self.adapt(rule))

    def _own_rule(self, primitive):
        rule = getattr(primitive, self.slot, None) if isinstance(primitive, Primitive) else None
        return rule if has_rule(rule) else None

    def __missing__(self, primitive):
        rule = self._own_rule(primitive)
        if rule is None:
            raise KeyError(primitive)
        return rule

    def __contains__(self, primitive) -> bool:
        return dict.__contains__(self, primitive) or self._own_rule(primitive) is not None

    def get(self, primitive, default=None):
        try:
            return self[primitive]
        except KeyError:
            return default

    def update(self, *args, **kwargs):
        for primitive, rule in dict(*args, **kwargs).items():
            self[primitive] = rule

    def setdefault(self, primitive, rule=None):
        if primitive not in self:
            self[primitive] = rule
        return self[primitive]


def with_tuple_operands(rule):
    """``rule`` called with its two operand sequences as tuples, as JAX calls the rules of
    ``ad.primitive_jvps`` (libraries build pytrees from them: Equinox vmaps over them)."""
    def tupled(primals, tangents, **params):
        return rule(tuple(primals), tuple(tangents), **params)
    tupled.__wrapped__ = rule
    return tupled
