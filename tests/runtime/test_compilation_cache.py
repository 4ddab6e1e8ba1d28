"""The persistent compilation cache: hits skip compilation, bad entries are never loaded."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.runtime import client as client_mod
from xjax._src.runtime import compilation_cache as cc


@pytest.fixture
def cache_dir(tmp_path):
    """Turn the cache on (writing every entry) for one test, with cold in-memory caches."""
    with xjax.config.override(jax_compilation_cache_dir=str(tmp_path),
                              jax_persistent_cache_min_compile_time_secs=0):
        xjax.clear_caches()
        yield tmp_path
    xjax.clear_caches()


@pytest.fixture
def compile_count(monkeypatch):
    """How many times XLA compiled (Client.compile was called) during the test."""
    count = [0]
    original = client_mod.Client.compile

    def counting(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(client_mod.Client, "compile", counting)
    return count


def _entries(path):
    return sorted(p for p in os.listdir(path) if p.endswith(cc.SUFFIX))


def _fun(x, y):
    return jnp.sin(x) * y + 1.0


def test_fresh_in_memory_cache_loads_from_disk(cache_dir, compile_count):
    x, y = jnp.arange(4.0), jnp.full(4, 3.0)
    expected = np.sin(np.arange(4.0, dtype=np.float32)) * 3 + 1
    np.testing.assert_allclose(xjax.jit(_fun)(x, y), expected, rtol=1e-6)
    assert compile_count[0] == 1
    assert len(_entries(cache_dir)) == 1
    xjax.clear_caches()
    out = xjax.jit(_fun)(x, y)
    assert compile_count[0] == 1  # loaded, not compiled
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_second_process_loads_from_disk(tmp_path):
    script = textwrap.dedent(f"""
        import json
        import xjax, xjax.numpy as jnp
        from xjax._src.runtime import client
        count = [0]
        original = client.Client.compile
        def counting(self, *a, **k):
            count[0] += 1
            return original(self, *a, **k)
        client.Client.compile = counting
        xjax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
        xjax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        out = xjax.jit(lambda x: jnp.cos(x) * 2.0)(jnp.arange(3.0))
        print(json.dumps({{"compiles": count[0], "out": out.tolist()}}))
    """)
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert [r["compiles"] for r in runs] == [1, 0]
    assert runs[0]["out"] == runs[1]["out"]
    np.testing.assert_allclose(runs[1]["out"], np.cos(np.arange(3.0)) * 2, rtol=1e-6)


def _corrupt_flip_payload(path):
    data = bytearray(path.read_bytes())
    data[cc.HEADER_SIZE + len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))


def _corrupt_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _corrupt_header_only(path):
    path.write_bytes(path.read_bytes()[:10])


def _corrupt_magic(path):
    data = bytearray(path.read_bytes())
    data[0:8] = b"NOTXJAX\0"
    path.write_bytes(bytes(data))


def _corrupt_version(path):
    data = bytearray(path.read_bytes())
    data[8] = cc.FORMAT_VERSION + 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("corrupt, reason", [
    (_corrupt_flip_payload, "checksum"),
    (_corrupt_truncate, "truncated"),
    (_corrupt_header_only, "truncated"),
    (_corrupt_magic, "magic"),
    (_corrupt_version, "format version"),
])
def test_bad_entry_warns_and_recompiles(cache_dir, compile_count, corrupt, reason):
    x = jnp.arange(5.0)
    expected = np.asarray(xjax.jit(_fun)(x, x))
    (name,) = _entries(cache_dir)
    corrupt(cache_dir / name)
    xjax.clear_caches()
    with pytest.warns(UserWarning, match=reason) as record:
        out = xjax.jit(_fun)(x, x)
    assert any(name in str(w.message) for w in record)  # the warning names the file
    assert compile_count[0] == 2
    np.testing.assert_array_equal(out, expected)
    # The entry was rewritten: the next fresh start loads it silently.
    xjax.clear_caches()
    np.testing.assert_array_equal(xjax.jit(_fun)(x, x), expected)
    assert compile_count[0] == 2


def test_foreign_entry_under_another_name_is_not_loaded(cache_dir, compile_count):
    x = jnp.arange(3.0)
    xjax.jit(lambda v: v * 2.0)(x)
    (first,) = _entries(cache_dir)
    xjax.jit(lambda v: v - 7.0)(x)
    (second,) = [e for e in _entries(cache_dir) if e != first]
    # A valid entry of another program copied under this program's name.
    (cache_dir / second).write_bytes((cache_dir / first).read_bytes())
    xjax.clear_caches()
    with pytest.warns(UserWarning, match="key mismatch"):
        out = xjax.jit(lambda v: v - 7.0)(x)
    np.testing.assert_array_equal(out, [-7.0, -6.0, -5.0])
    assert compile_count[0] == 3


def test_keys_depend_on_x64_options_and_text():
    client = xjax._src.runtime.get_client()
    text = "module @m {}"
    opts = client_mod.compile_options()
    base = cc.cache_key(client, text, opts, "x64=False")
    assert base == cc.cache_key(client, text, opts, "x64=False")
    assert base != cc.cache_key(client, text, opts, "x64=True")
    assert base != cc.cache_key(client, text, client_mod.compile_options(0), "x64=False")
    assert base != cc.cache_key(client, text + " ", opts, "x64=False")


def test_x64_gives_another_entry(cache_dir):
    x = np.arange(3, dtype=np.int32)
    xjax.jit(lambda v: v + 1)(x)
    with xjax.config.override(jax_enable_x64=True):
        xjax.jit(lambda v: v + 1)(x)
    assert len(_entries(cache_dir)) == 2


def test_min_compile_time_skips_writing(tmp_path):
    with xjax.config.override(jax_compilation_cache_dir=str(tmp_path),
                              jax_persistent_cache_min_compile_time_secs=1e9):
        xjax.clear_caches()
        np.testing.assert_array_equal(xjax.jit(lambda v: v * 3)(jnp.ones(2)), [3, 3])
    xjax.clear_caches()
    assert _entries(tmp_path) == []


def test_min_entry_size_skips_writing(tmp_path):
    with xjax.config.override(jax_compilation_cache_dir=str(tmp_path),
                              jax_persistent_cache_min_compile_time_secs=0,
                              jax_persistent_cache_min_entry_size_bytes=1 << 40):
        xjax.clear_caches()
        xjax.jit(lambda v: v * 3)(jnp.ones(2))
    xjax.clear_caches()
    assert _entries(tmp_path) == []


def test_no_temporary_files_left(cache_dir):
    xjax.jit(lambda v: v * 5)(jnp.ones(2))
    assert [p for p in os.listdir(cache_dir) if not p.endswith(cc.SUFFIX)] == []


def test_donation_survives_the_cache(cache_dir, compile_count):
    f = lambda v: v * 2.0  # noqa: E731
    xjax.jit(f, donate_argnums=0)(jnp.ones(3) + 0)
    xjax.clear_caches()
    x = jnp.ones(3) + 0
    out = xjax.jit(f, donate_argnums=0)(x)
    assert compile_count[0] == 1
    np.testing.assert_array_equal(out, [2, 2, 2])
    assert x.is_deleted()


# -- the runtime pieces the cache is built on --

_ADD_TEXT = """module @m {
  func.func public @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>) {
    %0 = "stablehlo.add"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}"""


def test_serialize_and_deserialize_round_trip():
    client = xjax._src.runtime.get_client()
    exe = client.compile(_ADD_TEXT)
    data = exe.serialize()
    assert isinstance(data, bytes) and len(data) > 0
    loaded = client.deserialize_executable(data, client_mod.compile_options())
    assert loaded.num_outputs == 1
    assert loaded.output_shapes == ((3,),)
    a = np.array([1, 2, 3], np.float32)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(loaded.execute([a, b])[0].to_numpy(), [11, 22, 33])


def test_deserializing_garbage_raises_xla_error():
    client = xjax._src.runtime.get_client()
    with pytest.raises(xjax._src.runtime.XlaRuntimeError):
        client.deserialize_executable(b"definitely not an executable")


def test_environment_variables_set_the_cache_flags(tmp_path):
    script = ("import xjax; c = xjax.config; print(c.jax_compilation_cache_dir, "
              "c.jax_persistent_cache_min_compile_time_secs)")
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=str(tmp_path),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.5")
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == [str(tmp_path), "0.5"]
