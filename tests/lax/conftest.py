"""The rule check's per-primitive records (``op_records/``, one module per family) and their
table (``op_table.py``) live here, beside the tests that walk them; they import each other
as top-level modules."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
