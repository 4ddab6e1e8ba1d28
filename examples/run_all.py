"""Run every example (the seeds' programs) in turn: ``python examples/run_all.py``."""

import pathlib
import runpy
import sys

here = pathlib.Path(__file__).resolve().parent
for path in sorted(here.glob("seed*.py")):
    print(f"===== {path.name} =====", flush=True)
    runpy.run_path(str(path), run_name="__main__")
print("all examples ran", file=sys.stderr)
