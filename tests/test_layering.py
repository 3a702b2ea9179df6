"""The import graph of ``jaxlite._src`` follows DESIGN.md's "Layering, as the code is read".

Data flows down: public face -> library (lax, numpy, random, ...) -> api -> interpreters and
compiler -> prims -> runtime -> core -> base (config, pytrees). Every import statement of every
module under ``jaxlite/_src`` is read, function-level (lazy) ones included, and must point at
the module's own layer or one below it; nothing under ``_src`` imports the public face
(``jaxlite``, ``jaxlite.numpy``, ...). On top of the directions, ``_src`` has no import cycles
(lazy imports included) except the few families listed below.

The test only reads the source (``ast``), so it runs in milliseconds and fails with the
offending file, line and edge. A new module outside the listed packages fails too: place it
in ``LAYERS``.
"""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jaxlite"
SRC = "jaxlite._src"

# Layers from the bottom, as prefixes of module names under jaxlite._src (the longest prefix
# wins). A module may import modules of its own layer and of the layers below it.
LAYERS = [
    ("base", ("config", "tree_util", "monitoring", "profiler", "deprecations")),
    ("core", ("core", "traceback_util")),
    ("runtime", ("runtime", "sharding", "cpu_math")),
    # First-order primitives, and the helpers their rules are written with (ad_util,
    # batch_util, operands): they bind primitives, never the interpreters or lax.
    ("prims", ("prims",)),
    # The transformations; they use the prims' helpers (Zero, moveaxis, ...) and bind the few
    # primitives they need (add_any, transpose, broadcast_in_dim).
    ("interpreters", ("interpreters", "compiler")),
    # Higher-order primitives carry jaxprs as parameters: their rules run the interpreters
    # (and the compiler) on them, so they sit above both, as JAX's control flow does.
    ("higher-order prims", ("prims.call", "prims.control", "prims.scan", "prims.custom",
                            "prims.remat", "prims.linear_call", "prims.shard_map",
                            "prims.shard_map_batched",
                            "prims.custom_batching", "prims.callback", "prims.ffi",
                            "prims.custom_partitioning",
                            "prims.composite")),
    ("api", ("api",)),
    # The library, bottom to top.
    ("lax", ("lax",)),
    ("numpy", ("numpy",)),
    ("random", ("random",)),
    ("nn", ("nn",)),
    ("scipy", ("scipy",)),
    ("sparse", ("sparse",)),
    ("applications", ("image", "example_libraries", "flatten_util", "test_util", "debugging",
                      "checkify", "ffi", "typing", "dlpack", "ode", "export",
                      "colocated_python", "array_serialization")),
    # Pallas: kernels over refs traced to jaxprs, run by a generated grid loop; the kernel
    # helpers use lax control flow (pl.when), jnp operators and jax.debug.print.
    ("pallas", ("pallas",)),
    # Running JAX's ecosystem: the extension API (JAX's primitive and rule-table interface
    # over jaxlite's primitive classes), the private ``jax._src`` names libraries import, and
    # the import hook answering ``import jax`` with jaxlite.
    ("ecosystem", ("extend", "compat", "import_hook")),
]

# Edges allowed against the directions above: (importing module, imported module).
EXCEPTIONS = {
    # bind's eager path wraps results in ArrayImpl, and hands operands committed to devices
    # to the runtime's dispatch (computation follows data).
    ("core.primitive", "runtime.array"),
    ("core.primitive", "runtime.dispatch"),
    # the transfer guard and jax_no_execution act on eager operations
    ("core.primitive", "runtime.guards"),
    # print_environment_info() reports jaxlite.__version__ (a lazy import of the package).
    ("api.misc", "jaxlite"),
    # Array.__array_namespace__() must return the public module object itself.
    ("numpy.array_methods", "jaxlite.numpy"),
    # The import hook's ``jax`` module is a view of the public ``jaxlite`` package.
    ("import_hook", "jaxlite"),
}

# Modules allowed to form an import cycle among themselves (each family is one concern split
# over files that call into each other, through function-level imports).
CYCLE_GROUPS = [
    # Tracers raise the error classes; the errors describe the tracer that caused them.
    {"core.errors", "core.trace"},
    # The rule helpers (AD, batching, Taylor mode, XLA's simplifier, tier 2's numba code)
    # bind or call into the structural and arithmetic primitives whose rules use them.
    {"prims.ad_util", "prims.batch_util", "prims.base", "prims.compare_bits",
     "prims.complex_parts", "prims.conversion", "prims.cumulative", "prims.elementwise",
     "prims.numba_exprs", "prims.reductions", "prims.shape", "prims.taylor",
     "prims.xla_simplify"},
    # linalg's JVP rules (linalg_ad) bind linalg's primitives.
    {"prims.linalg", "prims.linalg_ad"},
    # gather's transpose is a scatter-add; scatters read their windows back with gather.
    {"prims.gather", "prims.scatter"},
    # io_callback's errors under vmap of cond/while are the callbacks' rules; callbacks in
    # loops are batched with the control-flow primitives.
    {"prims.callback", "prims.control", "prims.scan"},
    # checkify: the Error type, the checks and the rules threading errors through programs.
    {"checkify.core", "checkify.errors", "checkify.rules"},
    # XLA's expm1 uses its tanh body; its tanh, logistic, sinh and cosh use exp's parts.
    {"cpu_math.exp", "cpu_math.hyperbolic"},
    # The optional numba loops stand in for the NumPy kernels, which load them on demand.
    {"random.accel", "random.kernels", "random.xla_math", "random.xla_numba"},
]


