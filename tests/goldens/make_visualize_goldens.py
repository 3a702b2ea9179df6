"""Records what real JAX prints for jax.debug.visualize_sharding, as goldens for jaxlite's tests.

Run it with an interpreter that has JAX (it sets up 8 CPU devices itself), from anywhere:

    python tests/goldens/make_visualize_goldens.py

It writes ``tests/goldens/visualize/jax-<version>.json``: with JAX 0.10.2 the NamedSharding /
SingleDeviceSharding cases (plain, and in a colour terminal); with JAX 0.4.30 the seed-era
PositionalSharding cases of seeds 000, 002 and 003. The terminal cases with the default colour
map need matplotlib importable (JAX takes its "tab20b" colour map from it and prints no colours
without it); install it beside JAX or put it on PYTHONPATH.

Each case records the shape, the keyword arguments, the environment variables set for rich
(FORCE_COLOR, COLORTERM, TERM), the sharding's ``devices_indices_map(shape)`` in JAX's order as
``[device id, platform, [[start, stop] per dimension]]`` (``null`` for a slice bound of
``None``), and JAX's printed lines, or the error it raised. tests/test_visualize_sharding.py
rebuilds each sharding from its map, so the comparison runs without JAX.
"""
import contextlib
import io
import json
import os
import pathlib
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
from jax.sharding import SingleDeviceSharding  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "visualize"
RICH_ENV = ("FORCE_COLOR", "NO_COLOR", "COLORTERM", "TERM", "TTY_COMPATIBLE",
            "TTY_INTERACTIVE", "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES")

# Colour maps other than the default, by name (the test defines the same ones).
COLOR_MAPS = {
    "ramp": lambda x: (x, 0.5, 1.0 - x, 1.0),
    "grey": lambda x: (0.2 + 0.8 * x, 0.2 + 0.8 * x, 0.2 + 0.8 * x),
}

TRUECOLOR = {"FORCE_COLOR": "1", "COLORTERM": "truecolor"}
COLOR256 = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
COLOR16 = {"FORCE_COLOR": "1", "TERM": "xterm"}


class GridSharding:
    """A stand-in sharding for shapes no real sharding of 8 devices gives (many blocks)."""

    def __init__(self, n_rows, n_cols, shape, platform_device):
        self.n_rows, self.n_cols, self.shape = n_rows, n_cols, shape
        self.devices = [type("D", (), {"id": i, "platform": platform_device.platform})()
                        for i in range(n_rows * n_cols)]
        self.device_set = set(self.devices)

    def devices_indices_map(self, shape):
        rows, cols = shape[0] // self.n_rows, shape[-1] // self.n_cols
        out = {}
        for k, d in enumerate(self.devices):
            r, c = divmod(k, self.n_cols)
            col = slice(c * cols, (c + 1) * cols)
            out[d] = (slice(r * rows, (r + 1) * rows), col) if len(shape) == 2 else (col,)
        return out


def _encode_index(idx):
    if isinstance(idx, int):
        return [idx, idx + 1]
    return [idx.start, idx.stop]


def record(cases, name, shape, sharding, env=None, color_map=None, **kwargs):
    """Runs JAX's visualize_sharding and appends the case to ``cases``."""
    env = env or {}
    saved = {k: os.environ.pop(k) for k in RICH_ENV if k in os.environ}
    os.environ.update(env)
    call_kwargs = dict(kwargs)
    if color_map is not None:
        call_kwargs["color_map"] = COLOR_MAPS[color_map]
    buf = io.StringIO()
    case = {"name": name, "shape": list(shape), "kwargs": kwargs, "color_map": color_map,
            "env": env}
    try:
        try:
            case["devices"] = [[d.id, d.platform, [_encode_index(i) for i in idx]]
                               for d, idx in sharding.devices_indices_map(tuple(shape)).items()]
        except Exception as e:  # noqa: BLE001
            raise SystemExit(f"{name}: devices_indices_map failed: {e!r}")
        with contextlib.redirect_stdout(buf):
            jax.debug.visualize_sharding(shape, sharding, **call_kwargs)
        case["output"] = buf.getvalue().split("\n")
    except Exception as e:  # noqa: BLE001
        case["error"] = [type(e).__name__, str(e)]
    finally:
        for k in env:
            os.environ.pop(k, None)
        os.environ.update(saved)
    assert name not in {c["name"] for c in cases}, name
    cases.append(case)


