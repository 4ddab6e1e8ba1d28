"""A coordination service and its client: the key-value store and barriers that the
processes of one job share, as JAX's ``DistributedRuntimeService`` and
``DistributedRuntimeClient`` (OpenXLA's coordination service, reached over gRPC).

Process 0 runs :class:`CoordinationService`, a threaded TCP server; every process,
process 0 included, talks to it through a :class:`DistributedRuntimeClient`, whose methods
have JAX's names, signatures, timeout units (milliseconds) and errors
(:class:`xjax.errors.JaxRuntimeError` with a status-code prefix, e.g.
``NOT_FOUND: Config key k not found.``). Errors were measured with JAX 0.10.2 on CPU.

The wire format is one JSON object per line each way; keys are JSON strings and values
travel as base64, so nothing but data crosses the network (no pickle). A client opens one
connection to register (it stays open while the process is alive, which is what
``get_live_nodes`` reports) and a small pool of connections for requests, so several
threads may block on the service at once. Blocking calls wait on the service (a
``threading.Condition``), not by polling.

Keys are normalized as the coordination service does: leading and trailing slashes are
dropped and repeated slashes collapse (``"/a//b/"`` is ``"a/b"``). A directory ``d`` (or
``d/``) holds the keys that start with ``d/``; deleting ``d`` deletes ``d`` and them.
"""

from __future__ import annotations

import base64
import json
import random
import re
import socket
import socketserver
import threading
import time

from xjax._src.runtime.client import XlaRuntimeError

__all__ = ["CoordinationService", "DistributedRuntimeClient", "format_duration_ms",
           "split_address"]

# Slack added to a socket's timeout beyond what the service itself waits, so a client
# notices a service that stopped answering without cutting off a legitimate reply.
_REPLY_SLACK_S = 30.0
# How long stopping the service waits for connections to finish their last replies.
_DRAIN_S = 2.0
_POLL_S = 0.05  # how soon the accept loop notices that the service is stopping
_RETRY_CONNECT_S = 0.05
_CONNECT_S = 10.0  # to open one more connection once the job is up
_INT32 = (-2**31, 2**31 - 1)
# absl's SimpleAtoi: optional whitespace and sign around ASCII digits.
_ABSL_INT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


class _Status(Exception):
    """A failed request: the status code and text the client raises."""

    def __init__(self, code: str, text: str):
        super().__init__(f"{code}: {text}")
        self.code, self.text = code, text


def _error(code: str, text: str) -> XlaRuntimeError:
    return XlaRuntimeError(f"{code}: {text}")


def split_address(address: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6 host]:port"`` as ``(host, port)``.

    Parameters
    ----------
    address : str
        An address as ``jax.distributed.initialize`` takes it.

    Returns
    -------
    tuple of (str, int)

    Raises
    ------
    ValueError
        If there is no port.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address {address!r} should be host:port")
    return host.strip("[]"), int(port)


def format_duration_ms(ms: int) -> str:
    """A duration written as absl's ``FormatDuration`` (``0``, ``300ms``, ``1.5s``,
    ``1m30s``), which the coordination service's timeout messages use."""
    if ms == 0:
        return "0"
    if abs(ms) < 1000:
        return f"{ms}ms"
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    if ms:
        text += f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return sign + text


def _normalize_key(key: str) -> str:
    return "/".join(part for part in key.split("/") if part)


