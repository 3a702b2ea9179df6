"""Logical CPU devices, each with one long-lived executor thread.

The number of CPU devices comes from ``JAXLITE_NUM_CPU_DEVICES`` or from
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (default 1), read when the backend is
first used (as JAX does), so a program may set the variable after ``import jaxlite``.

Every device owns one daemon worker thread fed by a queue (never a thread per call).
``run_on_devices`` hands one task to each device and waits for all of them; NumPy releases
the GIL in its big kernels, so N devices on N cores run in parallel.
"""
from __future__ import annotations

import contextlib
import os
import queue
import re
import sys
import threading

from jaxlite._src.config import config
from jaxlite._src.runtime.blas import single_threaded_blas

__all__ = ["CpuDevice", "devices", "local_devices", "device_count", "local_device_count",
           "default_backend", "process_index", "process_count", "process_indices", "backend",
           "get_backend",
           "run_on_devices", "current_device", "default_device", "backend_started",
           "install_distributed_backend", "reset_backend"]


class CpuDevice:
    """A logical CPU device, printed as JAX prints it: ``CpuDevice(id=0)``."""
    __slots__ = ("id", "_executor", "process_index")
    platform = "cpu"
    device_kind = "cpu"
    memory_kind = None

    def __init__(self, id: int, process_index: int = 0):
        self.id = id
        self.process_index = process_index
        self._executor = None

    @property
    def client(self):
        return backend()

    @property
    def host_id(self):
        return self.process_index

    @property
    def local_hardware_id(self):
        return self.id - sum(backend().counts[:self.process_index])   # id in its process

    @property
    def coords(self):
        return (self.id,)

    @property
    def core_on_chip(self):
        return 0

    def addressable_memories(self):
        """The memories this device can address: its device memory, pinned and unpinned host
        memory (all host RAM on CPU)."""
        return [_Memory(self, k) for k in _MEMORY_KINDS]

    def default_memory(self):
        """The device's default memory (kind 'device')."""
        return _Memory(self, "device")

    def memory(self, kind):
        """The memory of ``kind`` this device addresses."""
        if kind not in _MEMORY_KINDS:
            from jaxlite._src.core.errors import JaxRuntimeError
            raise JaxRuntimeError(
                f"INVALID_ARGUMENT: Could not find memory addressable by device cpu. Device "
                f"cpu can address the following memory kinds: {', '.join(_MEMORY_KINDS)}. Got "
                f"memory kind: {kind}")
        return _Memory(self, kind)

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"

    def __eq__(self, other):
        return type(other) is CpuDevice and other.id == self.id

    def __hash__(self):
        return hash(("cpu", self.id))

    def __lt__(self, other):
        return self.id < other.id

    def __reduce__(self):
        return (_device_by_id, (self.id,))


_MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")
_MEMORY_NAMES = {"device": ("CPU_DEVICE", "CpuDeviceMemory"),
                 "pinned_host": ("PINNED_HOST", "PinnedHostMemory"),
                 "unpinned_host": ("UNPINNED_HOST", "UnpinnedHostMemory")}


class _Memory:
    """A memory space of a device (``device.default_memory()``); numbered as XLA:CPU numbers
    them (three per device)."""
    __slots__ = ("device", "kind")

    @property
    def process_index(self):
        return self.device.process_index

    def __init__(self, device, kind="device"):
        self.device = device
        self.kind = kind

    @property
    def id(self):
        return 3 * self.device.id + _MEMORY_KINDS.index(self.kind)

    def addressable_by_devices(self):
        """The devices that address this memory."""
        return [self.device]

    def __repr__(self):
        return f"{_MEMORY_NAMES[self.kind][0]}_{self.id}"

    def __str__(self):
        return (f"{_MEMORY_NAMES[self.kind][1]}(id={self.id}, "
                f"process_index={self.device.process_index}, client=cpu)")

    def __eq__(self, other):
        return isinstance(other, _Memory) and other.device == self.device and \
            other.kind == self.kind

    def __hash__(self):
        return hash(("memory", self.device.id, self.kind))


def _device_by_id(i):
    return backend().devices[i]


# -- the executor threads --------------------------------------------------------------------

_worker_state = threading.local()


def current_device():
    """The device whose executor thread is running the caller (None outside device threads)."""
    return getattr(_worker_state, "device", None)


class _Latch:
    """Counts finished tasks of one ``run_on_devices`` call and wakes the caller at zero."""
    __slots__ = ("count", "lock", "done")

    def __init__(self, n):
        self.count = n
        self.lock = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()

    def arrive(self):
        with self.lock:
            self.count -= 1
            last = self.count == 0
        if last:
            self.done.release()


