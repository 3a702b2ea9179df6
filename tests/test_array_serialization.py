"""``jax.experimental.array_serialization`` (TensorStore checkpoints of arrays) and
orbax-checkpoint on jaxlite.

Three programs written against ``jax`` run on jaxlite (``install_as_jax``, in a subprocess
with 1 or 4 CPU devices) and must print what they print on JAX 0.10.2 (stored in
goldens/array_serialization.json; ``python tests/test_array_serialization.py --record``
re-records them with the real JAX):

- SPECS: TensorStore specs of paths (local, OCDBT, per process, gs://, s3://, zarr and
  zarr3 metadata), chunk shapes, spec checks and their error texts;
- ARRAYS: float32/bfloat16/int arrays and a sharded array on a (2, 2) mesh written shard by
  shard and read back with other shardings, a larger or smaller global shape (zero padding,
  truncation) and a cast, through async_serialize/async_deserialize and
  GlobalAsyncCheckpointManager (its commit callback and error reporting);
- ORBAX: orbax's StandardCheckpointer, CheckpointManager with StandardSave/StandardRestore,
  PyTreeCheckpointer and a flax nnx model's state, saved and restored with target shardings.

Values, dtypes and shardings must be JAX's. Without tensorstore (or orbax/flax) the programs
needing them are skipped; jaxlite itself imports without tensorstore, and the
array_serialization modules then raise a ModuleNotFoundError naming it (tested always).
"""
import importlib.util
import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from multidevice import run_snippet

HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = HERE / "goldens" / "array_serialization.json"


def _have(mod):
    return importlib.util.find_spec(mod) is not None


SPECS = r'''
import json
import numpy as np
import jax
from jax.experimental.array_serialization import tensorstore_impl as ti, serialization as se
out = {}
cases = [((1024, 1024, 1024), 'float32'), ((3, 5, 7), 'float32'), ((0, 4), 'float32'),
         ((), 'float32'), ((2**20 * 3, 1000), 'float64'), ((97, 1000003), 'int8'),
         ((6, 35), 'bfloat16')]
out["chunks"] = [ti._compute_chunk_shape(s, d) for s, d in cases]
out["chunks_small_target"] = [ti._compute_chunk_shape(s, d, file_size_target=100)
                              for s, d in cases]
out["spec_ocdbt"] = ti.get_tensorstore_spec("/tmp/ck/a/b/")
out["spec_plain"] = ti.get_tensorstore_spec("/tmp/ck/a", ocdbt=False)
out["spec_proc"] = ti.get_tensorstore_spec("/tmp/ck/a", process_idx=3)
out["spec_gs"] = ti.get_tensorstore_spec("gs://bucket/dir/arr")
out["spec_s3_plain"] = ti.get_tensorstore_spec("s3://bucket/dir/arr", ocdbt=False)
out["spec_zarr"] = se.get_tensorstore_spec("/tmp/ck/z")
x = jax.numpy.arange(12, dtype=jax.numpy.bfloat16).reshape(3, 4)
out["spec_arr"] = ti.get_tensorstore_spec("/tmp/ck/a", arr=x)
out["spec_arr_zarr"] = ti.get_tensorstore_spec("/tmp/ck/a", arr=np.zeros((5, 2), np.int16),
                                               driver="zarr", ocdbt=False)
out["spec_arr_remote"] = ti._get_tensorstore_metadata(x, is_remote=True)
def e(f):
    try:
        return f()
    except Exception as ex:
        return f"{type(ex).__name__}: {ex}"
out["rel"] = e(lambda: ti.get_tensorstore_spec("rel/path"))
out["gs_bad"] = e(lambda: ti.get_tensorstore_spec("gs://bucket"))
out["bad_driver"] = e(lambda: ti.get_tensorstore_spec("/a/b", arr=x, driver="n5"))
out["remote"] = [se.is_remote_storage(s) for s in [
    "gs://a/b", "/x", {"driver": "zarr", "kvstore": {"driver": "gcs", "bucket": "b"}},
    {"kvstore": {"driver": "ocdbt", "base": "s3://a/b"}},
    {"driver": "zarr", "kvstore": {"driver": "file", "path": "/x"}}]]
out["merge"] = ti.merge_nested_ts_specs(
    {"driver": "zarr3", "kvstore": {"driver": "file", "path": "/a"}, "x": 1},
    {"kvstore": {"path": "/b"}, "y": 2})
out["leaf"] = [ti.is_tensorstore_spec_leaf(v)
               for v in [None, {"driver": 1}, {"kvstore": 1}, {"a": 1}, 3]]
sa = out["spec_arr"]
out["verify"] = [
    e(lambda: ti.verify_tensorstore_spec(sa, x, "/tmp/ck", ocdbt=True)),
    e(lambda: ti.verify_tensorstore_spec(sa, np.zeros((3, 4), np.float32), "/tmp/ck", ocdbt=True)),
    e(lambda: ti.verify_tensorstore_spec(sa, x[:2], "/tmp/ck", ocdbt=True)),
    e(lambda: ti.verify_tensorstore_spec(sa, x, "/tmp/other", ocdbt=True)),
    e(lambda: ti.verify_tensorstore_spec(out["spec_plain"], x, "/tmp/ck/a", ocdbt=True,
                                         check_metadata=False))]
print(json.dumps(out, sort_keys=True, default=str))
'''