def _encode(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _decode(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"))


def _send(stream, message: dict) -> None:
    stream.write(json.dumps(message).encode("utf-8") + b"\n")
    stream.flush()


# -- the service ---------------------------------------------------------------------------

class _Barrier:
    """One use of a barrier id: who takes part, who arrived, and how it ended."""

    def __init__(self, name: str, participants: frozenset, deadline: float, first: int):
        self.name, self.participants, self.deadline = name, participants, deadline
        self.first, self.arrived = first, set()
        self.passed, self.failure = False, None

    def timed_out(self) -> _Status:
        missing = "\n".join(str(t) for t in sorted(self.participants - self.arrived))
        return _Status(
            "DEADLINE_EXCEEDED",
            f"Barrier timed out. Id: {self.name}. This usually happens because a task "
            "triggered the barrier too early or too slowly. Please look at the task logs "
            "(both timed out and first task) to debug further.\n# of tasks that reached the "
            f"barrier: {len(self.arrived)}/{len(self.participants)}.\nThe first task at the "
            f"barrier: {self.first}. Some timed out task names:\n{missing}\n")


class _Store:
    """The service's state, guarded by one condition that every change notifies."""

    def __init__(self, num_processes: int):
        self.num_processes = num_processes
        self.changed = threading.Condition()
        self.values: dict[str, bytes] = {}
        self.barriers: dict[str, _Barrier] = {}
        self.barrier_calls: dict[tuple[int, str], int] = {}  # (task, id) -> uses so far
        self.live: dict[int, int] = {}  # task -> incarnation, while its process is connected
        self.stopping = False

    def _wait(self, ready, deadline: float) -> bool:
        """Wait (holding ``changed``) until ``ready()`` or the deadline; raise if the
        service is stopping."""
        while not ready():
            if self.stopping:
                raise _Status("UNAVAILABLE", "the coordination service is shutting down")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.changed.wait(remaining)
        return True

    # Each request is a method named after its "op"; fields arrive as keyword arguments.

    def register(self, task: int, timeout_ms: int) -> dict:
        """Record ``task`` as connected, then wait until every task is."""
        deadline = time.monotonic() + timeout_ms / 1000
        with self.changed:
            if not 0 <= task < self.num_processes:
                raise _Status("INVALID_ARGUMENT", f"Unexpected task ({task}) that is not in "
                              "the cluster tried to connect")
            if task in self.live:
                raise _Status("ALREADY_EXISTS", f"task {task} is already connected to the "
                              "coordination service (two processes with one process_id?)")
            incarnation = random.getrandbits(63)
            self.live[task] = incarnation
            self.changed.notify_all()
            everyone = False
            try:
                everyone = self._wait(lambda: len(self.live) == self.num_processes, deadline)
            finally:
                if not everyone:  # (or stopping) this process gives up: it is not live
                    self.disconnect_locked(task, incarnation)
            if not everyone:
                missing = sorted(set(range(self.num_processes)) - set(self.live) - {task})
                raise _Status("DEADLINE_EXCEEDED", "Deadline Exceeded: "
                              f"{self.num_processes - len(missing)}/{self.num_processes} "
                              "processes connected to the coordination service in time; "
                              f"missing process ids: {missing}")
        return {"incarnation": incarnation}

    def disconnect(self, task: int, incarnation: int) -> None:
        with self.changed:
            self.disconnect_locked(task, incarnation)

    def disconnect_locked(self, task: int, incarnation: int) -> None:
        if self.live.get(task) == incarnation:  # not a newer connection of the same task
            del self.live[task]
            self.changed.notify_all()

    def set(self, key: str, value: str, allow_overwrite: bool) -> None:
        key = _normalize_key(key)
        with self.changed:
            if key in self.values and not allow_overwrite:
                raise _Status("ALREADY_EXISTS", f"key {key} already exists.")
            self.values[key] = _decode(value)
            self.changed.notify_all()

    def get(self, key: str, timeout_ms: int) -> str:
        key = _normalize_key(key)
        with self.changed:
            if not self._wait(lambda: key in self.values,
                              time.monotonic() + timeout_ms / 1000):
                raise _Status("DEADLINE_EXCEEDED", f"GetKeyValue() timed out with key: "
                              f"{key} and duration: {format_duration_ms(timeout_ms)}")
            return _encode(self.values[key])

    def try_get(self, key: str) -> str:
        key = _normalize_key(key)
        with self.changed:
            if key not in self.values:
                raise _Status("NOT_FOUND", f"Config key {key} not found.")
            return _encode(self.values[key])

    def dir_get(self, key: str) -> list:
        prefix = _normalize_key(key) + "/"
        with self.changed:
            return [[k, _encode(v)] for k, v in sorted(self.values.items())
                    if k.startswith(prefix)]

    def delete(self, key: str) -> None:
        key = _normalize_key(key)
        with self.changed:
            for k in [k for k in self.values if k == key or k.startswith(key + "/")]:
                del self.values[k]

    def increment(self, key: str, increment: int) -> int:
        key = _normalize_key(key)
        with self.changed:
            current = 0
            if key in self.values:
                current = _parse_int32(self.values[key])
            self.values[key] = str(current + increment).encode("ascii")
            self.changed.notify_all()
            return current + increment

    def barrier(self, task: int, barrier_id: str, timeout_ms: int,
                process_ids: list | None) -> None:
        with self.changed:
            barrier = self._join_barrier(task, barrier_id, timeout_ms, process_ids)
            if barrier.failure is None and not self._wait(
                    lambda: barrier.passed or barrier.failure is not None, barrier.deadline):
                barrier.failure = barrier.timed_out()
                self.changed.notify_all()
            if barrier.failure is not None:
                raise _Status(barrier.failure.code, barrier.failure.text)

    def _join_barrier(self, task, barrier_id, timeout_ms, process_ids) -> _Barrier:
        """Count this call of ``barrier_id`` by ``task`` and mark it arrived (holding
        ``changed``); the n-th call of an id by each task meets the others' n-th."""
        uses = self.barrier_calls.get((task, barrier_id), 0)
        self.barrier_calls[(task, barrier_id)] = uses + 1
        name = f"{barrier_id}::{uses}"
        participants = frozenset(process_ids or range(self.num_processes))
        for other in sorted(participants):
            if not 0 <= other < self.num_processes:
                raise _Status("INVALID_ARGUMENT", f"Unexpected task ({other}) that is not in "
                              f"the cluster called the barrier. Barrier Id: {name}")
        barrier = self.barriers.get(name)
        if barrier is not None and barrier.participants != participants:
            raise _Status("INVALID_ARGUMENT", "Conflicting tasks specified by different "
                          f"processes for the same barrier: {name}. Check that the callers "
                          "are invoking the barrier with the same arguments.")
        if task not in participants:
            raise _Status("INVALID_ARGUMENT",
                          f"A non-participating task ({task}) called the barrier: {name}")
        if barrier is None:
            barrier = self.barriers[name] = _Barrier(
                name, participants, time.monotonic() + timeout_ms / 1000, task)
        if barrier.failure is None and not barrier.passed \
                and time.monotonic() >= barrier.deadline:
            barrier.failure = barrier.timed_out()  # arrived after the others gave up
        barrier.arrived.add(task)
        if barrier.arrived == barrier.participants and barrier.failure is None:
            barrier.passed = True
            self.changed.notify_all()
        return barrier

    def live_nodes(self, process_ids: list) -> dict:
        with self.changed:
            return {str(t): self.live[t] for t in process_ids if t in self.live}


def _parse_int32(value: bytes) -> int:
    """The stored value as the service's counter reads it (a 32-bit int, absl's syntax)."""
    text = value.decode("utf-8", errors="replace")
    if _ABSL_INT.fullmatch(text) and _INT32[0] <= int(text) <= _INT32[1]:
        return int(text)
    raise _Status("FAILED_PRECONDITION", f'Failed to parse value "{text}" as an integer.')


_OPS = {"register", "set", "get", "try_get", "dir_get", "delete", "increment", "barrier",
        "live_nodes"}


class _Handler(socketserver.StreamRequestHandler):
    """One client connection: requests in, replies out, until the client hangs up."""

    def handle(self):
        registered = None
        try:
            for line in self.rfile:
                reply, registration = self._answer(line)
                registered = registered or registration
                _send(self.wfile, reply)
        except OSError:
            pass  # the client went away (its process ended or was killed)
        finally:
            if registered is not None:  # its registration connection closed: it left
                self.server.store.disconnect(*registered)

    def _answer(self, line: bytes) -> tuple[dict, tuple | None]:
        """The reply to one request line, and ``(task, incarnation)`` if it registered."""
        store = self.server.store
        try:
            request = json.loads(line)
            op = request.pop("op")
            if op not in _OPS:
                raise _Status("UNIMPLEMENTED", f"unknown request {op!r}")
            result = getattr(store, op)(**request)
        except _Status as status:
            return {"ok": False, "code": status.code, "text": status.text}, None
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            return {"ok": False, "code": "INVALID_ARGUMENT", "text": f"bad request: {e}"}, None
        registration = (request["task"], result["incarnation"]) if op == "register" else None
        return {"ok": True, "result": result}, registration


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host: str, port: int, store: _Store):
        self.address_family = _address_family(host)
        self.store = store
        self.connections: set = set()
        self.connections_changed = threading.Condition()
        super().__init__((host, port), _Handler)

    def server_bind(self):
        if self.address_family == socket.AF_INET6:  # "[::]" serves IPv4 clients too
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    def process_request_thread(self, request, client_address):
        with self.connections_changed:
            self.connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_changed:
                self.connections.discard(request)
                self.connections_changed.notify_all()


def _address_family(host: str) -> int:
    try:
        return socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM,
                                  flags=socket.AI_PASSIVE)[0][0]
    except socket.gaierror:
        return socket.AF_INET