def named_cases():
    """NamedSharding and SingleDeviceSharding cases (JAX 0.10.2)."""
    cases = []
    devs = np.array(jax.devices())
    assert len(devs) == 8, "needs 8 CPU devices: run in a fresh process"
    meshes = {
        "8": Mesh(devs, ("x",)),
        "4x2": Mesh(devs.reshape(4, 2), ("x", "y")),
        "2x4": Mesh(devs.reshape(2, 4), ("x", "y")),
        "2x2x2": Mesh(devs.reshape(2, 2, 2), ("x", "y", "z")),
        "4x2rev": Mesh(devs[::-1].reshape(4, 2), ("x", "y")),
        "8shuf": Mesh(devs[[3, 1, 7, 5, 0, 2, 6, 4]], ("x",)),
        "3": Mesh(devs[:3], ("x",)),
        "2x3": Mesh(devs[:6].reshape(2, 3), ("x", "y")),
    }

    def named(mesh, spec, shape, **kw):
        s = NamedSharding(meshes[mesh], spec)
        extra = "".join(f" {k}={v}" for k, v in sorted(kw.items()))
        record(cases, f"mesh{mesh} {spec} {tuple(shape)}{extra}", shape, s, **kw)

    # SingleDeviceSharding (seed 000's first cell: an unsharded array on CPU 0).
    for dev, shape in [(0, (8192, 8192)), (3, (8, 8)), (3, (8,)), (3, (16, 4)), (3, (4, 16)),
                       (5, (1,))]:
        record(cases, f"single{dev} {shape}", shape, SingleDeviceSharding(devs[dev]))

    # 1-D shapes.
    for shape in [(8,), (16,), (64,), (1024,)]:
        for spec in [P("x"), P()]:
            named("8", spec, shape)
    for shape in [(1,), (2,), (3,), (5,), (10,)]:
        named("8", P(), shape)
    for spec in [P("x"), P("y"), P(("x", "y")), P(("y", "x"))]:
        named("4x2", spec, (8,))
    named("2x2x2", P(("x", "y", "z")), (16,))
    named("2x2x2", P("z"), (8,))
    named("3", P("x"), (6,))
    named("8shuf", P("x"), (8,))

    # 2-D shapes over every mesh.
    specs_2d = {
        "8": [P("x"), P(None, "x"), P(), P("x", None)],
        "4x2": [P("x"), P("y"), P("x", "y"), P("y", "x"), P(None, "x"), P(None, "y"),
                P(("x", "y")), P(("y", "x")), P(None, ("x", "y")), P(), P("x", None)],
        "2x4": [P("x"), P("y"), P("x", "y"), P("y", "x"), P(None, "y"), P(("x", "y"))],
        "2x2x2": [P("x", "y"), P(("x", "y"), "z"), P("z"), P(None, ("x", "z")), P("y", "x"),
                  P(("z", "y", "x")), P("x", ("y", "z"))],
        "4x2rev": [P("x", "y"), P("x"), P(None, "y")],
        "8shuf": [P("x"), P(None, "x")],
        "3": [P("x"), P(None, "x")],
        "2x3": [P("x", "y"), P("y", "x"), P("y")],
    }
    for mesh, specs in specs_2d.items():
        for spec in specs:
            shapes = [(24, 24)] if mesh in ("3", "2x3") else [(8, 8)]
            for shape in shapes:
                named(mesh, spec, shape)
    for spec in [P("x", "y"), P("x"), P(None, "y"), P(("x", "y"))]:
        for shape in [(16, 8), (8, 16), (64, 8), (8, 64), (8192, 784), (784, 8192), (24, 40)]:
            named("4x2", spec, shape)
    for shape in [(8, 512), (512, 8), (8, 4096), (4096, 4096), (8192, 16)]:
        named("8", P(None, "x"), shape)
        named("8", P("x"), shape)
    named("4x2", P("x", None), (8, 4))  # seed 003: shard_map's result c

    # Keyword arguments.
    for kw in [dict(scale=0.5), dict(scale=2), dict(scale=1.5), dict(scale=0.25),
               dict(scale=0.1), dict(scale=3), dict(min_width=0), dict(min_width=3),
               dict(min_width=15), dict(min_width=30), dict(max_width=20), dict(max_width=40),
               dict(max_width=120), dict(min_width=30, max_width=20),
               dict(scale=2, min_width=12, max_width=60)]:
        named("4x2", P("x", "y"), (8, 8), **kw)
        named("8", P("x"), (8,), **kw)
        named("8", P(None, "x"), (8, 8), **kw)
        named("8", P(), (16, 8), **kw)
    named("8", P(), (8, 8), max_width=15)  # the label wraps
    named("8", P(), (8,), max_width=12)
    named("4x2", P("x", "y"), (8, 8), use_color=False)

    # Rank errors.
    for shape in [(), (2, 2, 2), (2, 2, 2, 2)]:
        named("8", P(), shape)

    # Many blocks (stand-in sharding).
    for n_rows, n_cols, shape in [(6, 6, (36, 36)), (1, 12, (12,)), (5, 4, (20, 8)),
                                  (3, 9, (9, 27))]:
        record(cases, f"grid{n_rows}x{n_cols} {shape}", shape,
               GridSharding(n_rows, n_cols, shape, devs[0]))

    # Colour terminals.
    have_mpl = _have_matplotlib()
    color_cases = [("4x2", P("x", "y"), (8, 8)), ("8", P("x"), (8,)), ("8", P(), (8,)),
                   ("8", P(None, "x"), (8, 8)), ("2x4", P("x", "y"), (8, 8)),
                   ("4x2", P("y"), (8, 8)), ("3", P("x"), (24, 24)), ("2x3", P("x", "y"), (24, 24)),
                   ("2x2x2", P("x", "y"), (8, 8)), ("8", P(), (8, 8))]
    for env_name, env in [("truecolor", TRUECOLOR), ("256", COLOR256), ("16", COLOR16)]:
        for mesh, spec, shape in color_cases:
            if have_mpl:
                named(mesh, spec, shape, env=env)
            named(mesh, spec, shape, env=env, color_map="ramp")
        named("4x2", P("x", "y"), (8, 8), env=env, use_color=False)
        named("8", P(), (8,), env=env, use_color=False)
        named("4x2", P("x"), (8, 8), env=env, color_map="grey")
        named("4x2", P("x", "y"), (8, 8), env=env, color_map="ramp", scale=2, min_width=14)
        named("8", P(None, "x"), (8, 512), env=env, color_map="ramp")
    if have_mpl:
        for n_rows, n_cols, shape in [(6, 6, (36, 36)), (1, 12, (12,))]:
            record(cases, f"grid{n_rows}x{n_cols} {shape} truecolor", shape,
                   GridSharding(n_rows, n_cols, shape, devs[0]), env=TRUECOLOR)
    return cases


