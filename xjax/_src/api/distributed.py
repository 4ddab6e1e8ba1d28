"""``xjax.distributed``: the multi-process runtime's entry points, as ``jax.distributed``.

``initialize`` validates its arguments as JAX does. In a job of one process there is nothing
to coordinate: it records that the system is up. In a job of several processes (on one
machine or several) process 0 starts a coordination service and every process connects to
it, as in JAX. Then these work across the processes:

- ``xjax.process_index()`` and ``xjax.process_count()``;
- the coordination client ``global_state.client``, with JAX's ``DistributedRuntimeClient``
  methods: a key-value store (``key_value_set``, ``blocking_key_value_get``,
  ``key_value_try_get``, ``key_value_dir_get``, ``key_value_delete``,
  ``key_value_increment``, with ``_bytes`` variants), barriers (``wait_at_barrier``) and
  ``get_live_nodes``, which libraries use to synchronize hosts (checkpointing);
- computation on each process's own devices (``xjax.local_devices()``).

What does not work is computation across processes: the global device list
(``xjax.devices()``, ``xjax.device_count()`` raise NotImplementedError), and collectives or
arrays spanning processes. xjax's CPU backend (OpenXLA's PJRT CPU plugin) has no
cross-process collectives; a GPU plugin would need the job passed to ``PJRT_Client_Create``
(``node_id``, ``num_nodes`` and key-value callbacks onto this store), which xjax's runtime
does not pass.

Unlike JAX, ``initialize`` may come after computations: xjax's backend does not depend on a
distributed client, so the order does not matter. Where JAX aborts the process (no peer
within ``initialization_timeout``, a failed shutdown barrier), xjax raises
:class:`xjax.errors.JaxRuntimeError`.

>>> import xjax
>>> xjax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
>>> xjax.distributed.is_initialized()
True
>>> xjax.distributed.shutdown()
>>> xjax.distributed.is_initialized()
False
"""

from __future__ import annotations

import atexit
import os
import warnings

from xjax._src.runtime.client import set_process_index
from xjax._src.runtime.coordination import CoordinationService, DistributedRuntimeClient

__all__ = ["initialize", "is_initialized", "shutdown"]


class _State:
    """What ``initialize`` recorded (JAX keeps the same in ``distributed.global_state``):
    the ids, and in a job of several processes the ``client`` of the coordination service
    (every process) and the ``service`` itself (process 0)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.initialized = False
        self.process_id = 0
        self.num_processes = 1
        self.coordinator_address = None
        self.partition_index = None
        self.client = None
        self.service = None


global_state = _State()


def _check_ids(coordinator_address, num_processes, process_id):
    """JAX's checks, in its order and with its messages."""
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError("process_id must be a nonnegative int. "
                        f"Got process_id={process_id} of type {type(process_id)}.")
    if not isinstance(num_processes, int):
        raise TypeError("num_processes must be a positive int. "
                        f"Got num_processes={num_processes} of type {type(num_processes)}.")
    if not 0 <= process_id < num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                         f"num_processes. Got process_id={process_id}, "
                         f"num_processes={num_processes}.")


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids=None,
               cluster_detection_method: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None, slice_index: int | None = None,
               partition_index: int | None = None) -> None:
    """Initialize the distributed system for this process (JAX's signature).

    With several processes, process 0 starts the coordination service, every process
    connects to it, and ``initialize`` returns once all have connected.

    Parameters
    ----------
    coordinator_address : str
        ``host:port`` of process 0's coordination service (default: the
        ``JAX_COORDINATOR_ADDRESS`` environment variable).
    num_processes : int
        The number of processes in the job.
    process_id : int
        This process's id, from 0 to ``num_processes - 1``.
    local_device_ids : int or sequence of int, optional
        Not supported (xjax does not restrict the devices a process sees).
    cluster_detection_method : str, optional
        None or ``"deactivate"``: xjax detects no cluster (Slurm, Open MPI, TPU, mpi4py),
        so the three arguments above must be given.
    initialization_timeout : int
        Seconds to wait for the service to come up and for every process to connect.
    heartbeat_timeout_seconds : int
        Accepted; a process that dies is seen when its connection closes.
    shutdown_timeout_seconds : int
        Seconds :func:`shutdown` waits for the other processes.
    coordinator_bind_address : str, optional
        Where process 0's service listens (default: ``JAX_COORDINATOR_BIND_ADDRESS``, else
        every interface on the coordinator address's port, ``[::]:port``, as JAX).
    slice_index : int, optional
        Deprecated name of ``partition_index`` (DeprecationWarning, as JAX).
    partition_index : int, optional
        Recorded (default: ``JAX_PARTITION_INDEX``).

    Raises
    ------
    ValueError, TypeError
        For missing or invalid ids, as JAX.
    RuntimeError
        If already initialized.
    NotImplementedError
        For ``local_device_ids`` or cluster auto-detection.
    xjax.errors.JaxRuntimeError
        ``DEADLINE_EXCEEDED`` if not every process connected within
        ``initialization_timeout`` (JAX aborts the process instead); ``UNAVAILABLE`` if
        process 0 cannot listen on the bind address.
    """
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if cluster_detection_method not in (None, "deactivate"):
        raise NotImplementedError(
            f"cluster_detection_method={cluster_detection_method!r}: xjax detects no "
            "cluster; pass coordinator_address, num_processes and process_id")
    _check_ids(coordinator_address, num_processes, process_id)
    _check_local_device_ids(local_device_ids)
    if global_state.initialized:
        raise RuntimeError("distributed.initialize should only be called once.")
    partition_index = _partition_index(partition_index, slice_index)
    if num_processes > 1:
        bind_address = (coordinator_bind_address
                        or os.environ.get("JAX_COORDINATOR_BIND_ADDRESS")
                        or "[::]:" + coordinator_address.rsplit(":", 1)[1])
        global_state.client, global_state.service = _join_job(
            coordinator_address, bind_address, num_processes, process_id,
            initialization_timeout, shutdown_timeout_seconds)
    global_state.initialized = True
    global_state.coordinator_address = coordinator_address
    global_state.process_id, global_state.num_processes = process_id, num_processes
    global_state.partition_index = partition_index
    set_process_index(process_id)  # what this process's devices report


