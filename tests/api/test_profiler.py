"""xjax.profiler: annotations (inert without a trace), xjax's own Chrome-JSON trace, and
clear NotImplementedErrors for XLA's profiler features."""

import glob
import gzip
import json
import os
import threading

import pytest

import xjax
import xjax.numpy as jnp
from xjax import profiler
from xjax._src.core import monitoring
from xjax._src.higher_order.jit_call import CompiledFunction


def _load(log_dir, pattern="*.trace.json.gz"):
    paths = glob.glob(os.path.join(log_dir, "plugins", "profile", "*", pattern))
    assert len(paths) == 1, paths
    with gzip.open(paths[0], "rt") as f:
        return json.load(f)


def _spans(trace_obj):
    return [e for e in trace_obj["traceEvents"] if e["ph"] == "X"]


def test_names_match_jax():
    pytest.importorskip("jax")
    import jax.profiler as jp
    assert sorted(profiler.__all__) == sorted(n for n in dir(jp) if not n.startswith("_"))
    for name in profiler.__all__:
        assert hasattr(profiler, name)


def test_annotations_without_trace_do_nothing():
    assert not profiler.TraceAnnotation.is_enabled()
    original = CompiledFunction.__call__

    @profiler.annotate_function
    def f(x):
        return x * 2

    with profiler.TraceAnnotation("a", k=1) as t, profiler.StepTraceAnnotation("s", step_num=0):
        assert f(3) == 6
    assert isinstance(t, profiler.TraceAnnotation)
    assert f.__name__ == "f"
    assert CompiledFunction.__call__ is original and not monitoring.active


def test_trace_records_annotations_compiles_and_executions(tmp_path):
    def step_fn(x):
        return x * 2 + 1

    g = xjax.jit(step_fn)

    @profiler.annotate_function
    def helper(x):
        return g(x)

    x = jnp.arange(4.0)
    with profiler.trace(str(tmp_path), create_perfetto_trace=True):
        assert profiler.TraceAnnotation.is_enabled()
        for i in range(2):
            with profiler.StepTraceAnnotation("train", step_num=i):
                with profiler.TraceAnnotation("inner", tag="t") as t:
                    t.set_metadata(extra=[1, 2])
                    y = helper(x)
        y.block_until_ready()
    assert not profiler.TraceAnnotation.is_enabled()
    assert (y == x * 2 + 1).all()

    trace_obj = _load(str(tmp_path))
    assert "xjax" in trace_obj["metadata"]["format"]
    spans = _spans(trace_obj)
    by_name = {}
    for e in spans:
        by_name.setdefault(e["name"], []).append(e)
    assert [e["args"] for e in by_name["train"]] == [{"step_num": 0}, {"step_num": 1}]
    assert {e["cat"] for e in by_name["train"]} == {"step"}
    assert by_name["inner"][0]["args"] == {"tag": "t", "extra": "[1, 2]"}
    assert len(by_name["test_trace_records_annotations_compiles_and_executions.<locals>"
                       ".helper"]) == 2
    assert len(by_name["backend_compile jit(step_fn)"]) == 1  # compiled once
    assert len(by_name["jaxpr_to_mlir_module jit(step_fn)"]) == 1
    assert len(by_name["jit_step_fn"]) == 2 and by_name["jit_step_fn"][0]["cat"] == "execute"
    # nesting: each execution lies inside an "inner" span, inside a "train" span
    for outer, inner in ((by_name["train"], by_name["inner"]),
                         (by_name["inner"], by_name["jit_step_fn"])):
        for o, i in zip(outer, inner, strict=True):
            assert o["ts"] <= i["ts"] and i["ts"] + i["dur"] <= o["ts"] + o["dur"] + 1e-3
    assert [e["ts"] for e in spans] == sorted(e["ts"] for e in spans)
    meta = [e for e in trace_obj["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name", "thread_name"}
    perfetto = _load(str(tmp_path), "perfetto_trace.json.gz")
    assert "metadata" not in perfetto and perfetto["traceEvents"] == trace_obj["traceEvents"]
    # hooks are gone after the trace
    assert CompiledFunction.__call__.__qualname__ == "CompiledFunction.__call__"
    assert not monitoring.active


def test_start_stop_errors_and_threads(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)  # a PathLike
    try:
        with pytest.raises(RuntimeError, match="Profile has already been started"):
            profiler.start_trace(tmp_path)
        th = threading.Thread(target=lambda: profiler.TraceAnnotation("bg").__enter__()
                              .__exit__(None, None, None), name="worker")
        th.start()
        th.join()
    finally:
        profiler.stop_trace()
    trace_obj = _load(str(tmp_path))
    names = {e["args"]["name"] for e in trace_obj["traceEvents"]
             if e["name"] == "thread_name"}
    assert "worker" in names
    assert [e["name"] for e in _spans(trace_obj)] == ["bg"]


def test_trace_as_decorator_and_exception(tmp_path):
    @profiler.trace(str(tmp_path / "a"))
    def run():
        with profiler.TraceAnnotation("deco"):
            pass

    run()
    assert [e["name"] for e in _spans(_load(str(tmp_path / "a")))] == ["deco"]
    with pytest.raises(ZeroDivisionError):
        with profiler.trace(str(tmp_path / "b")):
            1 / 0
    assert not profiler.TraceAnnotation.is_enabled()
    _load(str(tmp_path / "b"))  # written anyway


def test_options_and_unsupported(tmp_path):
    opts = profiler.ProfileOptions()
    assert opts.host_tracer_level == 2 and opts.python_tracer_level == 1
    opts.host_tracer_level = 3
    with profiler.trace(str(tmp_path), profiler_options=opts):
        pass
    with pytest.raises(NotImplementedError, match="perfetto"):
        profiler.start_trace(str(tmp_path), create_perfetto_link=True)
    assert not profiler.TraceAnnotation.is_enabled()
    for call in (lambda: profiler.start_server(9999), profiler.stop_server,
                 lambda: profiler.register_subprocess(1, 2), profiler.device_memory_profile,
                 lambda: profiler.save_device_memory_profile(str(tmp_path / "m.prof")),
                 lambda: profiler.ProfileData.from_file("x.xplane.pb"),
                 lambda: profiler.ProfileData.from_serialized_xspace(b"")):
        with pytest.raises(NotImplementedError, match="xjax"):
            call()
    assert not os.path.exists(tmp_path / "m.prof")


def test_options_match_jax():
    pytest.importorskip("jax")
    import jax.profiler as jp
    theirs = jp.ProfileOptions()
    ours = profiler.ProfileOptions()
    for name in (n for n in dir(theirs) if not n.startswith("_")):
        assert getattr(ours, name) == getattr(theirs, name), name
