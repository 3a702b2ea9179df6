"""A bound on tier 2's on-disk kernel cache (issue 19, item 4).

Each numba kernel lives in the cache directory as ``k_<hash>.py`` with numba's compiled code
beside it in ``__pycache__/k_<hash>.*``. Every program with a new cluster adds one, so
without a bound the directory grows for ever. After writing a new kernel, ``evict`` keeps
the directory within ``JAXLITE_CACHE_MAX_KERNELS`` kernels (default 2000) and
``JAXLITE_CACHE_MAX_MB`` megabytes (default 512), removing the least recently used kernels
first: a kernel's source file is touched whenever a process loads it from disk, so its
modification time is its last use. ``0`` turns a limit off.

Removing a kernel another process is about to load is harmless: that process compiles it
again (in memory if the file is gone).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading

__all__ = ["limits", "touch", "evict", "cache_dir", "source_key", "load_module"]

_load_lock = threading.Lock()


def cache_dir():
    """Where tier 2 keeps its kernels' source (and numba its compiled code)."""
    root = os.environ.get("JAXLITE_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "jaxlite")
    return os.path.join(root, "kernels")


def source_key(source):
    """The cache key of a kernel module's source text."""
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def load_module(source):
    """The module of ``source`` (numba code with ``cache=True``), imported from the file
    ``k_<hash>.py`` of the cache directory so that numba's disk cache sits beside it;
    compiled in memory, without numba's disk cache, when the directory is not writable."""
    key = source_key(source)
    modname = f"jaxlite_kernel_{key}"
    with _load_lock:
        mod = sys.modules.get(modname)
        if mod is not None:
            return mod
        d = cache_dir()
        path = os.path.join(d, f"k_{key}.py")
        try:
            os.makedirs(d, exist_ok=True)
            written = not os.path.exists(path)
            if written:
                tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
                with open(tmp, "w") as f:
                    f.write(source)
                os.replace(tmp, path)
            else:
                touch(path)    # its last use, for the eviction order
            spec = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod
            try:
                spec.loader.exec_module(mod)
            except BaseException:
                del sys.modules[modname]
                raise
            if written:   # (numba wrote its compiled code beside it by now)
                evict(d, keep=key)
        except OSError:   # no writable cache: compile in memory, without numba's disk cache
            mod = type(sys)(modname)
            sys.modules[modname] = mod
            exec(compile(source.replace("cache=True", "cache=False"), f"<{modname}>", "exec"),
                 mod.__dict__)
        return mod


def limits():
    """(max kernels, max bytes) from the environment (0: no limit)."""
    def read(name, default):
        try:
            return max(0.0, float(os.environ.get(name, default)))
        except ValueError:
            raise ValueError(f"{name} must be a number, got {os.environ.get(name)!r}. Fix: "
                             f"set it to a number (0 for no limit) or unset it.") from None
    return int(read("JAXLITE_CACHE_MAX_KERNELS", 2000)), \
        int(read("JAXLITE_CACHE_MAX_MB", 512) * (1 << 20))


def touch(path):
    """Mark the kernel at ``path`` as just used (its modification time)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _entries(d):
    """{hash: [last use, bytes, [files]]} of the kernels in directory ``d``."""
    found = {}
    try:
        names = os.listdir(d)
    except OSError:
        return found
    for n in names:
        if n.startswith("k_") and n.endswith(".py"):
            try:
                st = os.stat(os.path.join(d, n))
            except OSError:
                continue
            found[n[2:-3]] = [st.st_mtime, st.st_size, [os.path.join(d, n)]]
    pyc = os.path.join(d, "__pycache__")
    try:
        cached = os.listdir(pyc)
    except OSError:
        cached = []
    for n in cached:
        if not n.startswith("k_"):
            continue
        e = found.get(n[2:].split(".", 1)[0])
        if e is None:
            continue   # (an orphan another process may be writing: left alone)
        p = os.path.join(pyc, n)
        try:
            e[1] += os.stat(p).st_size
        except OSError:
            continue
        e[2].append(p)
    return found


def evict(d, keep=None):
    """Remove the least recently used kernels of directory ``d`` until it is within the
    limits (never the kernel ``keep``, the hash just written). Returns how many went."""
    max_n, max_bytes = limits()
    if not max_n and not max_bytes:
        return 0
    found = _entries(d)
    total = sum(e[1] for e in found.values())
    n = len(found)
    if (not max_n or n <= max_n) and (not max_bytes or total <= max_bytes):
        return 0
    removed = 0
    for h, (_, size, files) in sorted(found.items(), key=lambda kv: kv[1][0]):
        if (not max_n or n <= max_n) and (not max_bytes or total <= max_bytes):
            break
        if h == keep:
            continue
        for p in files:
            try:
                os.remove(p)
            except OSError:
                pass
        n -= 1
        total -= size
        removed += 1
    return removed