ARRAYS = r'''
import asyncio, json, os, tempfile
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental.array_serialization import tensorstore_impl as ti, serialization as se
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((2, 2), ("x", "y"))
NS = lambda *spec: jax.sharding.NamedSharding(mesh, P(*spec))
dev0 = jax.sharding.SingleDeviceSharding(jax.devices()[0])
out = {}
def show(a):
    shards = sorted((s.device.id, [[i.start, i.stop] for i in s.index],
                     np.asarray(s.data, np.float64).ravel().tolist()) for s in a.addressable_shards)
    return [str(a.dtype), list(a.shape), np.asarray(a, np.float64).ravel().tolist(),
            str(getattr(a.sharding, "spec", "single")), shards]
d = tempfile.mkdtemp()
x = jax.device_put(jnp.arange(32, dtype=jnp.float32).reshape(4, 8) / 4, NS("x", "y"))
rep = jax.device_put(jnp.arange(8, dtype=jnp.int32), NS("x"))   # replicated over y
small = {"f": jnp.arange(6, dtype=jnp.float32).reshape(2, 3) / 7,
         "b": jnp.linspace(0, 1, 5, dtype=jnp.bfloat16),
         "i": jnp.arange(4, dtype=jnp.int8) - 2, "s": jnp.uint16(7), "t": jnp.array([True, False])}
async def write_all():
    await ti.async_serialize(x, ti.get_tensorstore_spec(os.path.join(d, "x")))
    await ti.async_serialize(rep, ti.get_tensorstore_spec(os.path.join(d, "rep"), ocdbt=False))
asyncio.run(write_all())
spec = lambda n, **kw: ti.get_tensorstore_spec(os.path.join(d, n), **kw)
cases = {
    "x_same": (NS("x", "y"), spec("x"), None, None),
    "x_cols": (NS(None, "y"), spec("x"), None, None),
    "x_swap": (NS("y", "x"), spec("x"), None, None),
    "x_single": (dev0, spec("x"), None, None),
    "x_pad": (NS("x", None), spec("x"), (6, 8), None),
    "x_trunc": (NS(None, "y"), spec("x"), (2, 4), None),
    "x_cast": (NS("x", "y"), spec("x"), None, jnp.bfloat16),
    "rep_single": (dev0, spec("rep", ocdbt=False), None, None),
    "rep_y": (NS("y"), spec("rep", ocdbt=False), None, None),
}
names = list(cases)
res = ti._run_deserialization([cases[n][0] for n in names], [cases[n][1] for n in names],
                              [cases[n][2] for n in names], [cases[n][3] for n in names])
out.update({n: show(r) for n, r in zip(names, res)})
sds = jax.ShapeDtypeStruct((4, 8), jnp.float32, sharding=NS("y", None))
out["x_sds"] = show(asyncio.run(ti.async_deserialize(sds, spec("x"))))
# the asynchronous manager: zarr specs from paths, a callback after the commit
m = se.GlobalAsyncCheckpointManager()
committed = []
leaves, treedef = jax.tree.flatten(small)
paths = [os.path.join(d, "m", str(k)) for k in range(len(leaves))]
m.serialize_with_paths(leaves, paths, on_commit_callback=lambda: committed.append(1))
m.wait_until_finished()
out["committed"] = committed
back = m.deserialize_with_paths([dev0] * len(leaves), paths)
out["small"] = {k: show(v) for k, v in jax.tree.unflatten(treedef, back).items()}
out["manager_base"] = isinstance(m, se.GlobalAsyncCheckpointManagerBase)
def boom():
    raise RuntimeError("callback failed")
m.serialize_with_paths(leaves[:1], paths[:1], on_commit_callback=boom)
try:
    m.wait_until_finished()
    out["error"] = None
except RuntimeError as ex:
    out["error"] = str(ex)
m.check_for_errors()          # the error is reported once
print(json.dumps(out, sort_keys=True))
'''

