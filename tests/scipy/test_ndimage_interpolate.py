"""``xjax.scipy.ndimage.map_coordinates`` and ``xjax.scipy.interpolate.
RegularGridInterpolator`` against SciPy on random inputs, under jit/vmap, gradients against
central finite differences, and (where installed) JAX 0.10.2."""

import itertools

import numpy as np
import pytest
import scipy.interpolate as si
import scipy.ndimage as sn

import xjax
import xjax.numpy as jnp
from xjax.scipy.interpolate import RegularGridInterpolator
from xjax.scipy.ndimage import map_coordinates

# xjax mode -> the SciPy mode with the same meaning (JAX fixed SciPy's old 'constant' and
# 'wrap'; SciPy kept them and added the 'grid-' names).
_SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
               "mirror": "mirror", "reflect": "reflect"}


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _random_coordinates(rng, shape, coord_shape, order):
    """Coordinates reaching 3 samples past each edge; for order 0 kept away from the
    half-integers where SciPy (floor(x + 0.5)) and JAX (half away from zero) round apart."""
    coords = [rng.uniform(-3, n + 2, size=coord_shape) for n in shape]
    if order == 0:
        coords = [np.where(np.abs(c % 1 - 0.5) < 0.05, c + 0.2, c) for c in coords]
    return [c.astype(np.float32) for c in coords]


# ---------------------------------------------------------------------------------------------
# map_coordinates


@pytest.mark.parametrize("mode", sorted(_SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape,coord_shape", [((7,), (11,)), ((5, 6), (3, 4)),
                                               ((4, 3, 5), (9,)), ((1, 4), (6,))])
def test_map_coordinates_matches_scipy(mode, order, shape, coord_shape):
    rng = np.random.default_rng(hash((mode, order, shape)) % 2**32)
    image = rng.normal(size=shape).astype(np.float32)
    coords = _random_coordinates(rng, shape, coord_shape, order)
    got = map_coordinates(jnp.asarray(image), [jnp.asarray(c) for c in coords], order,
                          mode=mode, cval=-1.5)
    want = sn.map_coordinates(image.astype(np.float64), [c.astype(np.float64) for c in coords],
                              order=order, mode=_SCIPY_MODE[mode], cval=-1.5)
    assert got.dtype == np.float32 and got.shape == coord_shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_map_coordinates_order0_rounds_half_away_from_zero():
    image = np.arange(10.0, dtype=np.float32) * 3 + 1
    coords = np.array([-0.5, 0.5, 1.5, 2.5, 3.5, 4.49, 6.51], dtype=np.float32)
    got = map_coordinates(jnp.asarray(image), [jnp.asarray(coords)], 0, mode="nearest")
    index = np.clip(_round_half_away(coords.astype(np.float64)), 0, 9).astype(int)
    np.testing.assert_array_equal(np.asarray(got), image[index])


def test_map_coordinates_integer_input_and_coordinates():
    rng = np.random.default_rng(1)
    image = rng.integers(-50, 50, size=(6, 5)).astype(np.int32)
    coords = _random_coordinates(rng, image.shape, (20,), 1)
    got = map_coordinates(jnp.asarray(image), [jnp.asarray(c) for c in coords], 1,
                          mode="mirror")
    exact = sn.map_coordinates(image.astype(np.float64), coords, order=1, mode="mirror")
    assert got.dtype == np.int32
    # Rounded half away from zero (ties aside, which random inputs do not hit).
    np.testing.assert_array_equal(np.asarray(got), _round_half_away(exact))
    # Integer coordinates sample exactly, with either order.
    int_coords = [rng.integers(0, n, size=8).astype(np.int32) for n in image.shape]
    for order in (0, 1):
        sampled = map_coordinates(jnp.asarray(image), [jnp.asarray(c) for c in int_coords],
                                  order)
        np.testing.assert_array_equal(np.asarray(sampled), image[tuple(int_coords)])


def test_map_coordinates_errors():
    image = jnp.ones((3, 4))
    with pytest.raises(ValueError, match="length input.ndim, but 1 != 2"):
        map_coordinates(image, [jnp.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="grid-wrap"):
        map_coordinates(image, [jnp.zeros(2)] * 2, 1, mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="order 0 and 1"):
        map_coordinates(image, [jnp.zeros(2)] * 2, 3)


def test_map_coordinates_jit_and_vmap():
    rng = np.random.default_rng(2)
    image = jnp.asarray(rng.normal(size=(6, 7)).astype(np.float32))
    batch = jnp.asarray(rng.uniform(-1, 7, size=(5, 2, 4)).astype(np.float32))

    def sample(img, c):
        return map_coordinates(img, [c[0], c[1]], 1, mode="reflect")

    jitted = xjax.jit(sample)(image, batch[0])
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(sample(image, batch[0])),
                               rtol=1e-6, atol=1e-6)
    mapped = xjax.vmap(sample, in_axes=(None, 0))(image, batch)
    looped = np.stack([np.asarray(sample(image, c)) for c in batch])
    np.testing.assert_allclose(np.asarray(mapped), looped, rtol=1e-6, atol=1e-6)


