"""jax.debug.visualize_sharding / visualize_array_sharding print JAX's tables exactly.

Three kinds of checks:
* goldens: what JAX 0.10.2 (NamedSharding, SingleDeviceSharding) and JAX 0.4.30 (the seeds'
  PositionalSharding) printed, recorded by tests/goldens/make_visualize_goldens.py together with
  each sharding's devices_indices_map; the sharding is rebuilt from that map, so these run
  without JAX;
* live: where JAX is installed, a subprocess with 8 CPU devices hands real JAX shardings to
  jaxlite and compares with JAX's own output over a sweep of meshes, specs, shapes and options;
* jaxlite's own behaviour where JAX has none to compare with (uneven shards, errors).
"""
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jaxlite._src.debugging.visualize import (tab20b, visualize_array_sharding,
                                              visualize_sharding)

GOLDENS = pathlib.Path(__file__).resolve().parent / "goldens" / "visualize"
RICH_ENV = ("FORCE_COLOR", "NO_COLOR", "COLORTERM", "TERM", "TTY_COMPATIBLE",
            "TTY_INTERACTIVE", "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES")
COLOR_MAPS = {  # the same as in make_visualize_goldens.py
    "ramp": lambda x: (x, 0.5, 1.0 - x, 1.0),
    "grey": lambda x: (0.2 + 0.8 * x, 0.2 + 0.8 * x, 0.2 + 0.8 * x),
}
RANK_ERROR = "`visualize_sharding` only works for shapes with 1 and 2 dimensions."


class FakeDevice:
    """A device as visualize_sharding sees it: an id and a platform."""

    def __init__(self, id, platform="cpu"):
        self.id, self.platform = id, platform

    def __repr__(self):
        return f"FakeDevice(id={self.id})"


class FakeSharding:
    """A sharding given by its devices_indices_map (device -> one index per dimension)."""

    def __init__(self, shape, indices):
        self.shape, self.indices = tuple(shape), indices

    @property
    def device_set(self):
        return set(self.indices)

    def devices_indices_map(self, shape):
        assert tuple(shape) == self.shape, (shape, self.shape)
        return dict(self.indices)


def grid_sharding(shape, blocks):
    """A FakeSharding from {device id: ((start, stop) or None per dimension)}."""
    return FakeSharding(shape, {
        FakeDevice(i): tuple(slice(None) if r is None else slice(*r) for r in ranges)
        for i, ranges in blocks.items()})