def _worker(device, q):
    _worker_state.device = device
    while True:
        item = q.get()
        if item is None:
            return
        fn, args, results, errors, i, latch = item
        try:
            results[i] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            errors[i] = (e, sys.exc_info()[2])
        finally:
            latch.arrive()


def _executor(device):
    ex = device._executor
    if ex is None:
        with _start_lock:
            ex = device._executor
            if ex is None:
                q = queue.SimpleQueue()
                t = threading.Thread(target=_worker, args=(device, q), daemon=True,
                                     name=f"jaxlite-device-{device.id}")
                t.start()
                ex = device._executor = q
    return ex


_start_lock = threading.Lock()
_nothing = contextlib.nullcontext()


def run_on_devices(devs, fn, args_per_device):
    """Run ``fn(*args_per_device[i])`` on the executor thread of ``devs[i]`` for every i, wait
    for all, and return the list of results.

    When tasks fail, the first *primary* error is raised (errors with a true
    ``_jaxlite_secondary`` attribute, such as a collective released because another device
    failed, are only raised when nothing else failed), with its original traceback.
    A task aimed at the device whose thread is calling runs inline (no self-deadlock), and
    so does the task of a single device (as that device: ``current_device()`` tells).
    """
    n = len(devs)
    me = current_device()
    if n == 1:       # one device: its task runs here, as that device (no thread hand-off)
        _worker_state.device = devs[0]
        try:
            return [fn(*args_per_device[0])]
        finally:
            _worker_state.device = me
    results = [None] * n
    errors = [None] * n
    latch = _Latch(n)
    inline = []
    with single_threaded_blas() if n > 1 else _nothing:
        for i, (d, a) in enumerate(zip(devs, args_per_device)):
            if d is me:
                inline.append(i)
                continue
            _executor(d).put((fn, a, results, errors, i, latch))
        for i in inline:
            try:
                results[i] = fn(*args_per_device[i])
            except BaseException as e:  # noqa: BLE001
                errors[i] = (e, sys.exc_info()[2])
            finally:
                latch.arrive()
        latch.done.acquire()
    failed = [e for e in errors if e is not None]
    if failed:
        primary = [e for e in failed if not getattr(e[0], "_jaxlite_secondary", False)]
        exc, tb = (primary or failed)[0]
        raise exc.with_traceback(tb)
    return results


# -- the backend -------------------------------------------------------------------------------

def _num_devices() -> int:
    if config.jax_num_cpu_devices > 0:
        return int(config.jax_num_cpu_devices)
    n = os.environ.get("JAXLITE_NUM_CPU_DEVICES")
    if n:
        try:
            return max(1, int(n))
        except ValueError:
            raise ValueError(f"JAXLITE_NUM_CPU_DEVICES must be a positive integer, got "
                             f"{n!r}") from None
    m = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
    return max(1, int(m.group(1))) if m else 1


class CpuBackend:
    """The CPU client (``jax.lib.xla_bridge.get_backend()``): its platform and devices.

    ``counts`` is the number of devices of every process (``jax.distributed``): device ids
    are global, numbered process by process; only this process's devices run here."""
    platform = "cpu"
    platform_version = "jaxlite cpu"
    runtime_type = "jaxlite"

    def __init__(self, n, process=0, counts=None):
        counts = list(counts) if counts is not None else [n]
        self.counts = counts
        self._process = process
        self.first_local_id = sum(counts[:process])
        self.devices_list = [CpuDevice(sum(counts[:p]) + i, p)
                             for p, c in enumerate(counts) for i in range(c)]
        self.local_list = [d for d in self.devices_list if d.process_index == process]

    @property
    def devices(self):
        return self.devices_list

    def device_count(self):
        """Number of devices of this backend (over all processes)."""
        return len(self.devices_list)

    def local_device_count(self):
        """Number of devices attached to this process."""
        return len(self.local_list)

    def local_devices(self):
        """The devices attached to this process."""
        return list(self.local_list)

    def process_index(self):
        """This process's index (0 without jax.distributed)."""
        return self._process

    def process_count(self):
        """The number of processes (1 without jax.distributed)."""
        return len(self.counts)

    def __repr__(self):
        return f"<jaxlite CpuBackend with {len(self.devices_list)} device(s)>"


_backend = []
_backend_lock = threading.Lock()


