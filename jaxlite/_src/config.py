"""Configuration flags: ``jaxlite.config.update(name, value)``, env vars and context managers.

Each flag has a name (``jax_enable_x64``), a default, an optional environment variable read at
import time, and can be set globally (``config.update``) or within a ``with`` block. Flags that
change what a traced program computes (``jax_enable_x64``, ...) form part of jit's cache key;
``config.trace_context()`` returns their current values as a hashable tuple.
"""
from __future__ import annotations

import contextlib
import os
import threading

__all__ = ["config", "Config"]


def _parse_bool(s: str) -> bool:
    return s.strip().lower() in ("1", "true", "yes", "on", "t", "y")


def _mark_absl_flags_parsed(args):
    """Parse absl's flags once with the ``--jax`` arguments of ``args`` (before ``--``),
    unknown ones allowed, as JAX's ``parse_flags_with_absl`` does; nothing without absl."""
    try:
        import absl.flags
    except ImportError:
        return
    if absl.flags.FLAGS.is_parsed():
        return
    jax_args = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--jax"):
            jax_args.append(arg)
    absl.flags.FLAGS(["", *jax_args], known_only=True)


class _Flag:
    __slots__ = ("name", "default", "value", "doc", "in_trace_context", "parse")

    def __init__(self, name, default, doc, env=None, in_trace_context=False, parse=None):
        self.name = name
        self.default = default
        self.doc = doc
        self.in_trace_context = in_trace_context
        self.parse = parse or (_parse_bool if isinstance(default, bool) else type(default))
        value = default
        if env is not None and env in os.environ:
            value = self.parse(os.environ[env])
        self.value = value