def _golden_cases():
    cases = []
    for path in sorted(GOLDENS.glob("jax-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            cases.append(pytest.param(case, id=f"{doc['jax_version']}:{case['name']}"))
    return cases


def _sharding_from_golden(case):
    devices = {}
    for dev_id, platform, ranges in case["devices"]:
        devices[FakeDevice(dev_id, platform)] = tuple(slice(a, b) for a, b in ranges)
    return FakeSharding(case["shape"], devices)


@pytest.fixture
def rich_env(monkeypatch):
    """Clears the environment variables rich reads, then sets the given ones."""
    def set_env(env):
        for k in RICH_ENV:
            monkeypatch.delenv(k, raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    return set_env


def test_goldens_exist():
    names = {p.name for p in GOLDENS.glob("jax-*.json")}
    assert {"jax-0.10.2.json", "jax-0.4.30.json"} <= names


@pytest.mark.parametrize("case", _golden_cases())
def test_matches_jax_golden(case, capsys, rich_env):
    rich_env(case["env"])
    kwargs = dict(case["kwargs"])
    if case["color_map"] is not None:
        kwargs["color_map"] = COLOR_MAPS[case["color_map"]]
    sharding = _sharding_from_golden(case)
    if "error" in case:
        err_type, message = case["error"]
        with pytest.raises(Exception) as info:
            visualize_sharding(tuple(case["shape"]), sharding, **kwargs)
        assert type(info.value).__name__ == err_type
        assert str(info.value).startswith(message)
        assert capsys.readouterr().out == ""
        return
    visualize_sharding(tuple(case["shape"]), sharding, **kwargs)
    assert capsys.readouterr().out == "\n".join(case["output"])


def test_seed_000_tables(capsys, rich_env):
    """Two of seed 000's pictures, spelled out."""
    rich_env({})
    devs = [FakeDevice(i) for i in range(8)]
    by_rows = FakeSharding((8192, 8192), {
        d: (slice(1024 * i, 1024 * (i + 1)), slice(None)) for i, d in enumerate(devs)})
    visualize_sharding((8192, 8192), by_rows)
    rows = "\n├───────────────────────┤\n".join(f"│         CPU {i}         │" for i in range(8))
    assert capsys.readouterr().out == (
        "┌───────────────────────┐\n" + rows + "\n└───────────────────────┘\n")
    # replicate(axis=0, keepdims=True) of the (4, 2) sharding: two columns, each on 4 devices.
    cols = FakeSharding((8192, 8192), {
        d: (slice(None), slice(4096 * (i % 2), 4096 * (i % 2 + 1))) for i, d in enumerate(devs)})
    visualize_sharding((8192, 8192), cols)
    blank = "│           │           │\n"
    assert capsys.readouterr().out == (
        "┌───────────┬───────────┐\n" + blank * 4 + "│CPU 0,2,4,6│CPU 1,3,5,7│\n" + blank * 4
        + "└───────────┴───────────┘\n")


# --- jaxlite's own behaviour -----------------------------------------------------------------

def test_labels_sort_ids_and_join_with_commas(capsys, rich_env):
    rich_env({})
    s = grid_sharding((4,), {7: [None], 2: [None], 5: [None], 0: [None]})
    visualize_sharding((4,), s)
    assert capsys.readouterr().out == "┌───────────┐\n│CPU 0,2,5,7│\n└───────────┘\n"


def test_platform_is_upper_cased(capsys, rich_env):
    rich_env({})
    s = FakeSharding((2,), {FakeDevice(0, "tpu"): (slice(0, 1),),
                            FakeDevice(1, "tpu"): (slice(1, 2),)})
    visualize_sharding((2,), s)
    assert capsys.readouterr().out == (
        "┌───────┬───────┐\n│ TPU 0 │ TPU 1 │\n└───────┴───────┘\n")


def test_int_indices_are_one_element_slices(capsys, rich_env):
    rich_env({})
    as_ints = FakeSharding((2, 4), {FakeDevice(i): (i, slice(None)) for i in range(2)})
    as_slices = grid_sharding((2, 4), {0: [(0, 1), None], 1: [(1, 2), None]})
    visualize_sharding((2, 4), as_ints)
    first = capsys.readouterr().out
    visualize_sharding((2, 4), as_slices)
    assert first == capsys.readouterr().out
    assert "CPU 0" in first and "CPU 1" in first


def test_uneven_blocks_are_drawn_to_size(capsys, rich_env):
    """JAX fails on uneven shards (AssertionError/KeyError); jaxlite draws each to its size."""
    rich_env({})
    s = grid_sharding((7,), {0: [(0, 2)], 1: [(2, 4)], 2: [(4, 6)], 3: [(6, 7)]})
    visualize_sharding((7,), s)
    assert capsys.readouterr().out == (
        "┌───────┬───────┬───────┬───────┐\n"
        "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │\n"
        "└───────┴───────┴───────┴───────┘\n")
    # 2-D: rows of 6 and 2 elements (heights int(0.75 * 10) = 7 and int(0.25 * 10) = 2).
    s = grid_sharding((8, 8), {0: [(0, 6), None], 1: [(6, 8), None]})
    visualize_sharding((8, 8), s)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "┌" + "─" * 23 + "┐"
    assert out[1:7] == ["│" + " " * 23 + "│"] * 2 + ["│         CPU 0         │"] + [
        "│" + " " * 23 + "│"] * 3
    assert out[7:] == ["├" + "─" * 23 + "┤", "│         CPU 1         │", "└" + "─" * 23 + "┘"]


def test_empty_shard_gets_its_own_minimal_cell(capsys, rich_env):
    rich_env({})
    s = grid_sharding((3,), {0: [(0, 1)], 1: [(1, 2)], 2: [(2, 3)], 3: [(3, 3)]})
    visualize_sharding((3,), s)
    assert capsys.readouterr().out.splitlines()[1] == "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │"


@pytest.mark.parametrize("shape", [(), (2, 2, 2), (1, 2, 3, 4)])
def test_rank_error(shape, capsys):
    s = FakeSharding(shape, {FakeDevice(0): tuple(slice(None) for _ in shape)})
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions") as e:
        visualize_sharding(shape, s)
    assert str(e.value).startswith(RANK_ERROR)
    assert "reshape" in str(e.value) and str(shape) in str(e.value)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("shape", [(0,), (0, 4), (4, 0)])
def test_zero_sized_shape_error(shape):
    s = FakeSharding(shape, {FakeDevice(0): tuple(slice(None) for _ in shape)})
    with pytest.raises(ValueError, match="has no elements"):
        visualize_sharding(shape, s)


def test_strided_slice_error():
    s = FakeSharding((8,), {FakeDevice(0): (slice(0, 8, 2),)})
    with pytest.raises(ValueError, match="strided slice"):
        visualize_sharding((8,), s)


def test_non_grid_error():
    # Devices 0 and 1 split the rows; devices 2 and 3 split the columns of the same array.
    s = grid_sharding((4, 4), {0: [(0, 2), (0, 4)], 1: [(2, 4), (0, 4)],
                               2: [(0, 4), (0, 2)], 3: [(0, 4), (2, 4)]})
    with pytest.raises(ValueError, match="grid"):
        visualize_sharding((4, 4), s)


def test_wrong_number_of_indices_error():
    s = FakeSharding((4, 4), {FakeDevice(0): (slice(None),)})
    with pytest.raises(ValueError, match="one slice per dimension"):
        visualize_sharding((4, 4), s)


def test_default_colour_map_is_builtin_tab20b(capsys, rich_env):
    """In a colour terminal the default colours are tab20b's even without matplotlib."""
    rich_env({"FORCE_COLOR": "1", "COLORTERM": "truecolor"})
    s = grid_sharding((2,), {0: [(0, 1)], 1: [(1, 2)]})
    visualize_sharding((2,), s)
    out = capsys.readouterr().out
    # 2 cells take linspace(0, 1, 2)[0] twice (the colour order steps by n // 2 + 1 = 2).
    assert set(re.findall(r"48;2;[0-9;]*m", out)) == {"48;2;57;59;121m"}
    assert "38;2;255;255;255" in out
    assert "┌" not in out  # no borders in colour
    # 4 cells take values 0, 1, 2/3, 1/3: tab20b colours 0, 19, 13 and 6 (black text on 6 only).
    s = grid_sharding((4,), {i: [(i, i + 1)] for i in range(4)})
    visualize_sharding((4,), s)
    out = capsys.readouterr().out
    cells = re.findall(r"\x1b\[38;2;(\d+;\d+;\d+);48;2;(\d+;\d+;\d+)m[^\x1b]*CPU (\d)", out)
    assert cells == [("255;255;255", "57;59;121", "0"), ("255;255;255", "222;158;214", "1"),
                     ("255;255;255", "173;73;74", "2"), ("0;0;0", "181;207;107", "3")]


def test_use_color_false_in_a_terminal_draws_borders(capsys, rich_env):
    rich_env({"FORCE_COLOR": "1", "COLORTERM": "truecolor"})
    s = grid_sharding((2,), {0: [(0, 1)], 1: [(1, 2)]})
    visualize_sharding((2,), s, use_color=False)
    out = capsys.readouterr().out
    assert "┌" in out and "48;2" not in out


def test_tab20b_values():
    assert tab20b(0.0) == (57 / 255, 59 / 255, 121 / 255, 1.0)
    assert tab20b(1.0) == (222 / 255, 158 / 255, 214 / 255, 1.0)
    assert tab20b(0.5) == tab20b(10 / 20) != tab20b(0.49)


def test_tab20b_matches_matplotlib():
    mpl = pytest.importorskip("matplotlib")
    cmap = mpl.colormaps["tab20b"]
    for x in list(np.linspace(0, 1, 997)) + [k / n for n in range(1, 40) for k in range(n + 1)]:
        assert tab20b(x) == tuple(float(v) for v in cmap(x)), x


# --- visualize_array_sharding ----------------------------------------------------------------

def test_visualize_array_sharding_uses_shape_and_sharding(capsys, rich_env):
    rich_env({})

    class Arr:
        shape = (8, 8)
        sharding = grid_sharding((8, 8), {i: [(2 * (i // 2), 2 * (i // 2) + 2), (4 * (i % 2), 4 * (i % 2) + 4)]
                                          for i in range(8)})
    visualize_array_sharding(Arr(), scale=0.5, min_width=4)
    got = capsys.readouterr().out
    visualize_sharding((8, 8), Arr.sharding, scale=0.5, min_width=4)
    assert got == capsys.readouterr().out
    assert "CPU 7" in got


def test_visualize_array_sharding_of_a_jaxlite_array(capsys, rich_env):
    rich_env({})
    import jaxlite.numpy as jnp
    visualize_array_sharding(jnp.arange(8.0))
    assert capsys.readouterr().out == "┌───────┐\n│ CPU 0 │\n└───────┘\n"
    visualize_array_sharding(jnp.ones((8192, 8192 // 64)))
    assert "CPU 0" in capsys.readouterr().out


def test_visualize_array_sharding_of_numpy_array_error():
    with pytest.raises(TypeError, match="device_put"):
        visualize_array_sharding(np.arange(8.0))


def test_visualize_array_sharding_under_jit_error():
    import jaxlite
    import jaxlite.numpy as jnp

    def f(x):
        visualize_array_sharding(x)
        return x

    with pytest.raises(TypeError, match="traced value"):
        jaxlite.jit(f)(jnp.ones(4))


def test_signature_matches_jax():
    jax = pytest.importorskip("jax")
    import inspect
    assert (inspect.signature(visualize_sharding).parameters.keys()
            == inspect.signature(jax.debug.visualize_sharding).parameters.keys())
    for name, p in inspect.signature(jax.debug.visualize_sharding).parameters.items():
        assert inspect.signature(visualize_sharding).parameters[name].default == p.default
        assert inspect.signature(visualize_sharding).parameters[name].kind == p.kind


# --- live comparison with real JAX -----------------------------------------------------------

LIVE = textwrap.dedent(r"""
    import contextlib, io, itertools, json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
    from jaxlite._src.debugging.visualize import visualize_sharding as mine

    def run(f, *args, **kwargs):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                f(*args, **kwargs)
            except Exception as e:
                return "error", type(e).__name__, str(e).split(" Got ")[0]
        return "ok", buf.getvalue()

    devs = np.array(jax.devices())
    assert len(devs) == 8, devs
    meshes = [Mesh(devs, ("x",)), Mesh(devs.reshape(4, 2), ("x", "y")),
              Mesh(devs.reshape(2, 4), ("x", "y")), Mesh(devs.reshape(2, 2, 2), ("x", "y", "z")),
              Mesh(devs[[6, 2, 0, 4, 7, 1, 3, 5]].reshape(4, 2), ("x", "y")),
              Mesh(devs[:6].reshape(3, 2), ("x", "y"))]
    specs = [P(), P("x"), P("y"), P("z"), P("x", "y"), P("y", "x"), P(None, "x"), P(None, "y"),
             P(("x", "y")), P(("y", "x")), P(None, ("x", "y")), P("x", "z"), P(("x", "z"), "y")]
    shapes = [(8,), (48,), (8, 8), (48, 24), (8, 384), (384, 8), (2, 2, 2), ()]
    kwargs = [{}, {"scale": 1.7, "min_width": 4, "max_width": 50},
              {"scale": 0.5, "max_width": 16}]
    envs = [{}, {"FORCE_COLOR": "1", "COLORTERM": "truecolor"}]
    ramp = lambda x: (x, 0.5, 1.0 - x, 1.0)
    shardings = [SingleDeviceSharding(devs[5])]
    for mesh, spec in itertools.product(meshes, specs):
        try:
            shardings.append(NamedSharding(mesh, spec))
        except Exception:
            pass
    n, bad = 0, []
    for env in envs:
        for k in ("FORCE_COLOR", "NO_COLOR", "COLORTERM", "TERM", "TTY_COMPATIBLE"):
            os.environ.pop(k, None)
        os.environ.update(env)
        for s, shape, kw in itertools.product(shardings, shapes, kwargs):
            try:
                s.devices_indices_map(shape)
            except Exception:
                continue
            if env:
                kw = dict(kw, color_map=ramp)
            want = run(jax.debug.visualize_sharding, shape, s, **kw)
            got = run(mine, shape, s, **kw)
            n += 1
            if want != got:
                bad.append([repr(s), shape, repr(kw), env, want, got])
    print(json.dumps({"n": n, "bad": bad[:5], "n_bad": len(bad)}))
""")


def test_live_against_jax():
    pytest.importorskip("jax")
    import os
    env = {k: v for k, v in os.environ.items() if k not in RICH_ENV and k != "XLA_FLAGS"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, "-c", LIVE], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n"] > 300
    assert result["n_bad"] == 0, json.dumps(result["bad"], indent=1, ensure_ascii=False)
