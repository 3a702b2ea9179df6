"""The key-value store and barriers of a ``jax.distributed`` run: what JAX's coordination
service offers programs and libraries through ``jax._src.distributed.global_state.client``
(orbax-checkpoint synchronises its processes and passes small messages through it).

jaxlite's processes compute over MPI; this service is separate from that traffic so that any
thread may use it at any time (orbax waits at barriers from background threads while the main
thread runs collectives). Process 0 serves a small store over TCP (on the loopback interface
when every process runs on its machine), started by ``jax.distributed.initialize`` and stopped
by ``shutdown``; every process holds a ``DistributedRuntimeClient`` speaking to it with one
connection per thread. Requests and replies are JSON lines (values travel base64-encoded);
nothing is unpickled.

Semantics and error texts are those of JAX's client (``JaxRuntimeError`` with the status name
first): setting an existing key without ``allow_overwrite`` is ALREADY_EXISTS, reading a
missing key NOT_FOUND, a blocking read or a barrier past its timeout DEADLINE_EXCEEDED. A key
``a/b`` is in the directory ``a``; deleting ``a`` deletes the directory too. Barrier ids may be
reused: each process's k-th wait on an id joins the k-th barrier of that id.
"""
from __future__ import annotations

import base64
import json
import socket
import socketserver
import threading
import time
import weakref

from jaxlite._src.core.errors import JaxRuntimeError

__all__ = ["DistributedRuntimeClient", "client", "start", "stop"]

_state = {"server": None, "client": None}


class _Status(Exception):
    """An error status the store answers with (code name, message)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class _Store:
    """The data of the service (process 0): keys to bytes, and the barriers in progress."""

    def __init__(self, num_processes):
        self.num_processes = num_processes
        self.values = {}
        self.barriers = {}      # instance id -> {"expected", "arrived", "failed"}
        self.cv = threading.Condition()

    def set(self, key, value, allow_overwrite):
        with self.cv:
            if not allow_overwrite and key in self.values:
                raise _Status("ALREADY_EXISTS", f"key {key} already exists.")
            self.values[key] = value
            self.cv.notify_all()

    def try_get(self, key):
        with self.cv:
            if key not in self.values:
                raise _Status("NOT_FOUND", f"Config key {key} not found.")
            return self.values[key]

    def blocking_get(self, key, timeout_ms):
        deadline = time.monotonic() + timeout_ms / 1000
        with self.cv:
            while key not in self.values:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Status("DEADLINE_EXCEEDED", f"GetKeyValue() timed out with key: "
                                                       f"{key} and duration: {timeout_ms}ms")
                self.cv.wait(left)
            return self.values[key]

    def dir_get(self, key):
        prefix = key.rstrip("/") + "/"
        with self.cv:
            return sorted((k, v) for k, v in self.values.items() if k.startswith(prefix))

    def delete(self, key):
        prefix = key.rstrip("/") + "/"
        with self.cv:
            for k in [k for k in self.values if k == key or k.startswith(prefix)]:
                del self.values[k]

    def increment(self, key, increment):
        with self.cv:
            try:
                n = int(self.values.get(key, b"0").decode()) + increment
            except ValueError:
                raise _Status("INVALID_ARGUMENT", f"value of key {key} is not an "
                                                  "integer.") from None
            self.values[key] = str(n).encode()
            self.cv.notify_all()
            return n

    def barrier(self, instance, task, timeout_ms, process_ids):
        expected = set(range(self.num_processes)) if process_ids is None else set(process_ids)
        deadline = time.monotonic() + timeout_ms / 1000
        with self.cv:
            outside = sorted(expected - set(range(self.num_processes)))
            if outside:
                raise _Status("INVALID_ARGUMENT", f"Unexpected task ({outside[0]}) that is "
                                                  f"not in the cluster called the barrier. "
                                                  f"Barrier Id: {instance}")
            if task not in expected:
                raise _Status("INVALID_ARGUMENT", f"Task ({task}) called the barrier "
                                                  f"{instance} but is not one of its tasks "
                                                  f"{sorted(expected)}.")
            b = self.barriers.setdefault(instance, {"expected": expected, "arrived": set(),
                                                    "failed": None})
            b["arrived"].add(task)
            self.cv.notify_all()
            while b["failed"] is None and not b["expected"] <= b["arrived"]:
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = sorted(b["expected"] - b["arrived"])
                    b["failed"] = (f"Barrier timed out. Id: {instance}. This usually happens "
                                   f"because a task triggered the barrier too early or too "
                                   f"slowly. Tasks that did not reach the barrier: {missing}")
                    self.cv.notify_all()
                    break
                self.cv.wait(left)
            if b["failed"] is not None:
                raise _Status("DEADLINE_EXCEEDED", b["failed"])


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"))


class _Handler(socketserver.StreamRequestHandler):
    """One client connection: answers its requests, one JSON line each, in order."""

    def handle(self):
        store = self.server.store
        for line in self.rfile:
            req = json.loads(line)
            op = req["op"]
            try:
                if op == "set":
                    out = store.set(req["key"], _unb64(req["value"]), req["overwrite"])
                elif op == "try_get":
                    out = _b64(store.try_get(req["key"]))
                elif op == "get":
                    out = _b64(store.blocking_get(req["key"], req["timeout_ms"]))
                elif op == "dir_get":
                    out = [[k, _b64(v)] for k, v in store.dir_get(req["key"])]
                elif op == "delete":
                    out = store.delete(req["key"])
                elif op == "increment":
                    out = store.increment(req["key"], req["increment"])
                elif op == "barrier":
                    out = store.barrier(req["id"], req["task"], req["timeout_ms"],
                                        req["process_ids"])
                else:
                    raise _Status("UNIMPLEMENTED", f"unknown request {op!r}")
                reply = {"ok": out}
            except _Status as e:
                reply = {"error": [e.code, e.message]}
            self.wfile.write((json.dumps(reply) + "\n").encode())
            self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Connection:
    """One thread's connection to the service; closed when dropped."""

    def __init__(self, address):
        self.sock = socket.create_connection(address)
        self.rfile = self.sock.makefile("rb")

    def close(self):
        for f in (getattr(self, "rfile", None), getattr(self, "sock", None)):
            if f is not None:
                f.close()

    def __del__(self):
        self.close()


