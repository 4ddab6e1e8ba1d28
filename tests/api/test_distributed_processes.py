"""``xjax.distributed.initialize`` with several processes on this machine: the coordination
service, its key-value store and barriers, process ids, and what does not work (the global
device list). Each test launches short Python processes on a free port; every process is
killed when the test ends, passed or not. One test runs the same script under JAX and
compares what the processes print.
"""

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import xjax
from xjax._src.api import devices as api_devices
from xjax._src.runtime.coordination import (CoordinationService, DistributedRuntimeClient,
                                            format_duration_ms)

# Each process dumps its stack and exits after this long, so none outlives a hung test.
WATCHDOG_S = 25
COMMUNICATE_S = 40

PRELUDE = """
import faulthandler, importlib, sys, time
faulthandler.dump_traceback_later({watchdog}, exit=True)
LIB, PID, N, PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
jax = importlib.import_module(LIB)
state = importlib.import_module(
    "jax._src.distributed" if LIB == "jax" else "xjax._src.api.distributed").global_state


def message(e):
    # The status line and text, without the RPC details JAX's gRPC transport appends.
    text = str(e)
    for tail in ("\\nAdditional GRPC error information", "\\n\\nRPC:",
                 " [type.googleapis.com"):
        text = text.split(tail)[0]
    return text.strip()


def out(label, thunk):
    try:
        result = repr(thunk())
    except Exception as e:
        result = f"{{type(e).__name__}}: {{message(e)}}"
    print(f"{{label}}: {{result}}".replace("\\n", "|"), flush=True)  # one line each


jax.distributed.initialize(f"localhost:{{PORT}}", N, PID, initialization_timeout=20,
                           shutdown_timeout_seconds=20)
client = state.client
""".format(watchdog=WATCHDOG_S)

# Everything a process of a three-process xjax job can do.
JOB = """
import xjax.numpy as jnp
from xjax._src.api import devices as api_devices
out("initialized", jax.distributed.is_initialized)
out("index, count, indices", lambda: (jax.process_index(), jax.process_count(),
                                      jax.process_indices()))
out("devices", api_devices.devices)
out("device_count", jax.device_count)
out("local devices", lambda: jax.local_devices() == jax.local_devices(process_index=PID)
    and len(jax.local_devices()) == jax.local_device_count() >= 1)
out("jit", lambda: jax.jit(lambda x: x * 2 + PID)(jnp.arange(3)).tolist())
out("device process", lambda: {d.process_index for d in jax.local_devices()})
out("initialize again", lambda: jax.distributed.initialize(f"localhost:{PORT}", N, PID))
client.key_value_set(f"hello/{PID}", f"from {PID}")
out("hellos", lambda: [client.blocking_key_value_get(f"hello/{i}", 5000) for i in range(N)])
client.key_value_increment("count", PID + 1)
client.wait_at_barrier("counted", 5000)
out("count", lambda: client.key_value_try_get("count"))
out("dir", lambda: client.key_value_dir_get("hello"))
out("live", lambda: sorted(client.get_live_nodes(list(range(N)))))
out("shutdown", jax.distributed.shutdown)
out("after", lambda: (jax.distributed.is_initialized(), jax.process_count(),
                      jax.process_index()))
"""