def _check_num_cpu_devices(value):
    """``jax_num_cpu_devices`` can change only before the backend exists (as in JAX)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"jax_num_cpu_devices expects an int, got {value!r}")
    if _backend and value != _backend[0].local_device_count():
        raise RuntimeError("jax_num_cpu_devices config should be updated before backends "
                           "are initialized i.e. before any JAX operation is executed. You "
                           "should initialize this config immediately after `import jax`.")


config.add_validator("jax_num_cpu_devices", _check_num_cpu_devices)


def backend() -> CpuBackend:
    """The CPU backend, created (and the device count read) on first use."""
    if _backend:
        return _backend[0]
    with _backend_lock:
        if not _backend:
            _backend.append(CpuBackend(_num_devices()))
    return _backend[0]


def backend_started() -> bool:
    """Whether the backend exists already (jax.distributed must start before it)."""
    return bool(_backend)


def install_distributed_backend(process, counts):
    """Create the backend of a multi-process run: ``counts[p]`` devices in process ``p``,
    this process being ``process`` (called by ``jax.distributed.initialize``)."""
    with _backend_lock:
        if _backend:
            raise RuntimeError("jax.distributed.initialize() must be called before any JAX "
                               "calls that might initialise the XLA backend. This includes "
                               "any computation, but also calls to jax.devices, "
                               "jax.device_put, and others.")
        _backend.append(CpuBackend(counts[process], process, counts))


def reset_backend():
    """Forget the backend (``jax.distributed.shutdown``): the next use creates a
    single-process one."""
    with _backend_lock:
        _backend.clear()
    _global_default[0] = None


def get_backend(platform=None):
    """The backend for ``platform`` (only ``'cpu'`` exists in jaxlite)."""
    _check_backend(platform)
    return backend()


def devices(backend=None):
    """All devices (all CPU devices in jaxlite)."""
    _check_backend(backend)
    return list(globals()["backend"]().devices_list)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices attached to this process (or to process ``process_index``)."""
    _check_backend(backend)
    b = globals()["backend"]()
    if host_id is not None and process_index is None:
        process_index = host_id
    if process_index is None or process_index == b.process_index():
        return list(b.local_list)
    if not 0 <= process_index < b.process_count():
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in b.devices_list if d.process_index == process_index]


def device_count(backend=None):
    """Number of devices."""
    _check_backend(backend)
    return len(globals()["backend"]().devices_list)


def local_device_count(backend=None):
    """Number of devices attached to this process."""
    _check_backend(backend)
    return len(globals()["backend"]().local_list)


def default_backend():
    """The default backend's platform name: always ``'cpu'``."""
    return "cpu"


def process_index(backend=None):
    """This process's index among all processes (0 without jaxlite.distributed)."""
    b = _backend
    return b[0]._process if b else 0


def process_count(backend=None):
    """The number of processes (1 without jaxlite.distributed)."""
    b = _backend
    return len(b[0].counts) if b else 1


def process_indices(backend=None):
    """The indices of all processes (``[0]`` without jaxlite.distributed)."""
    return list(range(process_count(backend)))


def _check_backend(backend):
    if backend is None or backend == "cpu" or hasattr(backend, "platform"):
        return
    if isinstance(backend, str) and backend in ("gpu", "cuda", "rocm", "tpu", "METAL"):
        raise RuntimeError(f"Backend '{backend}' failed to initialize: jaxlite only has the "
                           f"'cpu' backend. Available backends are ['cpu']")
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['cpu']")


# -- the default device ------------------------------------------------------------------------

_default = threading.local()
_global_default = [None]


def default_device():
    """The device uncommitted computations run on: ``jax.default_device`` if set, else
    device 0."""
    d = getattr(_default, "stack", None)
    if d:
        return d[-1]
    d = _global_default[0]
    return d if d is not None else backend().local_list[0]


@contextlib.contextmanager
def default_device_context(device):
    """Context manager placing uncommitted computations on ``device`` (``jax.default_device``)."""
    if isinstance(device, str):
        device = devices(device)[0]
    stack = getattr(_default, "stack", None)
    if stack is None:
        stack = _default.stack = []
    stack.append(device)
    try:
        yield
    finally:
        stack.pop()


def set_global_default_device(device):
    """Set the process-wide default device (``jax.config.update('jax_default_device', d)``)."""
    if isinstance(device, str):
        device = devices(device)[0]
    elif device is not None and not isinstance(device, CpuDevice):
        raise ValueError(f"jax_default_device must be a Device, a platform name or None, got "
                         f"{device!r}")
    _global_default[0] = device


def _on_config_change(name):
    if name == "jax_default_device":
        set_global_default_device(config.read("jax_default_device"))


config.add_listener(_on_config_change)