class DistributedRuntimeClient:
    """A process's handle on the run's key-value store and barriers (JAX's
    ``DistributedRuntimeClient``): ``key_value_set[_bytes]``, ``key_value_try_get[_bytes]``,
    ``blocking_key_value_get[_bytes]``, ``key_value_dir_get[_bytes]``, ``key_value_delete``,
    ``key_value_increment`` and ``wait_at_barrier``. Safe to use from several threads."""

    def __init__(self, address, task):
        self._address = tuple(address)
        self._task = task
        self._local = threading.local()
        self._barrier_counts = {}
        self._lock = threading.Lock()
        self._closed = False
        self._conns = weakref.WeakSet()

    # -- transport
    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise JaxRuntimeError("FAILED_PRECONDITION: the distributed runtime client "
                                      "was shut down (jax.distributed.shutdown()).")
            # (held by the thread only: closed when the thread ends, or at shutdown)
            conn = self._local.conn = _Connection(self._address)
            with self._lock:
                self._conns.add(conn)
        return conn

    def _call(self, **req):
        conn = self._conn()
        conn.sock.sendall((json.dumps(req) + "\n").encode())
        line = conn.rfile.readline()
        if not line:
            raise JaxRuntimeError("UNAVAILABLE: the coordination service (process 0) closed "
                                  "the connection.")
        reply = json.loads(line)
        if "error" in reply:
            code, message = reply["error"]
            raise JaxRuntimeError(f"{code}: {message}")
        return reply["ok"]

    def connect(self):
        """Open this thread's connection to the service (done on first use otherwise)."""
        self._conn()

    def shutdown(self):
        """Close every connection of this client."""
        self._closed = True
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            conn.close()

    # -- key-value store
    def key_value_set(self, key: str, value: str, allow_overwrite: bool = False) -> None:
        """Store ``value`` (a str) under ``key``; ALREADY_EXISTS if set, unless
        ``allow_overwrite``."""
        self.key_value_set_bytes(key, value.encode(), allow_overwrite)

    def key_value_set_bytes(self, key: str, value: bytes, allow_overwrite: bool = False):
        """Store the bytes ``value`` under ``key`` (see ``key_value_set``)."""
        self._call(op="set", key=key, value=_b64(bytes(value)), overwrite=bool(allow_overwrite))

    def key_value_try_get(self, key: str) -> str:
        """The value of ``key`` now; NOT_FOUND if unset."""
        return self.key_value_try_get_bytes(key).decode()

    def key_value_try_get_bytes(self, key: str) -> bytes:
        """The value of ``key`` now, as bytes; NOT_FOUND if unset."""
        return _unb64(self._call(op="try_get", key=key))

    def blocking_key_value_get(self, key: str, timeout_in_ms: int) -> str:
        """The value of ``key``, waiting up to ``timeout_in_ms`` for some process to set it
        (DEADLINE_EXCEEDED after)."""
        return self.blocking_key_value_get_bytes(key, timeout_in_ms).decode()

    def blocking_key_value_get_bytes(self, key: str, timeout_in_ms: int) -> bytes:
        """``blocking_key_value_get`` as bytes."""
        return _unb64(self._call(op="get", key=key, timeout_ms=int(timeout_in_ms)))

    def key_value_dir_get(self, key: str) -> list[tuple[str, str]]:
        """The (key, value) pairs of the directory ``key`` (keys starting ``key/``), sorted."""
        return [(k, v.decode()) for k, v in self.key_value_dir_get_bytes(key)]

    def key_value_dir_get_bytes(self, key: str) -> list[tuple[str, bytes]]:
        """``key_value_dir_get`` with bytes values."""
        return [(k, _unb64(v)) for k, v in self._call(op="dir_get", key=key)]

    def key_value_delete(self, key: str) -> None:
        """Delete ``key`` and the directory ``key/`` (nothing if absent)."""
        self._call(op="delete", key=key)

    def key_value_increment(self, key: str, increment: int) -> int:
        """Add ``increment`` to the integer stored at ``key`` (0 if unset); the new value."""
        return self._call(op="increment", key=key, increment=int(increment))

    # -- barriers
    def wait_at_barrier(self, barrier_id: str, timeout_in_ms: int, process_ids=None) -> None:
        """Block until every process (or every one of ``process_ids``) waits at the barrier
        ``barrier_id``; DEADLINE_EXCEEDED ("Barrier timed out") after ``timeout_in_ms``."""
        ids = None if process_ids is None else sorted(int(p) for p in process_ids)
        with self._lock:
            k = self._barrier_counts.get(barrier_id, 0)
            self._barrier_counts[barrier_id] = k + 1
        self._call(op="barrier", id=f"{barrier_id}::{k}", task=self._task,
                   timeout_ms=int(timeout_in_ms), process_ids=ids)


def start(comm, hostnames):
    """Start the service of a run (collective: every process calls it, after MPI is up).
    Process 0 serves; ``comm`` broadcasts its address. ``hostnames``: every process's host
    name (the service listens on loopback only when they are all on one machine)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    address = None
    if rank == 0:
        local = len(set(hostnames)) == 1
        server = _Server(("127.0.0.1" if local else "0.0.0.0", 0), _Handler)
        server.store = _Store(size)
        threading.Thread(target=server.serve_forever, name="jaxlite-coordination",
                         daemon=True).start()
        _state["server"] = server
        port = server.server_address[1]
        address = ("127.0.0.1" if local else socket.gethostname(), port)
    if size > 1:
        address = comm.bcast(address, root=0)
    _state["client"] = DistributedRuntimeClient(address, rank)


def stop():
    """Close this process's client and (process 0) stop the service. Call after a barrier
    of all processes, so that no process still uses it."""
    cl, _state["client"] = _state["client"], None
    if cl is not None:
        cl.shutdown()
    server, _state["server"] = _state["server"], None
    if server is not None:
        server.shutdown()
        server.server_close()


def client():
    """This process's DistributedRuntimeClient (None outside a jax.distributed run)."""
    return _state["client"]