# The key-value store and barriers of a two-process job, run under xjax and under JAX.
KV_AND_BARRIERS = """
def sync(name):
    client.wait_at_barrier(name, 5000)


if PID == 0:
    for key, value in [("a/b", "1"), ("a/c", "2"), ("a/b/c", "3"), ("ab", "4"), ("a", "5")]:
        client.key_value_set(key, value)
    out("set existing", lambda: client.key_value_set("a/b", "x"))
    out("overwrite", lambda: client.key_value_set("a/b", "1b", allow_overwrite=True))
    client.key_value_set_bytes("bin", b"\\x00\\xff")
    client.key_value_set("s5", "5")
sync("written")
out("dir a", lambda: client.key_value_dir_get("a"))
out("dir a/", lambda: client.key_value_dir_get("a/"))
out("dir a/b", lambda: client.key_value_dir_get("/a//b/"))
out("dir missing", lambda: client.key_value_dir_get("zz"))
out("dir bytes", lambda: client.key_value_dir_get_bytes("a"))
out("try_get", lambda: client.key_value_try_get("a/b"))
out("try_get normalized", lambda: client.key_value_try_get("/a/b/"))
out("try_get missing", lambda: client.key_value_try_get("nope"))
out("try_get_bytes missing", lambda: client.key_value_try_get_bytes("nope"))
out("bytes", lambda: client.key_value_try_get_bytes("bin"))
out("bytes as str", lambda: client.key_value_try_get("bin"))
out("blocking present", lambda: client.blocking_key_value_get("ab", 1000))
out("blocking timeout", lambda: client.blocking_key_value_get("nope", 200))
out("blocking bytes timeout", lambda: client.blocking_key_value_get_bytes("nope", 100))
sync("read")
if PID == 1:
    time.sleep(0.3)
    client.key_value_set("later", "L")
else:
    start = time.monotonic()
    out("blocking waits for a later set", lambda: client.blocking_key_value_get("later", 5000))
    out("waited", lambda: time.monotonic() - start > 0.2)
sync("later")
if PID == 0:
    out("increment new", lambda: client.key_value_increment("count", 3))
sync("incremented")
out("increment", lambda: client.key_value_increment("count", 2) in (5, 7))
sync("incremented twice")
out("count", lambda: client.key_value_try_get("count"))
if PID == 0:
    out("increment text", lambda: client.key_value_increment("a/b", 1))
    out("increment parsed", lambda: client.key_value_increment("s5", 1))
    out("increment past int32", lambda: (client.key_value_set("big", "3000000000"),
                                         client.key_value_increment("big", 1)))
    out("delete missing", lambda: client.key_value_delete("nope"))
    out("delete directory", lambda: client.key_value_delete("a/"))
sync("deleted")
out("dir after delete", lambda: client.key_value_dir_get("a"))
out("sibling after delete", lambda: client.key_value_try_get("ab"))
out("key after delete", lambda: client.key_value_try_get("a"))
if PID == 1:
    time.sleep(0.3)  # arrives late, within the timeout
out("late barrier", lambda: client.wait_at_barrier("slow", 5000))
if PID == 0:
    out("barrier timeout", lambda: client.wait_at_barrier("lonely", 300))
    client.key_value_set("lonely timed out", "")
else:
    client.blocking_key_value_get("lonely timed out", 5000)
    out("arrives after the timeout", lambda: client.wait_at_barrier("lonely", 5000))
sync("after timeout")
out("reused id", lambda: client.wait_at_barrier("slow", 5000))
out("subset", lambda: client.wait_at_barrier("both", 5000, [0, 1]))
if PID == 1:
    out("own subset", lambda: client.wait_at_barrier("mine", 5000, [1]))
    out("not a participant", lambda: client.wait_at_barrier("theirs", 5000, [0]))
sync("subsets")
if PID == 0:
    out("conflicting subsets", lambda: client.wait_at_barrier("mine", 300, [0]))
    out("unknown process", lambda: client.wait_at_barrier("nobody", 300, [0, 5]))
out("live", lambda: sorted(client.get_live_nodes([0, 1])))
out("shutdown", jax.distributed.shutdown)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _run_job(tmp_path, body: str, num_processes: int, lib: str = "xjax") -> list[str]:
    """Run ``body`` in ``num_processes`` processes of one job; return each one's stdout.
    Every process is killed before this returns."""
    script = tmp_path / f"{lib}_job.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    port = _free_port()
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    processes = [subprocess.Popen([sys.executable, str(script), lib, str(i),
                                   str(num_processes), str(port)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(num_processes)]
    try:
        results = [p.communicate(timeout=COMMUNICATE_S) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, (p, (_, stderr)) in enumerate(zip(processes, results)):
        assert p.returncode == 0, f"process {i} failed:\n{stderr[-3000:]}"
    return [stdout for stdout, _ in results]


def _lines(stdout: str) -> dict:
    return dict(line.split(": ", 1) for line in stdout.splitlines())


# -- a job of three xjax processes

def test_three_processes_join_share_a_store_and_compute_locally(tmp_path):
    outputs = [_lines(o) for o in _run_job(tmp_path, JOB, 3)]
    for pid, out in enumerate(outputs):
        assert out["initialized"] == "True"
        assert out["index, count, indices"] == f"({pid}, 3, [0, 1, 2])"
        for name in ("devices", "device_count"):
            assert out[name].startswith(f"NotImplementedError: xjax.{name}() in a job of 3 "
                                        "processes")
            assert "xjax.local_devices()" in out[name]
        assert out["local devices"] == "True"
        assert out["jit"] == repr([pid, 2 + pid, 4 + pid])
        assert out["device process"] == repr({pid})
        assert out["initialize again"] == ("RuntimeError: distributed.initialize should only "
                                           "be called once.")
        assert out["hellos"] == "['from 0', 'from 1', 'from 2']"
        assert out["count"] == "'6'"  # 1 + 2 + 3, incremented atomically
        assert out["dir"] == ("[('hello/0', 'from 0'), ('hello/1', 'from 1'), "
                              "('hello/2', 'from 2')]")
        assert out["live"] == "[0, 1, 2]"
        assert out["shutdown"] == "None"
        assert out["after"] == "(False, 1, 0)"


# -- the key-value store and barriers, and JAX's errors

KV_EXPECTED_BOTH = {
    "dir a": "[('a/b', '1b'), ('a/b/c', '3'), ('a/c', '2')]",
    "dir a/": "[('a/b', '1b'), ('a/b/c', '3'), ('a/c', '2')]",
    "dir a/b": "[('a/b/c', '3')]",
    "dir missing": "[]",
    "dir bytes": "[('a/b', b'1b'), ('a/b/c', b'3'), ('a/c', b'2')]",
    "try_get": "'1b'",
    "try_get normalized": "'1b'",
    "try_get missing": "JaxRuntimeError: NOT_FOUND: Config key nope not found.",
    "try_get_bytes missing": "JaxRuntimeError: NOT_FOUND: Config key nope not found.",
    "bytes": "b'\\x00\\xff'",
    "bytes as str": ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 1: "
                     "invalid start byte"),
    "blocking present": "'4'",
    "blocking timeout": ("JaxRuntimeError: DEADLINE_EXCEEDED: GetKeyValue() timed out with "
                         "key: nope and duration: 200ms"),
    "blocking bytes timeout": ("JaxRuntimeError: DEADLINE_EXCEEDED: GetKeyValue() timed out "
                               "with key: nope and duration: 100ms"),
    "increment": "True",
    "count": "'7'",
    "dir after delete": "[]",
    "sibling after delete": "'4'",
    "key after delete": "JaxRuntimeError: NOT_FOUND: Config key a not found.",
    "late barrier": "None",
    "reused id": "None",
    "subset": "None",
    "live": "[0, 1]",
    "shutdown": "None",
}
BARRIER_TIMEOUT = (
    "JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: lonely::0. This usually "
    "happens because a task triggered the barrier too early or too slowly. Please look at "
    "the task logs (both timed out and first task) to debug further.|# of tasks that "
    "reached the barrier: 1/2.|The first task at the barrier: 0. Some timed out task "
    "names:|1")
KV_EXPECTED = [{  # process 0
    "set existing": "JaxRuntimeError: ALREADY_EXISTS: key a/b already exists.",
    "overwrite": "None",
    "blocking waits for a later set": "'L'",
    "waited": "True",
    "increment new": "3",
    "increment text": ('JaxRuntimeError: FAILED_PRECONDITION: Failed to parse value "1b" as '
                       'an integer.'),
    "increment parsed": "6",
    "increment past int32": ('JaxRuntimeError: FAILED_PRECONDITION: Failed to parse value '
                             '"3000000000" as an integer.'),
    "delete missing": "None",
    "delete directory": "None",
    "barrier timeout": BARRIER_TIMEOUT,
    "conflicting subsets": ("JaxRuntimeError: INVALID_ARGUMENT: Conflicting tasks specified "
                            "by different processes for the same barrier: mine::0. Check that "
                            "the callers are invoking the barrier with the same arguments."),
    "unknown process": ("JaxRuntimeError: INVALID_ARGUMENT: Unexpected task (5) that is not "
                        "in the cluster called the barrier. Barrier Id: nobody::0"),
}, {  # process 1
    "arrives after the timeout": BARRIER_TIMEOUT,
    "own subset": "None",
    "not a participant": ("JaxRuntimeError: INVALID_ARGUMENT: A non-participating task (1) "
                          "called the barrier: theirs::0"),
}]


@pytest.fixture(scope="module")
def xjax_kv_outputs(tmp_path_factory):
    return _run_job(tmp_path_factory.mktemp("kv"), KV_AND_BARRIERS, 2)


def test_key_value_store_and_barriers_across_processes(xjax_kv_outputs):
    for pid, stdout in enumerate(xjax_kv_outputs):
        assert _lines(stdout) == {**KV_EXPECTED_BOTH, **KV_EXPECTED[pid]}


def test_key_value_store_and_barriers_match_jax(tmp_path, xjax_kv_outputs):
    pytest.importorskip("jax")
    jax_outputs = _run_job(tmp_path, KV_AND_BARRIERS, 2, lib="jax")
    assert jax_outputs == xjax_kv_outputs


# -- joining and leaving

def test_initialize_times_out_when_a_process_never_comes():
    port = _free_port()
    start = time.monotonic()
    with pytest.raises(xjax.errors.JaxRuntimeError,
                       match=r"^DEADLINE_EXCEEDED: Deadline Exceeded: 1/2 processes connected"
                             r".*missing process ids: \[1\]"):
        xjax.distributed.initialize(f"localhost:{port}", 2, 0, initialization_timeout=0.5)
    assert time.monotonic() - start < 5
    assert not xjax.distributed.is_initialized()
    assert xjax.distributed.global_state.service is None
    with socket.socket() as again:  # the service stopped: its port is free
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("", port))


def test_public_devices_is_the_process_aware_one():
    # the process-aware one, which raises in a multi-process job
    assert xjax.devices is api_devices.devices
    assert xjax.devices() == xjax.local_devices()


# -- the service and client in one process (threads stand for processes)

@pytest.fixture
def job():
    service = CoordinationService("localhost:0", 2)
    address = f"localhost:{service.port}"
    clients = [DistributedRuntimeClient(address, i, init_timeout=5, shutdown_timeout=0.3)
               for i in range(2)]
    joining = [threading.Thread(target=c.connect) for c in clients]
    for t in joining:
        t.start()
    for t in joining:
        t.join()
    yield clients
    for c in clients:
        c._close()
    service.shutdown()


def test_shutdown_barrier_times_out_when_another_process_stays(job):
    with pytest.raises(xjax.errors.JaxRuntimeError,
                       match=r"^INTERNAL: Shutdown barrier has failed.\nBarrier result: "
                             r"'DEADLINE_EXCEEDED: Barrier timed out. Id: Shutdown::0"):
        job[0].shutdown()
    with pytest.raises(xjax.errors.JaxRuntimeError, match="^FAILED_PRECONDITION: .*shut down"):
        job[0].key_value_try_get("k")  # closed all the same


def test_a_process_that_leaves_is_no_longer_live(job):
    assert sorted(job[1].get_live_nodes([0, 1])) == [0, 1]
    job[0]._close()
    deadline = time.monotonic() + 5
    while sorted(job[1].get_live_nodes([0, 1])) != [1] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(job[1].get_live_nodes([0, 1])) == [1]


def test_concurrent_blocking_gets_each_wait_on_the_service(job):
    results = []
    waiting = [threading.Thread(target=lambda k=k: results.append(
        job[1].blocking_key_value_get(k, 5000))) for k in ("x", "y")]
    for t in waiting:
        t.start()
    time.sleep(0.1)
    job[0].key_value_set("y", "Y")
    job[0].key_value_set("x", "X")
    for t in waiting:
        t.join()
    assert sorted(results) == ["X", "Y"]


def test_client_checks_argument_types(job):
    with pytest.raises(TypeError):
        job[0].key_value_set("k", 5)
    with pytest.raises(TypeError):
        job[0].key_value_set_bytes("k", "text")


@pytest.mark.parametrize("ms, text", [(0, "0"), (300, "300ms"), (1500, "1.5s"), (5000, "5s"),
                                      (60500, "1m0.5s"), (3_600_000, "1h")])
def test_durations_read_as_the_coordination_service_writes_them(ms, text):
    assert format_duration_ms(ms) == text


# -- multihost_utils over the coordination service

MULTIHOST = """
import numpy as np
from xjax.experimental import multihost_utils as mh
value = {"a": np.arange(2) + 10 * PID, "s": np.float32(PID)}
out("stacked", lambda: {k: v.tolist() for k, v in mh.process_allgather(value).items()})
out("tiled", lambda: mh.process_allgather(np.arange(2) + 10 * PID, tiled=True).tolist())
out("bf16", lambda: str(mh.process_allgather(jax.numpy.ones(2, jax.numpy.bfloat16)).dtype))
out("from 0", lambda: mh.broadcast_one_to_all(np.full(2, PID)).tolist())
out("from 2", lambda: mh.broadcast_one_to_all(np.full(2, PID), is_source=PID == 2).tolist())
out("sync", lambda: mh.sync_global_devices("step"))
out("equal", lambda: mh.assert_equal(np.arange(3)))
out("unequal", lambda: mh.assert_equal(np.int32(PID), "differs"))
out("global array", lambda: mh.host_local_array_to_global_array(np.ones(2), None, None))
"""


def test_multihost_utils_exchange_through_the_service(tmp_path):
    outputs = [_lines(o) for o in _run_job(tmp_path, MULTIHOST, 3)]
    for out in outputs:
        assert out["stacked"] == repr({"a": [[0, 1], [10, 11], [20, 21]], "s": [0.0, 1.0, 2.0]})
        assert out["tiled"] == repr([0, 1, 10, 11, 20, 21])
        assert out["bf16"] == "'bfloat16'"
        assert out["from 0"] == repr([0, 0])
        assert out["from 2"] == repr([2, 2])
        assert out["sync"] == out["equal"] == "None"
        assert out["unequal"].startswith("AssertionError: differs")
        assert out["global array"].startswith("NotImplementedError: host_local_array_to_"
                                              "global_array")