def _modules():
    """{module name: (path, is_package)} for every .py file of the jaxlite package."""
    mods = {}
    for p in ROOT.rglob("*.py"):
        parts = p.relative_to(ROOT.parent).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return mods


MODULES = _modules()


def _resolve(name):
    """The longest prefix of the dotted ``name`` that is a module of the package."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(mod):
    """(imported module, line) for every import statement of ``mod`` (lazy ones included)
    that names a jaxlite module, plus __import__/import_module calls on a jaxlite string."""
    path, is_pkg = MODULES[mod]
    tree = ast.parse(path.read_text(), str(path))
    package = mod if is_pkg else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                pkg = pkg[:len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in MODULES else base, node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", "")
            if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                out.append((node.args[0].value, node.lineno))
    return [(_resolve(t), ln) for t, ln in out if t == "jaxlite" or t.startswith("jaxlite.")]


def _short(mod):
    return mod[len(SRC) + 1:] if mod.startswith(SRC + ".") else mod


def _layer(mod):
    """The index of the layer of a module under jaxlite._src (None when unplaced)."""
    short = _short(mod)
    best, level = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (short == p or short.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    return level


SRC_MODULES = sorted(m for m in MODULES if m.startswith(SRC + "."))
EDGES = {m: _imports(m) for m in SRC_MODULES}


def _excepted(src, dst):
    return (_short(src), _short(dst)) in EXCEPTIONS


def test_every_module_is_placed():
    unplaced = [m for m in SRC_MODULES if _layer(m) is None]
    assert not unplaced, f"place these modules in a layer of LAYERS: {unplaced}"


def test_src_never_imports_the_public_face():
    bad = [f"{_short(m)}:{ln} imports {t}" for m in SRC_MODULES for t, ln in EDGES[m]
           if not t.startswith(SRC) and not _excepted(m, t)]
    assert not bad, "\n".join(bad)


def test_imports_point_down():
    bad = []
    for m in SRC_MODULES:
        for t, ln in EDGES[m]:
            if not t.startswith(SRC + ".") or _excepted(m, t):
                continue
            lm, lt = _layer(m), _layer(t)
            if lm is not None and lt is not None and lt > lm:
                bad.append(f"{_short(m)}:{ln} ({LAYERS[lm][0]}) imports {_short(t)} "
                           f"({LAYERS[lt][0]})")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def _cycles():
    """The strongly connected components (of more than one module) of the _src graph."""
    graph = {m: sorted({t for t, _ in EDGES[m] if t in EDGES and t != m
                        and not _excepted(m, t)}) for m in SRC_MODULES}
    index, low, stack, on, comps = {}, {}, [], set(), []
    for root in graph:   # Tarjan's algorithm, iteratively
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            for j in range(i, len(graph[v])):
                w = graph[v][j]
                if w not in index:
                    work += [(v, j + 1), (w, 0)]
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(comp)
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
    return comps


def test_no_import_cycles_outside_the_listed_families():
    bad = []
    for comp in _cycles():
        short = {_short(m) for m in comp}
        if not any(short <= g for g in CYCLE_GROUPS):
            bad.append(sorted(short))
    assert not bad, "import cycles (lazy imports included):\n" + "\n".join(map(str, bad))


def test_exceptions_are_still_needed():
    edges = {(_short(m), _short(t)) for m in SRC_MODULES for t, _ in EDGES[m]}
    stale = sorted(EXCEPTIONS - edges)
    assert not stale, f"these exceptions no longer occur; remove them: {stale}"
    comps = [{_short(m) for m in c} for c in _cycles()]
    unused = [sorted(g) for g in CYCLE_GROUPS if not any(c <= g and c for c in comps)]
    assert not unused, f"these cycle groups no longer form a cycle; remove them: {unused}"


def test_the_checker_sees_lazy_and_relative_imports():
    """The graph reads function-level imports (a lazy upward edge would be caught)."""
    src = "def f():\n    from jaxlite._src.numpy import namespace\n"
    tree = ast.parse(src)
    inner = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert inner and inner[0].module == "jaxlite._src.numpy"
    assert any(t == f"{SRC}.prims.ad_util" for t, _ in EDGES[f"{SRC}.interpreters.ad"])