class CoordinationService:
    """The coordination service of a job of ``num_processes`` processes, serving on
    ``bind_address`` from a background thread (JAX's ``DistributedRuntimeService``).

    Parameters
    ----------
    bind_address : str
        ``host:port`` to listen on; ``[::]:port`` listens on every interface, IPv4 and IPv6.
        Port 0 picks a free port (see :attr:`port`).
    num_processes : int
        How many processes will connect.

    Raises
    ------
    xjax.errors.JaxRuntimeError
        ``UNAVAILABLE`` if the address cannot be bound (e.g. the port is in use).
    """

    def __init__(self, bind_address: str, num_processes: int):
        host, port = split_address(bind_address)
        self._store = _Store(num_processes)
        try:
            self._server = _Server(host, port, self._store)
        except OSError as e:
            if host == "::":  # no IPv6 here: every IPv4 interface is what was meant
                self._server = self._bind_ipv4(port, e)
            else:
                raise _error("UNAVAILABLE", f"cannot start the coordination service on "
                             f"{bind_address}: {e}") from None
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        args=(_POLL_S,), name="xjax-coordination-service",
                                        daemon=True)
        self._thread.start()

    def _bind_ipv4(self, port: int, ipv6_error: OSError) -> _Server:
        try:
            return _Server("0.0.0.0", port, self._store)
        except OSError as e:
            raise _error("UNAVAILABLE", f"cannot start the coordination service on port "
                         f"{port}: {ipv6_error}; {e}") from None

    @property
    def port(self) -> int:
        """The port the service listens on."""
        return self._server.server_address[1]

    def shutdown(self) -> None:
        """Stop serving: let connections finish their last replies (briefly), then fail
        whatever still waits and close every connection."""
        self._server.shutdown()
        self._server.server_close()
        with self._server.connections_changed:
            self._server.connections_changed.wait_for(lambda: not self._server.connections,
                                                      _DRAIN_S)
        with self._store.changed:
            self._store.stopping = True
            self._store.changed.notify_all()
        with self._server.connections_changed:
            for connection in list(self._server.connections):
                _close_quietly(connection)
        self._thread.join()


