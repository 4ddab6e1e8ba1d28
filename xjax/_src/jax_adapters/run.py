"""``python -m xjax.run``: run a JAX program on xjax, unchanged.

``python -m xjax.run train.py --steps 10`` runs ``train.py`` as ``python train.py --steps 10``
would, and ``python -m xjax.run -m pytest tests/`` runs a module as ``python -m`` would (and ``-c CODE``
as ``python -c``), with
xjax's import hook installed first, so that every ``import jax`` in the program and in the
libraries it uses gives xjax.
"""

from __future__ import annotations

import os
import runpy
import sys

from xjax._src.jax_adapters import import_hook

USAGE = "usage: python -m xjax.run (SCRIPT | -m MODULE | -c CODE) [ARGS ...]"


def main(argv: list[str] | None = None) -> None:
    """Run a script or module (``argv`` as ``python`` takes it) with ``jax`` resolving to xjax.

    Raises
    ------
    SystemExit
        With status 2 and the usage line when no script or module is named.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help") or argv in (["-m"], ["-c"]):
        print(USAGE, file=sys.stderr)
        raise SystemExit(0 if argv and argv[0] in ("-h", "--help") else 2)
    import_hook.install()
    if argv[0] == "-c":
        sys.argv[:] = ["-c"] + argv[2:]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    elif argv[0] == "-m":
        sys.argv[:] = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv[:] = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")