ORBAX = r'''
import json, os, tempfile
import numpy as np
import jax, jax.numpy as jnp
import orbax.checkpoint as ocp
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((2, 2), ("x", "y"))
NS = lambda *spec: jax.sharding.NamedSharding(mesh, P(*spec))
tree = {"f": jnp.arange(6, dtype=jnp.float32).reshape(2, 3) / 7,
        "b": jnp.linspace(0, 1, 5, dtype=jnp.bfloat16),
        "i": jnp.arange(4, dtype=jnp.int32),
        "s": jax.device_put(jnp.arange(32, dtype=jnp.float32).reshape(4, 8), NS("x", "y")),
        "scalar": jnp.float32(3.5),
        "nested": [jnp.ones((3,), jnp.int8), {"u": jnp.arange(3, dtype=jnp.uint16)}]}
def show(t):
    return {jax.tree_util.keystr(p): [str(v.dtype), list(v.shape),
                                      np.asarray(v, np.float64).ravel().tolist(),
                                      str(getattr(v.sharding, "spec", "single"))]
            for p, v in jax.tree_util.tree_leaves_with_path(t)}
out = {}
d = tempfile.mkdtemp()
ckptr = ocp.StandardCheckpointer()
ckptr.save(os.path.join(d, "std"), tree)
ckptr.wait_until_finished()
target = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding),
                      tree)
target["s"] = jax.ShapeDtypeStruct((4, 8), jnp.float32, sharding=NS(None, "y"))
out["std"] = show(ckptr.restore(os.path.join(d, "std"), target))
out["std_no_target"] = show(ckptr.restore(os.path.join(d, "std")))
mngr = ocp.CheckpointManager(os.path.join(d, "mgr"),
                             options=ocp.CheckpointManagerOptions(max_to_keep=2))
for step in range(3):
    mngr.save(step, args=ocp.args.StandardSave(jax.tree.map(lambda x: x + step, tree)))
mngr.wait_until_finished()
out["steps"] = [list(mngr.all_steps()), mngr.latest_step()]
out["mgr"] = show(mngr.restore(mngr.latest_step(), args=ocp.args.StandardRestore(target)))
mngr.close()
pc = ocp.PyTreeCheckpointer()
pc.save(os.path.join(d, "pt"), tree)
out["pytree"] = show(pc.restore(os.path.join(d, "pt")))
try:
    from flax import nnx
except ImportError:
    nnx = None
if nnx is not None:
    class M(nnx.Module):
        def __init__(self, rngs):
            self.l = nnx.Linear(3, 4, rngs=rngs)
            self.bn = nnx.BatchNorm(4, rngs=rngs)
    m = M(nnx.Rngs(0))
    _, state = nnx.split(m)
    ckptr.save(os.path.join(d, "nnx"), state)
    ckptr.wait_until_finished()
    gd, abs_state = nnx.split(nnx.eval_shape(lambda: M(nnx.Rngs(1))))
    m2 = nnx.merge(gd, ckptr.restore(os.path.join(d, "nnx"), abs_state))
    out["nnx"] = [bool(np.array_equal(m2.l.kernel[...], m.l.kernel[...])),
                  str(m2.l.kernel[...].dtype), np.asarray(m2.bn.mean[...]).tolist()]
print(json.dumps(out, sort_keys=True))
'''

