"""``python -m xjax._src.testing.coverage``: the API coverage report against JAX's public names."""

import json
import pathlib
import subprocess
import sys

import pytest

from xjax._src.core.stubs import not_implemented
from xjax._src.testing import coverage

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
NAMES = DATA / "jax-0.10.2-public-names.tsv"  # a copy of shared/api's checklist
FAKE = "definitely_not_a_jax_name"


def _run(*args):
    return subprocess.run([sys.executable, "-m", "xjax._src.testing.coverage", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "names.tsv"
    path.write_text("# a comment line\n\n"
                    "jax.numpy\tsin\tfunction\n"
                    "jax.numpy\tsum\tfunction\n"
                    "jax.numpy\tfromfile\tfunction\n"
                    f"jax.numpy\t{FAKE}\tfunction\n"
                    "jax.numpy\tfloat32\tclass\n"
                    "jax.nn\tscaled_matmul\tfunction\n"
                    "jax.lax\tadd_p\tconstant\n")
    done = _run("--names", str(path), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_report_structure(small_report):
    assert set(small_report) >= {"names_file", "method", "modules", "headline"}
    assert list(small_report["modules"]) == list(coverage.MODULES)
    for entries in small_report["modules"].values():
        for entry in entries:
            assert set(entry) == {"name", "kind", "status", "detail", "tested"}
            assert entry["status"] in coverage.STATUSES + ("stub-as-jax",)
    numpy_names = [e["name"] for e in small_report["modules"]["jax.numpy"]]
    assert numpy_names == ["sin", "sum", "fromfile", FAKE, "float32"]
    assert [e["name"] for e in small_report["modules"]["jax.lax"]] == ["add_p"]


def test_statuses(small_report):
    by_name = {e["name"]: e for m in small_report["modules"].values() for e in m}
    assert by_name[FAKE]["status"] == "missing"
    assert not by_name[FAKE]["tested"]
    assert by_name["sin"]["status"] == "works" and by_name["sin"]["tested"]
    assert by_name["float32"]["status"] == "works"
    assert by_name["add_p"]["status"] == "works"
    # jnp.sum raises NotImplementedError for out=..., as JAX does
    assert by_name["sum"]["status"] == "partial"
    assert any("out" in message for message in by_name["sum"]["detail"])
    assert by_name["scaled_matmul"]["status"] == "stub"
    assert by_name["fromfile"]["status"] == "stub-as-jax"


def test_headline_counts_only_headline_callables(small_report):
    h = small_report["headline"]
    # sin, sum (partial), fromfile (as JAX), the fake (missing), nn.scaled_matmul (stub);
    # float32 is a class and add_p is not in a headline module
    assert h["callables"] == 5
    assert h["working"] == 3
    assert h["fully_working"] == 2
    assert h["percent_working"] == 60.0


def test_full_checklist_text_and_markdown():
    done = _run("--names", str(NAMES), "--summary")
    assert done.returncode == 0, done.stderr
    assert "headline:" in done.stdout
    for module in coverage.MODULES:
        assert f"\n{module} " in done.stdout
    done = _run("--names", str(NAMES), "--markdown", "--module", "jax.numpy.fft")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# xjax API coverage")
    assert "| jax.numpy.fft | 18 |" in done.stdout
    assert "## jax.numpy.fft" in done.stdout and "## jax.numpy\n" not in done.stdout


def test_missing_checklist_is_a_clear_error(tmp_path):
    done = _run("--names", str(tmp_path / "absent.tsv"))
    assert done.returncode != 0
    assert "not found" in done.stderr and "--names" in done.stderr
    assert done.stdout == ""


def _always(x):
    """Raises whatever it is given."""
    raise NotImplementedError("never")


def _helper_raises(x):
    raise NotImplementedError("helper never")


def _calls_a_stub(x):
    _helper_raises(x)


def _sometimes(x, mode="a"):
    if mode != "a":
        raise NotImplementedError(f"mode {mode}")
    return x


def _checks(out):
    if out is not None:
        raise NotImplementedError("out")


def _forwards(x, out=None):
    _checks(out)
    return x


def _returns_early(x, mode="a"):
    if mode == "a":
        return x
    raise NotImplementedError("only mode a")


def test_classify():
    assert coverage.classify(not_implemented("f", "why")) == ("stub", "why")
    assert coverage.classify(not_implemented("f", "why", jax_too=True)) == ("stub-as-jax", "why")
    assert coverage.classify(_always) == ("stub", "(unmarked) never")
    assert coverage.classify(_calls_a_stub) == ("stub", "(unmarked) helper never")
    assert coverage.classify(_sometimes) == ("partial", ["mode {mode}"])
    assert coverage.classify(_forwards) == ("partial", ["out"])
    assert coverage.classify(_returns_early) == ("partial", ["only mode a"])
    assert coverage.classify(len) == ("works", None)
    assert coverage.classify(lambda x: x) == ("works", None)


def test_tested_scan(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "import xjax.numpy as jnp\nfrom xjax import lax\nfrom xjax.scipy.special import erf\n"
        "LA = jnp.linalg\n"
        "def test():\n    jnp.sin(1.0); lax.add(1, 2); erf(0.0); LA.norm(1.0)\n"
        "    for name in ['cos', 'not an identifier']:\n        getattr(jnp, name)\n")
    found = coverage.tested_names(tmp_path)
    assert {("jax.numpy", "sin"), ("jax.lax", "add"), ("jax.scipy.special", "erf"),
            ("jax.numpy.linalg", "norm"), ("jax.numpy", "cos")} <= found
    assert ("jax.numpy", "tan") not in found
    assert ("jax.lax", "cos") not in found