def _central_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        grad[idx] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("mode", ["constant", "wrap", "mirror"])
def test_map_coordinates_order1_grad_matches_finite_differences(mode):
    rng = np.random.default_rng(3)
    with xjax.config.override(jax_enable_x64=True):
        image = rng.normal(size=(4, 5))
        coords = rng.uniform(-1.5, 5.5, size=(2, 6))
        coords = np.where(np.abs(coords - np.round(coords)) < 0.05, coords + 0.2, coords)
        weights = rng.normal(size=6)

        def loss(img, c):
            values = map_coordinates(img, [c[0], c[1]], 1, mode=mode, cval=0.7)
            return jnp.sum(values * weights)

        d_image, d_coords = xjax.grad(loss, argnums=(0, 1))(jnp.asarray(image),
                                                            jnp.asarray(coords))
        fd_image = _central_difference(lambda i: float(loss(jnp.asarray(i), coords)), image)
        fd_coords = _central_difference(lambda c: float(loss(image, jnp.asarray(c))), coords)
    np.testing.assert_allclose(np.asarray(d_image), fd_image, atol=1e-7)
    np.testing.assert_allclose(np.asarray(d_coords), fd_coords, atol=1e-6)


def test_map_coordinates_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    image = rng.normal(size=(5, 4)).astype(np.float32)
    # Exact half-integers included: both round half away from zero.
    coords = [np.round(rng.uniform(-3, 7, size=12) * 2) / 2 + (rng.uniform(size=12) < 0.5)
              * rng.uniform(size=12) for _ in range(2)]
    coords = [c.astype(np.float32) for c in coords]
    for mode, order in itertools.product(sorted(_SCIPY_MODE), (0, 1)):
        got = map_coordinates(jnp.asarray(image), [jnp.asarray(c) for c in coords], order,
                              mode=mode, cval=2.0)
        want = jax.scipy.ndimage.map_coordinates(image, coords, order, mode=mode, cval=2.0)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6,
                                   err_msg=f"{mode} order {order}")


# ---------------------------------------------------------------------------------------------
# RegularGridInterpolator


def _random_grid(rng, sizes):
    return tuple(np.sort(rng.uniform(-2, 2, size=n)).astype(np.float32) for n in sizes)


def _query(rng, grid, count, margin):
    return np.stack([rng.uniform(g[0] - margin, g[-1] + margin, size=count) for g in grid],
                    axis=-1).astype(np.float32)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("sizes,trailing", [((5,), ()), ((4, 6), ()), ((3, 4, 5), ()),
                                            ((4, 5), (2,))])
@pytest.mark.parametrize("fill_value", [np.nan, 0.5, None])
def test_regular_grid_matches_scipy(method, sizes, trailing, fill_value):
    rng = np.random.default_rng(hash((method, sizes, trailing)) % 2**32)
    grid = _random_grid(rng, sizes)
    values = rng.normal(size=sizes + trailing).astype(np.float32)
    points = _query(rng, grid, 25, margin=0.5)
    interpolator = RegularGridInterpolator(tuple(jnp.asarray(g) for g in grid),
                                           jnp.asarray(values), method=method,
                                           fill_value=fill_value)
    reference = si.RegularGridInterpolator(grid, values.astype(np.float64), method=method,
                                           bounds_error=False, fill_value=fill_value)
    got = interpolator(jnp.asarray(points))
    assert got.shape == (25,) + trailing and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), reference(points), rtol=1e-5, atol=1e-5)


def test_regular_grid_query_forms_and_method_override():
    rng = np.random.default_rng(5)
    grid = _random_grid(rng, (4, 5))
    values = rng.normal(size=(4, 5)).astype(np.float32)
    interpolator = RegularGridInterpolator(tuple(map(jnp.asarray, grid)), jnp.asarray(values))
    reference = si.RegularGridInterpolator(grid, values.astype(np.float64),
                                           bounds_error=False)
    xs, ys = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 2), indexing="ij")
    # A tuple of per-axis arrays, broadcast against each other.
    got = interpolator((jnp.asarray(xs[:, :1]), jnp.asarray(ys)))
    np.testing.assert_allclose(np.asarray(got), reference((xs, ys)), rtol=1e-5, atol=1e-6)
    # A batch of points with the coordinates on the last axis; a 1-D array of ndim entries.
    stacked = np.stack([xs, ys], axis=-1).astype(np.float32)
    np.testing.assert_allclose(np.asarray(interpolator(jnp.asarray(stacked))),
                               reference(stacked), rtol=1e-5, atol=1e-6)
    point = stacked[1, 1]
    assert interpolator(jnp.asarray(point)).shape == (1,)
    np.testing.assert_allclose(np.asarray(interpolator(jnp.asarray(point), method="nearest")),
                               reference(point, method="nearest"), rtol=1e-6)


