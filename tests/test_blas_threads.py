"""BLAS threads on a busy machine (runtime/blas.py): before a large matmul jaxlite gives
OpenBLAS only the cores other processes leave free, and never while devices run."""
from __future__ import annotations

import pytest

from jaxlite._src.runtime import blas


class _Lib:
    def __init__(self, n):
        self.num_threads = n

    def set_num_threads(self, n):
        self.num_threads = n


@pytest.fixture
def fake(monkeypatch):
    lib = _Lib(2)
    monkeypatch.setattr(blas, "_libs", lambda: [lib])
    c = blas._Contention()
    c.cpus, c.ok = 2, True
    clock = {"busy": 0.0, "own": 0.0}
    monkeypatch.setattr(blas._Contention, "_busy", staticmethod(lambda: clock["busy"]))
    monkeypatch.setattr(blas.os, "times", lambda: (clock["own"], 0.0, 0, 0, 0))
    return c, lib, clock


def test_busy_cores_elsewhere_leave_one_thread(fake):
    c, lib, clock = fake
    c.look(0.0)                      # first look: a baseline
    clock["busy"] += 1.9             # the machine was busy 1.9 core-seconds over 1 s,
    clock["own"] += 0.1              # of which this process used 0.1
    c.look(1.0)
    assert lib.num_threads == 1
    clock["busy"] += 1.0             # then only this process works (one core)
    clock["own"] += 1.0
    c.look(2.0)
    assert lib.num_threads == 2      # back to the pool's own size


def test_devices_running_keep_blas_at_one_thread(fake):
    c, lib, clock = fake
    c.look(0.0)
    with blas.single_threaded_blas():
        assert lib.num_threads == 1
        clock["busy"] += 0.1
        c.look(1.0)                  # no look while devices hold BLAS at one thread
        assert lib.num_threads == 1
    assert lib.num_threads == 2


def test_adapt_reads_the_machine_at_most_every_quarter_second(fake, monkeypatch):
    c, lib, clock = fake
    monkeypatch.setattr(blas, "_contention", c)
    looks = []
    monkeypatch.setattr(c, "look", lambda t: looks.append(t) or setattr(c, "next", t + 0.25))
    for _ in range(100):
        blas.adapt()
    assert len(looks) == 1