def _close_quietly(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side


# -- the client ----------------------------------------------------------------------------

class _Connection:
    """A socket to the service with buffered reading and writing."""

    def __init__(self, sock: socket.socket):
        self.socket = sock
        self.reader = sock.makefile("rb")
        self.writer = sock.makefile("wb")

    def request(self, message: dict, wait_s: float):
        self.socket.settimeout(wait_s + _REPLY_SLACK_S)
        _send(self.writer, message)
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the coordination service closed the connection")
        return json.loads(line)

    def close(self):
        for closable in (self.reader, self.writer, self.socket):
            try:
                closable.close()
            except OSError:
                pass  # closing a socket whose peer already went away


class DistributedRuntimeClient:
    """A process's connection to the coordination service, as JAX's
    ``DistributedRuntimeClient`` (``jax._src.distributed.global_state.client``).

    Parameters
    ----------
    address : str
        ``host:port`` of the service.
    process_id : int
        This process's id (the service's task id).
    init_timeout : float
        Seconds :meth:`connect` waits for the service and for every process to connect.
    shutdown_timeout : float
        Seconds :meth:`shutdown` waits at the shutdown barrier.

    Notes
    -----
    Methods are thread-safe; each call uses a connection of its own from a pool. Failures
    raise :class:`xjax.errors.JaxRuntimeError` whose message starts with the status code
    (``DEADLINE_EXCEEDED``, ``NOT_FOUND``, ``ALREADY_EXISTS``, ``FAILED_PRECONDITION``,
    ``INVALID_ARGUMENT``, ``UNAVAILABLE``), as JAX's.
    """

    def __init__(self, address: str, process_id: int, init_timeout: float = 300,
                 shutdown_timeout: float = 300):
        self.address, self.process_id = address, process_id
        self._endpoint = split_address(address)
        self._init_timeout, self._shutdown_timeout = init_timeout, shutdown_timeout
        self._pool: list[_Connection] = []
        self._pool_lock = threading.Lock()
        self._registration: _Connection | None = None
        self._closed = False

    # -- lifetime

    def connect(self) -> None:
        """Reach the service (retrying until ``init_timeout``), register this process, and
        wait until every process has registered.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``DEADLINE_EXCEEDED`` if the service cannot be reached or some process does not
            connect within ``init_timeout`` (JAX aborts the process instead).
        """
        deadline = time.monotonic() + self._init_timeout
        connection = self._open_until(deadline)
        remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
        reply = self._request(connection, {"op": "register", "task": self.process_id,
                                           "timeout_ms": remaining_ms}, remaining_ms / 1000)
        if reply["ok"]:
            self._registration = connection  # kept open: the service sees this process live
            return
        connection.close()
        raise _error(reply["code"], f"{reply['text']} (initialization_timeout="
                     f"{self._init_timeout:g} s)")

    def _open_until(self, deadline: float) -> _Connection:
        """A new connection, retrying while the service is not up yet (process 0 may
        start after the others)."""
        while True:
            try:
                return self._open(max(deadline - time.monotonic(), _RETRY_CONNECT_S))
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise _error("DEADLINE_EXCEEDED", "Deadline Exceeded: process "
                                 f"{self.process_id} could not reach the coordination service "
                                 f"at {self.address} within {self._init_timeout:g} s: {e}"
                                 ) from None
                time.sleep(_RETRY_CONNECT_S)

    def _open(self, timeout_s: float) -> _Connection:
        return _Connection(socket.create_connection(self._endpoint, timeout_s))

    def shutdown(self) -> None:
        """Wait at the shutdown barrier for every connected process (at most
        ``shutdown_timeout`` seconds), then close this client's connections.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``INTERNAL: Shutdown barrier has failed.`` with the barrier's error, if some
            process did not shut down in time (the client is closed all the same; JAX
            aborts every process instead).
        """
        if self._closed:
            return
        try:
            self.wait_at_barrier("Shutdown", int(self._shutdown_timeout * 1000))
        except XlaRuntimeError as e:
            raise _error("INTERNAL", f"Shutdown barrier has failed.\nBarrier result: '{e}'"
                         ) from None
        finally:
            self._close()

    def _close(self) -> None:
        self._closed = True
        with self._pool_lock:
            connections, self._pool = self._pool, []
        if self._registration is not None:
            connections.append(self._registration)
            self._registration = None
        for connection in connections:
            connection.close()

    # -- requests

    def _call(self, message: dict, wait_s: float = 0.0):
        """Send one request on a pooled connection; return its result or raise its
        status as JAX's error."""
        if self._closed:
            raise _error("FAILED_PRECONDITION", "the distributed runtime client is shut down")
        with self._pool_lock:
            connection = self._pool.pop() if self._pool else None
        if connection is None:
            try:
                connection = self._open(_CONNECT_S)
            except OSError as e:
                raise _error("UNAVAILABLE", "cannot reach the coordination service at "
                             f"{self.address}: {e}") from None
        reply = self._request(connection, message, wait_s)
        with self._pool_lock:
            self._pool.append(connection)
        return _result(reply)

    def _request(self, connection: _Connection, message: dict, wait_s: float) -> dict:
        """The reply to ``message``; a connection that failed is closed, not reused."""
        try:
            return connection.request(message, wait_s)
        except (OSError, ValueError) as e:
            connection.close()
            raise _error("UNAVAILABLE", "lost the connection to the coordination service "
                         f"at {self.address}: {e}") from None

    # -- the key-value store

    def key_value_set(self, key: str, value: str, allow_overwrite: bool = False) -> None:
        """Store ``value`` under ``key``.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``ALREADY_EXISTS: key <key> already exists.`` if it has a value and
            ``allow_overwrite`` is false.
        """
        self.key_value_set_bytes(key, _as_text(value, "key_value_set").encode("utf-8"),
                                 allow_overwrite)

    def key_value_set_bytes(self, key: str, value: bytes,
                            allow_overwrite: bool = False) -> None:
        """Store the bytes ``value`` under ``key`` (see :meth:`key_value_set`)."""
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"key_value_set_bytes(): value must be bytes, got "
                            f"{type(value).__name__}")
        self._call({"op": "set", "key": _as_text(key, "key_value_set_bytes"),
                    "value": _encode(bytes(value)), "allow_overwrite": bool(allow_overwrite)})

    def blocking_key_value_get(self, key: str, timeout_in_ms: int) -> str:
        """The value of ``key``, waiting up to ``timeout_in_ms`` milliseconds for some
        process to set it.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``DEADLINE_EXCEEDED: GetKeyValue() timed out with key: <key> and duration:
            <timeout>``.
        UnicodeDecodeError
            If the value is not UTF-8 (use :meth:`blocking_key_value_get_bytes`).
        """
        return self.blocking_key_value_get_bytes(key, timeout_in_ms).decode("utf-8")

    def blocking_key_value_get_bytes(self, key: str, timeout_in_ms: int) -> bytes:
        """The value of ``key`` as bytes (see :meth:`blocking_key_value_get`)."""
        timeout_in_ms = int(timeout_in_ms)
        return _decode(self._call({"op": "get", "key": _as_text(key, "blocking_key_value_get"),
                                   "timeout_ms": timeout_in_ms}, timeout_in_ms / 1000))

    def key_value_try_get(self, key: str) -> str:
        """The value of ``key``, without waiting.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``NOT_FOUND: Config key <key> not found.``
        """
        return self.key_value_try_get_bytes(key).decode("utf-8")

    def key_value_try_get_bytes(self, key: str) -> bytes:
        """The value of ``key`` as bytes (see :meth:`key_value_try_get`)."""
        return _decode(self._call({"op": "try_get",
                                   "key": _as_text(key, "key_value_try_get")}))

    def key_value_dir_get(self, key: str) -> list[tuple[str, str]]:
        """``(key, value)`` for every key in the directory ``key`` (the keys starting with
        ``key + "/"``; ``"a"`` and ``"a/"`` are the same directory, which holds ``a/b``
        and ``a/b/c`` but neither ``a`` nor ``ab``), sorted by key; empty if none."""
        return [(k, v.decode("utf-8")) for k, v in self.key_value_dir_get_bytes(key)]

    def key_value_dir_get_bytes(self, key: str) -> list[tuple[str, bytes]]:
        """:meth:`key_value_dir_get` with the values as bytes."""
        pairs = self._call({"op": "dir_get", "key": _as_text(key, "key_value_dir_get")})
        return [(k, _decode(v)) for k, v in pairs]

    def key_value_delete(self, key: str) -> None:
        """Delete ``key`` and every key in the directory ``key``; a missing key is no
        error."""
        self._call({"op": "delete", "key": _as_text(key, "key_value_delete")})

    def key_value_increment(self, key: str, increment: int) -> int:
        """Add ``increment`` to the integer stored under ``key`` (0 if unset), atomically;
        return the new value, which is stored as its decimal text.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``FAILED_PRECONDITION: Failed to parse value "<value>" as an integer.`` if the
            stored value is not a 32-bit integer.
        """
        return self._call({"op": "increment", "key": _as_text(key, "key_value_increment"),
                           "increment": int(increment)})

    # -- synchronization

    def wait_at_barrier(self, barrier_id: str, timeout_in_ms: int,
                        process_ids=None) -> None:
        """Wait until every process in ``process_ids`` (default: all) reached the barrier
        ``barrier_id``; the n-th use of an id by each process meets the others' n-th.

        The first process to arrive sets the deadline (``timeout_in_ms`` from then); one
        arriving after the deadline gets the timeout error at once.

        Raises
        ------
        xjax.errors.JaxRuntimeError
            ``DEADLINE_EXCEEDED: Barrier timed out. Id: <id>::<n>. ...`` on a timeout;
            ``INVALID_ARGUMENT`` if processes pass different ``process_ids``, a process
            not in ``process_ids`` calls it, or an id is not a process of the job.
        """
        timeout_in_ms = int(timeout_in_ms)
        ids = None if process_ids is None else [int(i) for i in process_ids]
        self._call({"op": "barrier", "task": self.process_id,
                    "barrier_id": _as_text(barrier_id, "wait_at_barrier"),
                    "timeout_ms": timeout_in_ms, "process_ids": ids}, timeout_in_ms / 1000)

    def get_live_nodes(self, process_ids) -> dict[int, int]:
        """``{process id: incarnation}`` for the processes among ``process_ids`` that are
        connected (the incarnation is a random number each connection draws)."""
        live = self._call({"op": "live_nodes", "process_ids": [int(i) for i in process_ids]})
        return {int(task): incarnation for task, incarnation in live.items()}


def _result(reply: dict):
    if not reply["ok"]:
        raise _error(reply["code"], reply["text"])
    return reply["result"]


def _as_text(value, method: str) -> str:
    # JAX's bindings take str only; raise its TypeError rather than store a repr.
    if not isinstance(value, str):
        raise TypeError(f"{method}(): incompatible function arguments: expected str, got "
                        f"{type(value).__name__}")
    return value