def test_regular_grid_errors():
    grid = (jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 1.0]))
    values = jnp.ones((3, 2))
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(grid, values, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(grid, values, bounds_error=True)
    with pytest.raises(ValueError, match="2 point arrays, but values has 1 dimensions"):
        RegularGridInterpolator(grid, jnp.ones(3))
    with pytest.raises(ValueError, match="fill_value"):
        RegularGridInterpolator(grid, values, fill_value=1j)
    with pytest.raises(TypeError):
        RegularGridInterpolator(grid, [[1.0, 2.0]] * 3)
    interpolator = RegularGridInterpolator(grid, values)
    with pytest.raises(ValueError, match="dimension 3, but this RegularGridInterpolator has"):
        interpolator(jnp.ones((4, 3)))
    with pytest.raises(ValueError, match="method 'spline' is not defined"):
        interpolator(jnp.ones((4, 2)), method="spline")


def test_regular_grid_pytree_jit_vmap():
    rng = np.random.default_rng(6)
    grid = tuple(map(jnp.asarray, _random_grid(rng, (4, 5))))
    values = jnp.asarray(rng.normal(size=(3, 4, 5)).astype(np.float32))
    points = jnp.asarray(_query(rng, grid, 7, margin=0.3))
    interpolator = RegularGridInterpolator(grid, values[0], fill_value=0.0)

    leaves, tree = xjax.tree_util.tree_flatten(interpolator)
    assert len(leaves) == 4  # two grid axes, values, fill_value
    rebuilt = xjax.tree_util.tree_unflatten(tree, leaves)
    assert (rebuilt.method, rebuilt.bounds_error) == ("linear", False)

    jitted = xjax.jit(lambda interp, x: interp(x))(interpolator, points)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(interpolator(points)),
                               rtol=1e-6, atol=1e-6)
    mapped = xjax.vmap(lambda v: RegularGridInterpolator(grid, v, fill_value=0.0)(points))(
        values)
    looped = np.stack([np.asarray(RegularGridInterpolator(grid, v, fill_value=0.0)(points))
                       for v in values])
    np.testing.assert_allclose(np.asarray(mapped), looped, rtol=1e-6, atol=1e-6)


def test_regular_grid_linear_grad_matches_finite_differences():
    rng = np.random.default_rng(7)
    with xjax.config.override(jax_enable_x64=True):
        grid = tuple(np.sort(rng.uniform(-2, 2, size=n)) for n in (4, 5))
        values = rng.normal(size=(4, 5))
        points = _query(rng, grid, 6, margin=-0.05).astype(np.float64)
        weights = rng.normal(size=6)

        def loss(v, x):
            return jnp.sum(RegularGridInterpolator(grid, v)(x) * weights)

        grid = tuple(map(jnp.asarray, grid))
        d_values, d_points = xjax.grad(loss, argnums=(0, 1))(jnp.asarray(values),
                                                             jnp.asarray(points))
        fd_values = _central_difference(lambda v: float(loss(jnp.asarray(v), points)), values)
        fd_points = _central_difference(lambda x: float(loss(values, jnp.asarray(x))), points)
    np.testing.assert_allclose(np.asarray(d_values), fd_values, atol=1e-7)
    np.testing.assert_allclose(np.asarray(d_points), fd_points, atol=1e-6)


def test_regular_grid_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator

    rng = np.random.default_rng(8)
    grid = _random_grid(rng, (5, 4, 3))
    values = rng.normal(size=(5, 4, 3)).astype(np.float32)
    points = _query(rng, grid, 30, margin=0.4)
    for method, fill in itertools.product(("linear", "nearest"), (np.nan, None, -1.0)):
        got = RegularGridInterpolator(tuple(map(jnp.asarray, grid)), jnp.asarray(values),
                                      method=method, fill_value=fill)(jnp.asarray(points))
        want = JaxInterpolator(tuple(map(jax.numpy.asarray, grid)), jax.numpy.asarray(values),
                               method=method, fill_value=fill)(points)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