def positional_cases():
    """Seed-era PositionalSharding cases (JAX 0.4.30): seeds 000, 002 and 003."""
    from jax.experimental import mesh_utils
    from jax.sharding import PositionalSharding
    cases = []
    assert len(jax.devices()) == 8, "needs 8 CPU devices: run in a fresh process"

    # Seed 000, "Sharding an array across multiple devices".
    sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))
    big = (8192, 8192)
    record(cases, "seed000 x single", big, SingleDeviceSharding(jax.devices()[0]))
    record(cases, "seed000 reshape(8,1)", big, sharding.reshape(8, 1))
    record(cases, "seed000 reshape(4,2)", big, sharding.reshape(4, 2))
    record(cases, "seed000 reshape(1,8)", big, sharding.reshape(1, 8))
    s42 = sharding.reshape(4, 2)
    record(cases, "seed000 replicate(axis=0,keepdims=True)", big,
           s42.replicate(axis=0, keepdims=True))
    record(cases, "seed000 replicate(1)", big, s42.replicate(1))
    # "Computation follows sharding": the shardings jit's outputs get.
    x = jax.device_put(jnp.ones((64, 64)), s42)
    record(cases, "seed000 sin output", big, jnp.sin(x).sharding)
    y = jax.device_put(x, s42.replicate(1))
    z = jax.device_put(x, s42.replicate(0))
    record(cases, "seed000 LHS replicate(1)", big, y.sharding)
    record(cases, "seed000 RHS replicate(0)", big, z.sharding)
    record(cases, "seed000 dot output", big, jnp.dot(y, z).sharding)
    # Seed 000, the neural network examples.
    s81 = PositionalSharding(jax.devices()).reshape(8, 1)
    record(cases, "seed000 batch[0] (8,1)", (8192, 784), s81)
    record(cases, "seed000 params[0][0] replicate()", (784, 8192), s81.replicate())
    s42 = s81.reshape(4, 2)
    record(cases, "seed000 batch[0] replicate(1)", (8192, 784), s42.replicate(1))
    record(cases, "seed000 batch[1] replicate(1)", (8192, 10), s42.replicate(1))
    record(cases, "seed000 W2 replicate(0)", big, s42.replicate(0))
    record(cases, "seed000 W3 replicate(0).T", big, s42.replicate(0).T)
    record(cases, "seed000 b2 replicate(0) 1-D", (8192,), s42.replicate(0).reshape(2))
    # Seed 002: xs of shape (8*dc*64, 8*dc*64), dc = 8.
    dmesh = mesh_utils.create_device_mesh((8,))
    sh = PositionalSharding(dmesh)
    xs = (4096, 4096)
    record(cases, "seed002 reshape(-1,1)", xs, sh.reshape((-1, 1)))
    record(cases, "seed002 reshape(1,-1)", xs, sh.reshape(1, -1))
    record(cases, "seed002 reshape(4,-1)", xs, sh.reshape(4, -1))
    record(cases, "seed002 jit out reshape(-1,8)", xs, sh.reshape(-1, 8))
    # Seed 003: shard_map's result c, sharded P('x', None) over a (4, 2) mesh.
    mesh = Mesh(mesh_utils.create_device_mesh((4, 2)), ("x", "y"))
    record(cases, "seed003 c P('x',None)", (8, 4), NamedSharding(mesh, P("x", None)))
    # A few more positional layouts.
    record(cases, "positional (2,4)", (16, 16), sharding.reshape(2, 4))
    record(cases, "positional (2,4).T", (16, 16), sharding.reshape(2, 4).T)
    record(cases, "positional (8,) 1-D", (64,), sharding)
    record(cases, "positional (4,2) replicated 0 and 1", (16, 16), s42.replicate(0).replicate(1))
    record(cases, "positional (4,2) scale 0.5", (16, 16), sharding.reshape(4, 2), scale=0.5)
    return cases


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ModuleNotFoundError:
        print("matplotlib is not importable: skipping the default-colour-map terminal cases "
              "(JAX prints no colours without it)", file=sys.stderr)
        return False


def _dumps(cases):
    """JSON with one line per case field and per printed line, for readable diffs."""
    def dump(v):
        return json.dumps(v, ensure_ascii=False)
    parts = []
    for case in cases:
        fields = [f" {dump(k)}: {dump(v)}" for k, v in case.items() if k != "output"]
        if "output" in case:
            lines = ",\n  ".join(dump(line) for line in case["output"])
            fields.append(f' "output": [\n  {lines}]')
        parts.append("{" + ",\n".join(fields).lstrip() + "}")
    head = (f'{{"jax_version": {dump(jax.__version__)},\n'
            f'"generator": "tests/goldens/make_visualize_goldens.py",\n"cases": [\n')
    return head + ",\n".join(parts) + "\n]}\n"


def main():
    has_positional = hasattr(jax.sharding, "PositionalSharding")
    cases = positional_cases() if has_positional else named_cases()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"jax-{jax.__version__}.json"
    path.write_text(_dumps(cases), encoding="utf-8")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
