"""``xjax.distributed``: the multi-process runtime's entry points, as ``jax.distributed``.

xjax runs in one process. ``initialize`` accepts what JAX accepts for a job of one process
(``num_processes=1, process_id=0`` and a coordinator address), validates its arguments as
JAX does, and records that the system is up; there is no coordinator service to start, as
nothing else will connect. A job of several processes raises NotImplementedError.

Unlike JAX, ``initialize`` may come after computations: xjax's backend does not depend on a
distributed client, so the order does not matter.

>>> import xjax
>>> xjax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
>>> xjax.distributed.is_initialized()
True
>>> xjax.distributed.shutdown()
>>> xjax.distributed.is_initialized()
False
"""

from __future__ import annotations

import os
import warnings

__all__ = ["initialize", "is_initialized", "shutdown"]


class _State:
    """What ``initialize`` recorded (JAX keeps the same in ``distributed.global_state``)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.initialized = False
        self.process_id = 0
        self.num_processes = 1
        self.coordinator_address = None
        self.partition_index = None


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

    Parameters
    ----------
    coordinator_address : str
        ``host:port`` of process 0 (default: the ``JAX_COORDINATOR_ADDRESS`` environment
        variable).
    num_processes : int
        The number of processes: xjax supports 1.
    process_id : int
        This process's id: 0.
    local_device_ids : int or sequence of int, optional
        Not supported (xjax does not restrict the devices a process sees).
    cluster_detection_method : str, optional
        None or ``"deactivate"``: xjax detects no cluster (Slurm, Open MPI, TPU, mpi4py),
        so the three arguments above must be given.
    initialization_timeout, heartbeat_timeout_seconds, shutdown_timeout_seconds : int
        Accepted; nothing is waited for in one process.
    coordinator_bind_address : str, optional
        Accepted; no coordinator service is started.
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
        For more than one process, ``local_device_ids``, or cluster auto-detection.
    """
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if cluster_detection_method not in (None, "deactivate"):
        raise NotImplementedError(
            f"cluster_detection_method={cluster_detection_method!r}: xjax runs one process "
            "and detects no cluster; pass coordinator_address, num_processes=1 and "
            "process_id=0")
    _check_ids(coordinator_address, num_processes, process_id)
    if num_processes > 1:
        raise NotImplementedError(
            f"jax.distributed.initialize with num_processes={num_processes}: xjax runs a "
            "single process; a multi-process job needs a distributed runtime (a coordinator "
            "service and cross-process collectives), which xjax does not have")
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    if local_device_ids is None and os.environ.get("JAX_LOCAL_DEVICE_IDS"):
        local_device_ids = [int(i) for i in os.environ["JAX_LOCAL_DEVICE_IDS"].split(",")]
    if local_device_ids:
        raise NotImplementedError(
            f"local_device_ids={list(local_device_ids)}: xjax does not restrict the devices a "
            "process sees; leave it unset")
    if global_state.initialized:
        raise RuntimeError("distributed.initialize should only be called once.")
    if partition_index is None:
        if slice_index is not None:
            warnings.warn("`slice_index` has been deprecated. Please use `partition_index` "
                          "instead.", DeprecationWarning, stacklevel=2)
        partition_index = slice_index
    if partition_index is None and os.environ.get("JAX_PARTITION_INDEX") is not None:
        partition_index = int(os.environ["JAX_PARTITION_INDEX"])
    global_state.initialized = True
    global_state.coordinator_address = coordinator_address
    global_state.process_id, global_state.num_processes = process_id, num_processes
    global_state.partition_index = partition_index


def is_initialized() -> bool:
    """Whether :func:`initialize` has run (and :func:`shutdown` has not since)."""
    return global_state.initialized


def shutdown() -> None:
    """Shut the distributed system down; does nothing if it is not running."""
    global_state.reset()