PROGRAMS = {"specs": (SPECS, 1, ["tensorstore"]),
            "arrays": (ARRAYS, 4, ["tensorstore"]),
            "orbax": (ORBAX, 4, ["tensorstore", "orbax.checkpoint"])}

_ON_JAXLITE = ("import jaxlite; jaxlite.install_as_jax()\n"
               "from jaxlite._src.import_hook import _real_jax_modules\n")


def _run_program(name, backend):
    code, n, _ = PROGRAMS[name]
    if backend == "jaxlite":
        code = _ON_JAXLITE + code + "\nassert not _real_jax_modules(), _real_jax_modules()\n"
    return json.loads(run_snippet(code, n=n).strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name):
    for mod in PROGRAMS[name][2]:
        if not _have(mod.partition(".")[0]) or not _have(mod):
            pytest.skip(f"{mod} is not installed")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert want["jax_version"] == "0.10.2"
    got = _run_program(name, "jaxlite")
    expected = want["outputs"][name]
    if name == "orbax" and "nnx" not in got:
        expected = {k: v for k, v in expected.items() if k != "nnx"}   # (no flax here)
    for key in sorted(set(expected) | set(got)):
        assert got.get(key) == expected.get(key), (name, key)


def test_imports_without_tensorstore():
    # jaxlite, and the array_serialization package, import without tensorstore; its modules
    # say what is missing and how to install it (for JAX's names and jaxlite's alike)
    out = run_snippet(r'''
import sys
sys.modules["tensorstore"] = None        # as if it were not installed
import jaxlite
import jaxlite.experimental.array_serialization
jaxlite.install_as_jax()
for mod in ("jaxlite.experimental.array_serialization.serialization",
            "jax.experimental.array_serialization.tensorstore_impl"):
    try:
        __import__(mod)
    except ModuleNotFoundError as e:
        print(e.name, "|", e)
    else:
        print("imported", mod)
''', n=1)
    lines = out.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        name, msg = line.split(" | ")
        assert name == "tensorstore"
        assert "pip install tensorstore" in msg and "array_serialization" in msg


def test_xla_only_names_say_why():
    # the modules orbax imports exist; their XLA/IFRT-only names raise AttributeError
    out = run_snippet(r'''
import jaxlite
jax = jaxlite.install_as_jax()
from jax.interpreters import pxla
from jax.extend import ifrt_programs
for obj, name in ((pxla, "global_avals_to_results_handler"), (pxla, "shard_args"),
                  (ifrt_programs.ifrt_programs, "make_plugin_program")):
    try:
        getattr(obj, name)
    except AttributeError as e:
        print(name, "|", e)
print(jax._src.distributed.global_state.process_id,
      jax._src.distributed.global_state.num_processes,
      jax._src.distributed.global_state.client)
''', n=1)
    lines = out.strip().splitlines()
    assert lines[0].startswith("global_avals_to_results_handler | ") and "XLA" in lines[0]
    assert lines[1] == "shard_args | jax.interpreters.pxla.shard_args was removed in JAX v0.10.0."
    assert lines[2].startswith("make_plugin_program | ") and "IFRT" in lines[2]
    assert lines[3] == "0 1 None"


def _record():
    out = {}
    for name in PROGRAMS:
        out[name] = _run_program(name, "jax")
    import jax
    if jax.__version__ != "0.10.2":
        raise SystemExit(f"this interpreter has jax {jax.__version__}; the goldens need 0.10.2")
    GOLDEN.write_text(json.dumps({"jax_version": jax.__version__, "outputs": out}, indent=1,
                                 sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(out)} programs in {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit("usage: python tests/test_array_serialization.py --record")
    _record()
