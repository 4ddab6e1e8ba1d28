"""Print the primitive x rule matrix: ``python -m xjax.testing.rule_matrix``.

A cell is ``yes`` when the rule exists, or the reason it is deliberately absent.
"""

import xjax  # noqa: F401  (registers every primitive)
from xjax._src.core.primitive import Absent, registry

RULES = ("abstract_eval", "impl", "lower", "jvp", "transpose", "batch")


def matrix_rows():
    """(primitive name, {rule: "yes" or reason}) for every registered primitive."""
    rows = []
    for name in sorted(registry):
        primitive = registry[name]
        cells = {}
        for rule in RULES:
            value = getattr(primitive, rule)
            cells[rule] = value.reason if isinstance(value, Absent) else "yes"
        rows.append((name, cells))
    return rows


def main():
    rows = matrix_rows()
    width = max(len(name) for name, _ in rows)
    print(f"{'primitive':{width}s}  " + "  ".join(f"{r:13s}" for r in RULES))
    reasons = {}
    for name, cells in rows:
        marks = []
        for rule in RULES:
            cell = cells[rule]
            if cell == "yes":
                marks.append(f"{'yes':13s}")
            else:
                key = reasons.setdefault(cell, f"[{len(reasons) + 1}]")
                marks.append(f"{'no ' + key:13s}")
        print(f"{name:{width}s}  " + "  ".join(marks))
    print()
    for reason, key in reasons.items():
        print(f"{key} {reason}")
    print(f"\n{len(rows)} primitives")


if __name__ == "__main__":
    main()