def _check_local_device_ids(local_device_ids) -> None:
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    if local_device_ids is None and os.environ.get("JAX_LOCAL_DEVICE_IDS"):
        local_device_ids = [int(i) for i in os.environ["JAX_LOCAL_DEVICE_IDS"].split(",")]
    if local_device_ids:
        raise NotImplementedError(
            f"local_device_ids={list(local_device_ids)}: xjax does not restrict the devices a "
            "process sees; leave it unset")


def _partition_index(partition_index, slice_index):
    if partition_index is None:
        if slice_index is not None:
            warnings.warn("`slice_index` has been deprecated. Please use `partition_index` "
                          "instead.", DeprecationWarning, stacklevel=3)
        partition_index = slice_index
    if partition_index is None and os.environ.get("JAX_PARTITION_INDEX") is not None:
        partition_index = int(os.environ["JAX_PARTITION_INDEX"])
    return partition_index


def _join_job(coordinator_address, bind_address, num_processes, process_id,
              initialization_timeout, shutdown_timeout_seconds):
    """Start the service (process 0) and connect this process's client to it; return
    ``(client, service or None)``. Nothing is left running if joining fails."""
    service = CoordinationService(bind_address, num_processes) if process_id == 0 else None
    client = DistributedRuntimeClient(coordinator_address, process_id,
                                      init_timeout=initialization_timeout,
                                      shutdown_timeout=shutdown_timeout_seconds)
    try:
        client.connect()
    except BaseException:
        if service is not None:
            service.shutdown()
        raise
    return client, service


def is_initialized() -> bool:
    """Whether :func:`initialize` has run (and :func:`shutdown` has not since)."""
    return global_state.initialized


def shutdown() -> None:
    """Shut the distributed system down; does nothing if it is not running.

    In a job of several processes, wait at the shutdown barrier until every process has
    called ``shutdown`` (at most ``shutdown_timeout_seconds``), then close the client and,
    in process 0, stop the coordination service. It also runs at interpreter exit, as JAX's.

    Raises
    ------
    xjax.errors.JaxRuntimeError
        ``INTERNAL: Shutdown barrier has failed. ...`` if some process did not shut down in
        time; the system is shut down all the same (JAX aborts every process instead).
    """
    client, service = global_state.client, global_state.service
    global_state.reset()
    set_process_index(0)
    try:
        if client is not None:
            client.shutdown()
    finally:
        if service is not None:
            service.shutdown()


# A job of several processes leaves the others waiting at the shutdown barrier unless each
# process shuts down; JAX does it at exit too.
atexit.register(shutdown)
