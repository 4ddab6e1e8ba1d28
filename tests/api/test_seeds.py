"""The seed documents' programs (examples/) print what the seeds show."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

# For each example, lines its output must contain, in this order (values as the seeds print
# them, up to float32 rounding where the seed's input is random).
EXPECTED = {
    "seed000_quickstart.py": [
        "[-0.3721109   0.26423115 -0.18252768 -0.7368197  -0.44030377 -0.1521442\n"
        " -0.67135346 -0.5908641   0.73168886  0.5673026 ]",
        "jnp.dot of a NumPy array:",
        "jnp.dot after device_put:",
        "selu eager:",
        "selu jit:",
        "selu eager == jit: True",
    ],
    "seed001_jit_basics.py": [
        "True",
        "True",
        "NonConcreteBooleanIndexError: Array boolean indices must be concrete; got bool[10]",
        "TracerBoolConversionError: Attempted boolean conversion of traced array with shape "
        "bool[].",
        "Array(-1, dtype=int32, weak_type=True)",
        "TypeError: Shapes must be 1D sequences of concrete values of integer type, got "
        "[Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>].",
        "Array([1., 1., 1., 1., 1., 1.], dtype=float32)",
    ],
    "seed002_gotchas.py": [
        "First call:  4.0",
        "Second call:  5.0",
        "Third call, different type:  [14.]",
        "45",
        "0",
        "Exception '<class 'xjax._src.core.array.Array'>' object does not support item assignment. "
        "JAX arrays are immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or "
        "another .at[] method: "
        "https://jax.readthedocs.io/en/latest/_autosummary/jax.numpy.ndarray.at.html",
        "[[0. 0. 0.]\n [1. 1. 1.]\n [0. 0. 0.]]",
        "TypeError: sum requires ndarray or scalar arguments, got <class 'list'> at position 0.",
        "6",
    ],
    "seed003_thinking_in_jax.py": [
        "True",
        "ndarray Array",
        "[10  1  2  3  4  5  6  7  8  9]",
        "TypeError: '<class 'xjax._src.core.array.Array'>' object does not support item assignment.",
        "[0 1 2 3 4 5 6 7 8 9]",
        "[10  1  2  3  4  5  6  7  8  9]",
        "Array(2., dtype=float32, weak_type=True)",
        "TypeError: lax.add requires arguments to have the same dtypes, got int32, float32. "
        "(Tip: jnp.add is a similar function that does automatic type promotion on inputs).",
        "Array(2., dtype=float32)",
        "Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], dtype=float32)",
        "Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], dtype=float32)",
        "True",
        "float32 True",
        "NonConcreteBooleanIndexError: Array boolean indices must be concrete; got bool[10]",
        "Running f():\n"
        "  x = Traced<ShapedArray(float32[3,4])>with<DynamicJaxprTrace>\n"
        "  y = Traced<ShapedArray(float32[4])>with<DynamicJaxprTrace>\n"
        "  result = Traced<ShapedArray(float32[3])>with<DynamicJaxprTrace>\n"
        "(3,)\n(3,)",
        "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
        "    c:f32[3,4] = add a 1.0:f32[]\n"
        "    d:f32[4] = add b 1.0:f32[]\n"
        "    e:f32[3] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] c d\n"
        "  in (e,) }",
        "TracerBoolConversionError: Attempted boolean conversion of traced array with shape "
        "bool[].",
        "Array(-1, dtype=int32, weak_type=True)",
        "Array(1, dtype=int32, weak_type=True)",
        "TypeError: Shapes must be 1D sequences of concrete values of integer type, got "
        "[Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>].",
        "x = Traced<ShapedArray(float32[2,3])>with<DynamicJaxprTrace>\n"
        "x.shape = (2, 3)\n"
        "jnp.array(x.shape).prod() = Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>",
        "Array([1., 1., 1., 1., 1., 1.], dtype=float32)",
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_prints_what_the_seed_shows(name):
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    position = 0
    for expected in EXPECTED[name]:
        found = out.find(expected, position)
        assert found >= 0, f"{name}: expected after position {position}:\n{expected}\n\n" \
                           f"got:\n{out[position:position + 2000]}"
        position = found + len(expected)


def test_every_example_is_checked():
    assert sorted(p.name for p in EXAMPLES.glob("seed*.py")) == sorted(EXPECTED)
