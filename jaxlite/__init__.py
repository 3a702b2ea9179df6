"""jaxlite: JAX rebuilt in pure Python on NumPy.

Use it as JAX: ``import jaxlite as jax; import jaxlite.numpy as jnp``. This module only
re-exports; the implementation lives in ``jaxlite._src``.
"""
import warnings as _warnings

# NumPy's floating-point RuntimeWarnings (overflow, invalid, divide) raised inside jaxlite's
# kernels are not errors in JAX's semantics (inf/nan propagate silently, as XLA does).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"jaxlite\.")

from jaxlite._src.config import (  # noqa: E402,F401
    config, enable_x64, default_prng_impl, numpy_dtype_promotion, numpy_rank_promotion)
from jaxlite._src.runtime.array import Array, Shard  # noqa: F401
from jaxlite._src.runtime.devices import (  # noqa: F401
    devices, local_devices, device_count, local_device_count, default_backend,
    process_index, process_count, process_indices)
from jaxlite._src.runtime.devices import CpuDevice as Device  # noqa: F401
from jaxlite._src.core.avals import ShapeDtypeStruct  # noqa: F401
from jaxlite._src.api.jit import jit, disable_jit  # noqa: F401
from jaxlite._src.api.make_jaxpr import make_jaxpr, eval_shape  # noqa: F401
from jaxlite._src.api.ad import (  # noqa: F401
    jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian, linear_transpose,
    closure_convert)
from jaxlite._src.api.ad import jacrev as jacobian  # noqa: F401  (JAX's alias of jacrev)
from jaxlite._src.api.custom_derivatives import (  # noqa: F401
    custom_jvp, custom_vjp, custom_gradient)
from jaxlite._src.api.vmap import vmap  # noqa: F401
from jaxlite._src.api.pmap import pmap  # noqa: F401
from jaxlite._src.api.shard_map import shard_map  # noqa: F401
from jaxlite._src.api.checkpoint import (  # noqa: F401
    checkpoint, remat, checkpoint_policies)
from jaxlite._src.api.placement import (  # noqa: F401
    device_put, device_get, device_put_sharded, device_put_replicated, default_device,
    make_array_from_callback, make_array_from_single_device_arrays,
    make_array_from_process_local_data)
from jaxlite._src.sharding.mesh import make_mesh, set_mesh  # noqa: F401
from jaxlite._src.sharding.partition_spec import PartitionSpec as P  # noqa: F401
from jaxlite._src.sharding.shardings import NamedSharding  # noqa: F401
from jaxlite._src.api.sharding_types import reshard  # noqa: F401
from jaxlite._src.api.misc import (  # noqa: F401
    block_until_ready, typeof, ensure_compile_time_eval,
    named_call, named_scope, clear_caches, print_environment_info, live_arrays,
    copy_to_host_async, host_id, host_count, host_ids)
from jaxlite._src.api.fwd_bwd import fwd_and_bwd  # noqa: F401,E402
from jaxlite._src.api.smap import smap  # noqa: F401,E402
from jaxlite._src.core.dtypes import float0  # noqa: F401
from jaxlite._src.api.refs import Ref, new_ref, empty_ref, free_ref, freeze  # noqa: F401
from jaxlite import numpy, lax, tree_util, tree, dtypes, errors, core, stages  # noqa: F401
from jaxlite import nn, scipy, image  # noqa: F401
from jaxlite import experimental, sharding, lib, debug, distributed  # noqa: F401
from jaxlite import ffi, ref  # noqa: F401,E402
from jaxlite import random  # noqa: F401,E402
from jaxlite import typing, ops, dlpack, custom_batching, api_util  # noqa: F401,E402
from jaxlite import monitoring, profiler, export  # noqa: F401,E402
from jaxlite._src.debugging.callbacks import pure_callback, effects_barrier  # noqa: F401,E402
from jaxlite._src.config import debug_nans, debug_infs, log_compiles  # noqa: F401,E402
from jaxlite._src.config import (  # noqa: F401,E402
    enable_checks, check_tracer_leaks, checking_leaks, explain_cache_misses,
    threefry_partitionable, debug_key_reuse, no_tracing, no_execution,
    default_matmul_precision, transfer_guard, transfer_guard_host_to_device,
    transfer_guard_device_to_device, transfer_guard_device_to_host, softmax_custom_jvp,
    enable_custom_prng, allow_f16_reductions, legacy_prng_key, array_garbage_collection_guard,
    thread_guard, auto_pcast, remove_size_one_mesh_axis_from_type,
    jax2tf_associative_scan_reductions, make_user_context)
from jaxlite._src.prims.state import dslice as ds  # noqa: F401,E402  (jax.ds)
from jaxlite._src.debugging import nans as _nans  # noqa: F401,E402  (jax_debug_nans/infs)
from jaxlite import debug  # noqa: F401,E402
from jaxlite import custom_derivatives, interpreters  # noqa: F401,E402
from jaxlite._src.tree_util import tree_map as _tree_map  # noqa: F401

__version__ = "0.1.0"
__version_info__ = (0, 1, 0)

from jaxlite._src.import_hook import install_as_jax, uninstall_as_jax  # noqa: F401,E402

# Spellings of older JAX releases that the seed tutorials use (``jax.tree_map``, ...):
# available with the DeprecationWarning those releases gave.
_OLD_TREE_NAMES = ("tree_map", "tree_leaves", "tree_flatten", "tree_unflatten",
                   "tree_structure", "tree_transpose", "tree_reduce", "tree_all")


def __getattr__(name):
    if name in _OLD_TREE_NAMES:
        import warnings
        warnings.warn(f"jax.{name} is deprecated: use jax.tree_util.{name} (or "
                      f"jax.tree.{name.removeprefix('tree_')}).", DeprecationWarning,
                      stacklevel=2)
        return getattr(tree_util, name)
    raise AttributeError(f"module 'jaxlite' has no attribute '{name}'")
