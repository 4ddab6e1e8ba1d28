"""A batch of the whole-program differential fuzzer (tools/fuzz_programs.py) against JAX."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "tools" / "fuzz_programs.py"
_spec = importlib.util.spec_from_file_location("fuzz_programs", _PATH)
fuzz_programs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("fuzz_programs", fuzz_programs)  # dataclasses look their module up
_spec.loader.exec_module(fuzz_programs)


def test_programs_are_reproducible_and_run_on_xjax():
    first = [fuzz_programs.random_program(np.random.default_rng(5)) for _ in range(3)]
    again = [fuzz_programs.random_program(np.random.default_rng(5)) for _ in range(3)]
    assert [p.describe() for p in first] == [p.describe() for p in again]
    backend = fuzz_programs.Backend("xjax")
    rng = np.random.default_rng(0)
    for _ in range(20):
        program = fuzz_programs.random_program(rng)
        program.transform = "jit"
        inputs = [np.full(s, 0.25, np.float32) for s in program.shapes]
        try:
            eager = fuzz_programs.run(dataclass_copy(program, "eager"), backend, inputs)
        except (TypeError, ValueError):  # an invalid program (shapes): jit refuses it too
            # (the class may differ: eagerly, NumPy inputs meet NumPy's own operators)
            with pytest.raises((TypeError, ValueError)):
                fuzz_programs.run(program, backend, inputs)
            continue
        compiled = fuzz_programs.run(program, backend, inputs)
        for a, b in zip(eager, compiled, strict=True):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)


def dataclass_copy(program, transform):
    return fuzz_programs.Program(program.shapes, program.steps, program.outputs, transform)


def test_a_batch_agrees_with_jax():
    pytest.importorskip("jax")
    programs = 60
    agree, differences = fuzz_programs.fuzz(programs, seed=11)
    report = "\n\n".join(f"{d}\n{p.describe()}" for p, d in differences)
    assert agree == programs, report


def test_the_comparison_detects_a_different_program():
    pytest.importorskip("jax")
    ours, reference = fuzz_programs.Backend("xjax"), fuzz_programs.Backend("jax")
    program = fuzz_programs.Program([(3,)], [("sin", [0])], [1], "jit")
    assert fuzz_programs.compare(program, 0, ours, reference) is None
    original = fuzz_programs.UNARY["sin"]
    fuzz_programs.UNARY["sin"] = lambda m, x: (m.np.cos(x) if m is ours else original(m, x))
    try:
        difference = fuzz_programs.compare(program, 0, ours, reference)
    finally:
        fuzz_programs.UNARY["sin"] = original
    assert difference is not None and "values differ" in difference