class Config:
    """The global flag store, mirroring ``jax.config``.

    Read a flag as an attribute (``config.jax_enable_x64``) or with ``read``; change it with
    ``update(name, value)``. Unknown names raise AttributeError listing the close matches.
    """

    def __init__(self):
        self._flags: dict[str, _Flag] = {}
        self._local = threading.local()
        self._trace_ctx_cache = None
        self._listeners = []
        self._validators = {}

    def define(self, name, default, doc, env=None, in_trace_context=False, parse=None):
        """Define a new flag (used by jaxlite's own modules)."""
        self._flags[name] = _Flag(name, default, doc, env, in_trace_context, parse)
        self._trace_ctx_cache = None

    def _flag(self, name):
        try:
            return self._flags[name]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(name, list(self._flags), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise AttributeError(f"Unrecognized config option: {name}.{hint}") from None

    def read(self, name):
        """Return the current value of flag ``name``."""
        return self._flag(name).value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._flag(name).value

    def update(self, name, value):
        """Set flag ``name`` to ``value`` for the whole process (as ``jax.config.update``)."""
        flag = self._flag(name)
        if name in _RETIRED and value != flag.default:
            raise ValueError(_RETIRED[name])
        if isinstance(flag.default, bool) and not isinstance(value, (bool, int)):
            raise TypeError(f"config option {name} expects a bool, got {value!r}")
        check = self._validators.get(name)
        if check is not None:
            check(value)
        choices = _CHOICES.get(name)
        if choices is not None and value not in choices:
            if None in choices:   # JAX's optional enum states
                raise ValueError(f"new enum value must be None or in {list(choices[1:])}, "
                                 f"got {value} of type {type(value)}.")
            raise ValueError(f"Unrecognized value {value!r} for {name}: expected one of "
                             f"{', '.join(repr(c) for c in choices)}.")
        flag.value = bool(value) if isinstance(flag.default, bool) else value
        self._trace_ctx_cache = None
        for fn in self._listeners:
            fn(name)
        if name == "jax_transfer_guard":   # set-only: it sets the three directions
            for d in ("host_to_device", "device_to_device", "device_to_host"):
                self.update(f"jax_transfer_guard_{d}", value)

    def parse_flags_with_absl(self, argv=None):
        """Set flags from the ``--jax_...`` command-line arguments (before a ``--``) in
        ``argv`` (default ``sys.argv``), as JAX's absl integration does: ``--jax_name=v``,
        ``--jax_name`` (True) and ``--nojax_name`` (False). Other arguments are ignored;
        an unknown ``--jax_`` name raises AttributeError.

        As in JAX, when absl is installed its flags count as parsed afterwards (the first
        call parses the ``--jax`` arguments with ``known_only=True``), so that absl tests
        can read flags such as ``--test_tmpdir``."""
        import sys
        args = sys.argv[1:] if argv is None else list(argv)
        _mark_absl_flags_parsed(args)
        for arg in args:
            if arg == "--":
                break
            if not (arg.startswith("--jax") or arg.startswith("--nojax")):
                continue
            name, eq, text = arg[2:].partition("=")
            if not eq:
                value = not name.startswith("no")
                name = name[2:] if name.startswith("no") else name
            else:
                value = self._flag(name).parse(text)
            self.update(name, value)

    def config_with_absl(self):
        """jaxlite keeps no absl flags of its own: the same as ``parse_flags_with_absl()``."""
        self.parse_flags_with_absl()

    @contextlib.contextmanager
    def override(self, name, value):
        """Context manager that sets a flag within a ``with`` block."""
        flag = self._flag(name)
        old = flag.value
        self.update(name, value)
        try:
            yield
        finally:
            flag.value = old
            self._trace_ctx_cache = None
            for fn in self._listeners:
                fn(name)

    def trace_context(self):
        """Hashable tuple of the flags that affect tracing (part of jit's cache key)."""
        c = self._trace_ctx_cache
        if c is None:
            c = tuple((f.name, f.value) for f in self._flags.values() if f.in_trace_context)
            self._trace_ctx_cache = c
        return c

    def add_validator(self, name, fn):
        """Call ``fn(value)`` before flag ``name`` is updated; it raises to refuse."""
        self._validators[name] = fn

    def add_listener(self, fn):
        """Call ``fn(name)`` whenever a flag changes (caches use this)."""
        self._listeners.append(fn)

    @property
    def values(self):
        return {k: f.value for k, f in self._flags.items()}


config = Config()
# flags of older JAX releases that now only accept their final value
_RETIRED = {"jax_array": "jax_array=False is not supported: jax.Array is the only array "
                         "type (the flag only existed for JAX <= 0.4.0)."}
config.define("jax_array", True, "Use jax.Array (always on; kept for older programs).")
config.define("jax_enable_x64", False, "Enable 64-bit types (float64, int64) as defaults.",
              env="JAX_ENABLE_X64", in_trace_context=True)
config.define("jax_explain_cache_misses", False,
              "Log an explanation of each jit cache miss.", env="JAX_EXPLAIN_CACHE_MISSES")
config.define("jax_disable_jit", False, "Run jitted functions eagerly.", env="JAX_DISABLE_JIT")
config.define("jax_numpy_rank_promotion", "allow",
              "Rank promotion policy: allow, warn or raise.", env="JAX_NUMPY_RANK_PROMOTION",
              in_trace_context=True, parse=str)
config.define("jax_numpy_dtype_promotion", "standard",
              "Dtype promotion policy: standard or strict.", env="JAX_NUMPY_DTYPE_PROMOTION",
              in_trace_context=True, parse=str)
config.define("jax_default_matmul_precision", None, "Default matmul precision.",
              in_trace_context=True, parse=str)
config.define("jax_debug_nans", False,
              "Add nan checks to every operation: the first one producing a nan raises "
              "FloatingPointError. A jitted function is checked on its outputs and, when "
              "one holds a nan, run again without jit to find the operation.",
              env="JAX_DEBUG_NANS")
config.define("jax_debug_infs", False,
              "Add inf checks to every operation (as jax_debug_nans, for infinities).",
              env="JAX_DEBUG_INFS")
config.define("jax_softmax_custom_jvp", False,
              "Differentiate jax.nn.softmax with its own JVP rule (JAX's newer rule); off, as "
              "in JAX 0.10.2: softmax is traced with a stop_gradient on its max.",
              in_trace_context=True)
config.define("jax_traceback_filtering", "auto",
              "Hide jaxlite's internal frames in tracebacks of errors leaving its APIs: "
              "'off' shows every frame; any other value ('auto', 'remove_frames', "
              "'quiet_remove_frames', 'tracebackhide') filters.",
              env="JAX_TRACEBACK_FILTERING", parse=str)
config.define("jax_log_compiles", False, "Log each compilation.", env="JAX_LOG_COMPILES")
config.define("jax_platforms", "cpu", "Platforms (only cpu exists in jaxlite).", parse=str)
config.define("jax_platform_name", "cpu", "Platform name.", parse=str)
config.define("jax_num_cpu_devices", -1,
              "Number of CPU devices (-1: from JAXLITE_NUM_CPU_DEVICES or XLA_FLAGS, else "
              "1); set it before the first JAX operation.", env="JAX_NUM_CPU_DEVICES",
              parse=int)
config.define("jax_threefry_partitionable", True, "Partitionable threefry PRNG.",
              in_trace_context=True)
config.define("jax_check_tracer_leaks", False,
              "After a function is traced to a jaxpr (jit, make_jaxpr, control flow bodies), "
              "raise if a tracer of it is still referenced (it leaked out of the function).",
              env="JAX_CHECK_TRACER_LEAKS")
config.define("jax_enable_custom_prng", False,
              "Key-returning functions of jax.random (PRNGKey, split, fold_in ...) return typed "
              "key arrays even for raw uint32 keys, and raw keys passed in warn.",
              in_trace_context=True)
config.define("jax_default_prng_impl", "threefry2x32", "Default PRNG implementation.",
              in_trace_context=True, parse=str)
config.define("jax_default_device", None,
              "Device (or platform name) uncommitted computations run on; None: device 0. "
              "Setting it calls runtime.devices.set_global_default_device (see "
              "jax.default_device for the context manager).", parse=str)
config.define("jax_enable_checks", False,
              "Extra internal checks: every jaxpr jit traces is type-checked before it is "
              "compiled (slower).", env="JAX_ENABLE_CHECKS")
config.define("jax_check_tracer_leaks", False,
              "After each jit/make_jaxpr/vmap trace, look for tracers of that trace still "
              "referenced from outside it and raise an error naming who holds them (slow: "
              "runs the garbage collector).", env="JAX_CHECK_TRACER_LEAKS")
config.define("jax_debug_key_reuse", False,
              "Key reuse checking of typed PRNG keys (not implemented in jaxlite: enabling "
              "it raises NotImplementedError).", in_trace_context=True)
config.define("jax_no_tracing", False, "Disallow tracing for JIT compilation: a jit cache "
              "miss (or make_jaxpr) raises RuntimeError.")
config.define("jax_no_execution", False, "Disallow executions: a jit call or an eager "
              "operation raises RuntimeError.", in_trace_context=True)
_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
for _d in ("host_to_device", "device_to_device", "device_to_host"):
    config.define(f"jax_transfer_guard_{_d}", None,
                  f"Transfer guard level for {_d.replace('_', '-')} transfers (None: allow). "
                  "'log'/'disallow' act on implicit transfers, 'log_explicit'/"
                  "'disallow_explicit' on explicit ones (device_put) too.",
                  in_trace_context=True, parse=str)
config.define("jax_transfer_guard", None, "Transfer guard level for all transfers "
              "(set-only: sets the three jax_transfer_guard_* flags).", parse=str)
config.define("jaxlite_check_eager_avals", False,
              "Check every eager primitive result against its abstract_eval (tests use it).",
              env="JAXLITE_CHECK_EAGER_AVALS")
config.define("jaxlite_tier", "auto",
              "Which compiler tier jit runs: 'auto' (tier 1 at once, tier 2 built in the "
              "background once a function proves hot), 1 (tier 1 only: generated NumPy, op "
              "by op) or 2 (tier 2 built at the first call: fused kernels).",
              env="JAXLITE_TIER", in_trace_context=True,
              parse=lambda v: v if v == "auto" else int(v))
config.define("jaxlite_spmd_mode", "auto",
              "How pmap/shard_map run their per-device program: 'threads' (every device's "
              "executor thread, meeting at collectives), 'batched' (one program batched over "
              "the mesh axes on the calling thread, where that cannot change the result) or "
              "'auto' (batched for small data, threads otherwise).",
              env="JAXLITE_SPMD_MODE", parse=str)
config.define("jaxlite_debug", 0, "Debug level: 1 compile events, 2 jaxprs, 3 generated code.",
              env="JAXLITE_DEBUG", parse=int)


@contextlib.contextmanager
def enable_x64(new_val: bool = True):
    """Context manager enabling (or disabling) 64-bit types within a ``with`` block."""
    with config.override("jax_enable_x64", new_val):
        yield


@contextlib.contextmanager
def default_prng_impl(new_val: str):
    """Context manager setting ``jax_default_prng_impl`` (the PRNG that ``key``/``PRNGKey``
    use when no ``impl`` is given) within a ``with`` block."""
    with config.override("jax_default_prng_impl", new_val):
        yield


# flags restricted to a set of values (JAX raises ValueError for others)
_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
_CHOICES = {"jax_numpy_dtype_promotion": ("standard", "strict"),
            "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
            "jax_default_matmul_precision": (None,) + _MATMUL_PRECISIONS,
            "jax_transfer_guard": (None,) + _GUARD_LEVELS,
            "jax_transfer_guard_host_to_device": (None,) + _GUARD_LEVELS,
            "jax_transfer_guard_device_to_device": (None,) + _GUARD_LEVELS,
            "jax_transfer_guard_device_to_host": (None,) + _GUARD_LEVELS}


@contextlib.contextmanager
def numpy_dtype_promotion(new_val: str):
    """Context manager setting ``jax_numpy_dtype_promotion`` ('standard' or 'strict')
    within a ``with`` block; under 'strict', implicit promotion between different dtypes
    raises ``TypePromotionError``."""
    with config.override("jax_numpy_dtype_promotion", new_val):
        yield


@contextlib.contextmanager
def numpy_rank_promotion(new_val: str):
    """Context manager setting ``jax_numpy_rank_promotion`` ('allow', 'warn' or 'raise')
    within a ``with`` block."""
    with config.override("jax_numpy_rank_promotion", new_val):
        yield


def x64_enabled() -> bool:
    return config._flags["jax_enable_x64"].value


class _FlagContext:
    """A boolean flag usable as a context manager (``with jax.debug_nans(True): ...``), as
    JAX's config states; ``.value`` reads the flag."""

    def __init__(self, name, doc, boolean=True):
        self._name = name
        self._bool = boolean
        self.__doc__ = doc

    @property
    def value(self):
        return config._flags[self._name].value

    def __call__(self, new_val=True):
        """A context manager setting the flag to ``new_val`` within a ``with`` block."""
        return config.override(self._name, bool(new_val) if self._bool else new_val)

    def __repr__(self):
        return f"<config flag {self._name}={self.value}>"


log_compiles = _FlagContext(
    "jax_log_compiles", "Context manager for jax_log_compiles: ``with jax.log_compiles():`` "
    "logs each compilation within the block.")
debug_nans = _FlagContext(
    "jax_debug_nans", "Context manager for jax_debug_nans: ``with jax.debug_nans(True):`` "
    "raises FloatingPointError at the first operation producing a nan.")
debug_infs = _FlagContext(
    "jax_debug_infs", "Context manager for jax_debug_infs: ``with jax.debug_infs(True):`` "
    "raises FloatingPointError at the first operation producing an inf.")
enable_checks = _FlagContext(
    "jax_enable_checks", "Context manager for jax_enable_checks: ``with jax.enable_checks"
    "(True):`` type-checks every jaxpr jit traces before compiling it.")
check_tracer_leaks = _FlagContext(
    "jax_check_tracer_leaks", "Context manager for jax_check_tracer_leaks: within the block "
    "a tracer still referenced after its jit/make_jaxpr/vmap trace ends raises an Exception "
    "naming the object that holds it.")


def checking_leaks():
    """Context manager turning tracer leak checking on (``check_tracer_leaks(True)``)."""
    return check_tracer_leaks(True)


explain_cache_misses = _FlagContext(
    "jax_explain_cache_misses", "Context manager for jax_explain_cache_misses: each jit "
    "cache miss within the block logs which part of the call changed (at WARNING).")
threefry_partitionable = _FlagContext(
    "jax_threefry_partitionable", "Context manager for jax_threefry_partitionable: which "
    "of threefry's two bit layouts jax.random uses within the block (default True).")
debug_key_reuse = _FlagContext(
    "jax_debug_key_reuse", "Context manager for jax_debug_key_reuse (key reuse checking is "
    "not implemented in jaxlite: enabling it raises NotImplementedError).")
no_tracing = _FlagContext(
    "jax_no_tracing", "Context manager for jax_no_tracing: within the block a jit call that "
    "would trace (a cache miss) or make_jaxpr raises RuntimeError; cached calls run.")
no_execution = _FlagContext(
    "jax_no_execution", "Context manager for jax_no_execution: within the block running a "
    "jitted function or an eager operation raises RuntimeError (tracing, make_jaxpr and "
    "lowering are allowed).")
default_matmul_precision = _FlagContext(
    "jax_default_matmul_precision", "Context manager for jax_default_matmul_precision: the "
    "precision dot_general and conv_general_dilated get when called with precision=None "
    "('default', 'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32' or a "
    "DotAlgorithmPreset name such as 'BF16_BF16_F32').", boolean=False)
transfer_guard_host_to_device = _FlagContext(
    "jax_transfer_guard_host_to_device", "Context manager for the host-to-device transfer "
    "guard level ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit').",
    boolean=False)
transfer_guard_device_to_device = _FlagContext(
    "jax_transfer_guard_device_to_device", "Context manager for the device-to-device "
    "transfer guard level ('allow', 'log', 'disallow', 'log_explicit', "
    "'disallow_explicit').", boolean=False)
transfer_guard_device_to_host = _FlagContext(
    "jax_transfer_guard_device_to_host", "Context manager for the device-to-host transfer "
    "guard level ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit').",
    boolean=False)


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """Context manager setting the transfer guard level of all three directions
    (host-to-device, device-to-device, device-to-host) within a ``with`` block: 'allow',
    'log' (log implicit transfers), 'disallow' (implicit transfers raise), 'log_explicit' /
    'disallow_explicit' (explicit ``device_put`` transfers too)."""
    with contextlib.ExitStack() as stack:
        for d in ("host_to_device", "device_to_device", "device_to_host"):
            stack.enter_context(config.override(f"jax_transfer_guard_{d}", new_val))
        yield


def _refuse_key_reuse(value):
    if value:
        raise NotImplementedError(
            "jax_debug_key_reuse (key reuse checking) is not implemented in jaxlite. Leave it "
            "off; to catch reuse, split keys with jax.random.split before each use.")


config.add_validator("jax_debug_key_reuse", _refuse_key_reuse)

softmax_custom_jvp = _FlagContext(
    "jax_softmax_custom_jvp", "Context manager for jax_softmax_custom_jvp: within the block "
    "jax.nn.softmax is differentiated with its own JVP rule instead of through a "
    "stop_gradient on its max.")
enable_custom_prng = _FlagContext(
    "jax_enable_custom_prng", "Context manager (or, called, decorator) for "
    "jax_enable_custom_prng: ``with jax.enable_custom_prng():`` makes jax.random's key "
    "functions return typed key arrays.")


# ------------------------------------------------------------ the rest of JAX 0.10.2's flags
# Every flag of JAX 0.10.2 can be read and set, so programs and libraries that touch them run.
# Flags with an effect in jaxlite are defined above or here with it; the others concern a
# part of JAX jaxlite does not have (XLA's compiler, GPU/TPU backends, multi-host runtime
# services, the persistent XLA compilation cache, JAX-internal migrations) and are no-ops, as
# JAX documents them to be on CPU or as they are when that part is absent.

_EFFECTIVE = [
    # (name, default, doc, choices or None)
    ("jax_export_calling_convention_version", 10,
     "Calling-convention version recorded by jax.export (JAX 0.10.2 supports 9..10; other "
     "values make export raise).", None),
    ("jax_serialization_version", 0,
     "Deprecated alias kept by JAX 0.10.2; use jax_export_calling_convention_version.", None),
    ("jax_random_seed_offset", 0,
     "Added to every seed given to jax.random.key / PRNGKey.", None),
    ("jax_legacy_prng_key", "allow",
     "What jax.random does with raw uint32 key arrays: 'allow', 'warn' or 'error'.",
     ("allow", "warn", "error")),
    ("jax_allow_f16_reductions", True,
     "False: reduce_sum over float16/bfloat16 operands raises ValueError.", None),
    ("jax_check_static_indices", False,
     "True: out-of-bounds static integer indices raise IndexError instead of clamping.", None),
    ("jax_high_dynamic_range_gumbel", False,
     "True: jax.random.gumbel (and categorical/choice) default to mode='high'.", None),
    ("jax_disallow_mesh_context_manager", False,
     "True: the deprecated `with mesh:` raises RuntimeError.", None),
    ("jax_logging_level", "NOTSET",
     "Level set on the 'jaxlite' loggers ('NOTSET' leaves them alone).",
     (None, "NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    ("jax_debug_log_modules", "",
     "Comma-separated logger names (jax.* names map to jaxlite.*) set to DEBUG.", None),
]

_NOOPS = {
    # XLA's compiler and its dumps: jaxlite compiles jaxprs to Python.
    "xla": (("jax_optimization_level", "UNKNOWN"), ("jax_memory_fitting_level", "O2"),
            ("jax_memory_fitting_effort", 0.0), ("jax_exec_time_optimization_effort", 0.0),
            ("jax_compiler_enable_remat_pass", True), ("jax_xla_profile_version", 0),
            ("jax_disable_most_optimizations", False), ("jax_embedded_constants_max_bytes", 32),
            ("jax_compiler_detailed_logging_min_ops", 10), ("jax_dump_ir_to", ""),
            ("jax_dump_ir_modes", "stablehlo"), ("jax_include_debug_info_in_dumps", True),
            ("jax_hlo_source_file_canonicalization_regex", None),
            ("jax_include_full_tracebacks_in_locations", True),
            ("jax_traceback_in_locations_limit", 100), ("jax_source_url_schema", None),
            ("jax_export_ignore_forward_compatibility", False), ("eager_constant_folding", False),
            ("jax_experimental_unsafe_xla_runtime_errors", False),
            ("jax_send_traceback_to_runtime", "off"), ("jax_xla_backend", ""),
            ("jax_backend_target", ""), ("jax_pjrt_client_create_options", None),
            ("jax2tf_associative_scan_reductions", False),
            ("jax2tf_default_native_serialization", True)),
    # XLA's persistent compilation cache (jaxlite keeps its own kernel cache, see tiers).
    "cache": (("jax_compilation_cache_dir", None), ("jax_enable_compilation_cache", True),
              ("jax_compilation_cache_max_size", -1),
              ("jax_compilation_cache_check_contents", False),
              ("jax_compilation_cache_expect_pgle", False),
              ("jax_compilation_cache_include_metadata_in_key", False),
              ("jax_persistent_cache_min_compile_time_secs", 1.0),
              ("jax_persistent_cache_min_entry_size_bytes", 0),
              ("jax_persistent_cache_enable_xla_caches",
               "xla_gpu_per_fusion_autotune_cache_dir"),
              ("jax_raise_persistent_cache_errors", False),
              ("jax_remove_custom_partitioning_ptr_from_cache_key", False),
              ("jax_share_binary_between_hosts", False),
              ("jax_share_binary_between_hosts_timeout_ms", 1200000)),
    # GPU and TPU backends (JAX documents these as GPU- or TPU-only).
    "gpu/tpu": (("jax_cuda_visible_devices", "all"), ("jax_rocm_visible_devices", "all"),
                ("jax_oneapi_visible_devices", "all"), ("jax_use_magma", "auto"),
                ("jax_enable_pgle", False), ("jax_pgle_profiling_runs", 3),
                ("jax_pgle_aggregation_percentile", 90),
                ("jax_threefry_gpu_kernel_lowering", False),
                ("jax_bcoo_cusparse_lowering", False), ("jax_mosaic_allow_hlo", False),
                ("jax_pallas_use_mosaic_gpu", True), ("jax_pallas_verbose_errors", False),
                ("jax_pallas_enable_debug_checks", False), ("jax_pallas_poison_buffers", False),
                ("jax_use_emit_pipeline_primitive", False),
                ("jax_ragged_dot_use_gpu_pallas_triton_lowering", False),
                ("jax_ragged_dot_use_ragged_dot_instruction", True),
                ("jax_mock_gpu_topology", ""), ("mock_num_gpu_processes", 0)),
    # Multi-host runtime services (jaxlite's processes meet over MPI).
    "runtime": (("jax_cpu_collectives_implementation", "gloo"),
                ("jax_cpu_enable_async_dispatch", True),
                ("jax_cpu_get_global_topology_timeout_minutes", 5),
                ("jax_cpu_get_local_topology_timeout_minutes", 2),
                ("jax_cross_host_transfer_socket_address", ""),
                ("jax_cross_host_transfer_timeout_seconds", None),
                ("jax_cross_host_transfer_transfer_size", None),
                ("jax_cross_host_transport_addresses", ""),
                ("jax_force_dcn_cross_host_transfers", False),
                ("jax_enable_preemption_service", True), ("jax_enable_recoverability", False),
                ("jax_distributed_debug", False), ("jax_sort_devices_by_process_index", True),
                ("jax_thread_guard", False), ("jax_check_proxy_envs", True),
                ("jax_debug_leaked_clients_on_clear_backends", False),
                ("jax_array_garbage_collection_guard", None)),
    # Migrations inside JAX's implementation (jaxlite's behaviour is JAX 0.10.2's defaults).
    "internal": (("jax_custom_vjp3", False), ("jax_remat3", False), ("jax_scan3", False),
                 ("jax_disable_bwd_checks", False), ("jax_refs_to_pins", False),
                 ("jax_use_direct_linearize", True), ("jax_use_simplified_jaxpr_constants",
                                                      False),
                 ("jax_mutable_array_checks", True), ("jax_auto_pcast", True),
                 ("check_vma", False), ("jax_use_shardy_partitioner", True),
                 ("jax_remove_size_one_mesh_axis_from_type", False),
                 ("jax_disable_vmap_shmap_error", False),
                 ("jax_captured_constants_report_frames", 0),
                 ("jax_captured_constants_warn_bytes", 2000000000),
                 ("jax_log_checkpoint_residuals", False), ("jax_pprint_use_color", True),
                 ("jax_tracer_error_num_traceback_frames", 5),
                 ("jax_explicit_x64_dtypes", "warn"),
                 ("jax_error_checking_behavior_divide", "ignore"),
                 ("jax_error_checking_behavior_nan", "ignore"),
                 ("jax_error_checking_behavior_oob", "ignore")),
}
_NOOP_WHY = {
    "xla": "no effect in jaxlite: it configures XLA's compiler, which jaxlite does not use",
    "cache": "no effect in jaxlite: it configures XLA's persistent compilation cache",
    "gpu/tpu": "no effect on CPU (GPU/TPU only in JAX)",
    "runtime": "no effect in jaxlite: it configures JAX's multi-host runtime services",
    "internal": "no effect in jaxlite: it toggles a migration inside JAX's implementation; "
                "jaxlite behaves as JAX 0.10.2 with the default",
}
_CHOICES.update({
    "jax_array_garbage_collection_guard": (None, "allow", "log", "fatal"),
    "jax_explicit_x64_dtypes": ("allow", "warn", "error"),
    "jax_send_traceback_to_runtime": ("off", "minimal", "full"),
    "jax_cpu_collectives_implementation": ("gloo", "mpi", "megascale"),
    "jax_error_checking_behavior_divide": ("ignore", "raise"),
    "jax_error_checking_behavior_nan": ("ignore", "raise"),
    "jax_error_checking_behavior_oob": ("ignore", "raise"),
})


def _parser(default):
    if isinstance(default, bool):
        return _parse_bool
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    return str


for _name, _default, _doc, _choices in _EFFECTIVE:
    config.define(_name, _default, _doc, env=_name.upper(), parse=_parser(_default))
    if _choices is not None:
        _CHOICES[_name] = _choices
for _kind, _flags in _NOOPS.items():
    for _name, _default in _flags:
        if _name not in config._flags:
            config.define(_name, _default, f"Accepted for compatibility; {_NOOP_WHY[_kind]}.",
                          parse=_parser(_default))


def _check_export_version(v):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"jax_export_calling_convention_version expects an int, got {v!r}")


config.add_validator("jax_export_calling_convention_version", _check_export_version)


def _apply_logging(name):
    if name not in ("jax_logging_level", "jax_debug_log_modules"):
        return
    import logging
    if name == "jax_logging_level":
        level = config._flags["jax_logging_level"].value
        if level not in (None, "NOTSET"):
            logging.getLogger("jaxlite").setLevel(level)
        else:
            logging.getLogger("jaxlite").setLevel(logging.NOTSET)
        return
    for mod in filter(None, (m.strip() for m in
                             config._flags["jax_debug_log_modules"].value.split(","))):
        if mod == "jax" or mod.startswith("jax."):
            mod = "jaxlite" + mod[3:]
        logging.getLogger(mod).setLevel(logging.DEBUG)


config.add_listener(_apply_logging)

allow_f16_reductions = _FlagContext(
    "jax_allow_f16_reductions", "Context manager for jax_allow_f16_reductions: with False, "
    "reduce_sum over float16/bfloat16 operands raises ValueError within the block.")
legacy_prng_key = _FlagContext(
    "jax_legacy_prng_key", "Context manager for jax_legacy_prng_key ('allow', 'warn' or "
    "'error' for raw uint32 keys passed to jax.random).", boolean=False)
array_garbage_collection_guard = _FlagContext(
    "jax_array_garbage_collection_guard", "Context manager for "
    "jax_array_garbage_collection_guard (no effect in jaxlite).", boolean=False)
thread_guard = _FlagContext(
    "jax_thread_guard", "Context manager for jax_thread_guard (no effect in jaxlite).")
auto_pcast = _FlagContext(
    "jax_auto_pcast", "Context manager for jax_auto_pcast (no effect in jaxlite).")
remove_size_one_mesh_axis_from_type = _FlagContext(
    "jax_remove_size_one_mesh_axis_from_type", "Context manager for "
    "jax_remove_size_one_mesh_axis_from_type (no effect in jaxlite).")
jax2tf_associative_scan_reductions = _FlagContext(
    "jax2tf_associative_scan_reductions", "Context manager for "
    "jax2tf_associative_scan_reductions (no effect in jaxlite: there is no jax2tf).")


class UserContext:
    """A jit-cache-sensitive context of the user's (``jax.make_user_context``): its value is
    part of jit's cache key, so changing it retraces and recompiles. ``with ctx(value):``
    sets it within a block; ``ctx.value`` reads it."""

    def __init__(self, name):
        self._name = name

    @property
    def value(self):
        return config._flags[self._name].value

    def __call__(self, new_val):
        """A context manager setting the context's value within a ``with`` block."""
        return config.override(self._name, new_val)

    def __repr__(self):
        return f"<user context {self._name}={self.value!r}>"


_user_contexts = [0]


def make_user_context(default_value=None):
    """A new jit-cache-sensitive context with ``default_value``: jitted functions called
    under different values of it are traced and compiled separately."""
    _user_contexts[0] += 1
    name = f"jax_user_context_{_user_contexts[0]}"
    config.define(name, default_value, "A user context (jax.make_user_context).",
                  in_trace_context=True)
    return UserContext(name)
