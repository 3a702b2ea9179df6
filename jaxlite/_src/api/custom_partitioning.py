"""``jax.experimental.custom_partitioning``: functions with their own partitioning rules.

``custom_partitioning(fun)`` traces ``fun`` into the ``custom_partitioning`` primitive
(prims/custom_partitioning.py) with the rules given to ``def_partition``. jaxlite checks the
rules as JAX does (the Shardy ``sharding_rule`` in its einsum-like notation, parsed into
``SdyShardingRule``) and computes the function itself; its partitioner does not call
``partition`` (it runs the operation on whole operands), so results are the function's.
"""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters.staging import closed_jaxpr_from_trace, trace_to_jaxpr
from jaxlite._src.prims.custom_partitioning import custom_partitioning_p

__all__ = ["custom_partitioning", "custom_partitioning_p", "BATCHING", "CompoundFactor",
           "ArrayMapping", "SdyShardingRule", "str_to_sdy_sharding_rule"]

# The leading batching dimensions of a value (``...`` in a rule string).
BATCHING = "\u2026"


def _check_factor(f):
    if not f[0].isalpha():
        raise ValueError(f"Factor names have to start with a letter, but got '{f[0]}'")
    for ch in f[1:]:
        if not (ch == "_" or ch.isalnum()):
            raise ValueError(f"Unknown character '{ch}'")


def _is_batching(f):
    return bool(f) and f[0] == BATCHING and (len(f) == 1 or f[1:].isdigit())


class CompoundFactor(tuple):
    """Several factors making up one dimension, e.g. ``CompoundFactor('b', 'c')``."""

    def __new__(cls, *factors):
        if len(factors) < 2:
            raise ValueError("A compound factor should contain at least two factors")
        for f in factors:
            if not isinstance(f, str):
                raise ValueError("Each element of CompoundFactor must be a str, but got "
                                 f"{type(f)}")
            if _is_batching(f):
                raise ValueError("Ellipsis can't be used in a compound factor")
            _check_factor(f)
        return tuple.__new__(cls, factors)


class ArrayMapping(tuple):
    """The factors of the dimensions of one operand or result: factor names or
    CompoundFactors, optionally led by ``BATCHING``."""

    def __new__(cls, *dims):
        for i, d in enumerate(dims):
            if not isinstance(d, (str, CompoundFactor)):
                raise ValueError("Each element of ArrayMapping must be a str or "
                                 f"CompoundFactor, but got {type(d)}")
            if isinstance(d, str):
                if _is_batching(d):
                    if i:
                        raise ValueError("Ellipsis can only be used at the beginning of a "
                                         "dimension")
                else:
                    _check_factor(d)
        return tuple.__new__(cls, dims)


class SdyShardingRule:
    """A Shardy sharding rule: the ArrayMappings of the operands and results, the sizes of
    factors used only inside compound factors, and the special factor kinds."""

    def __init__(self, operand_mappings, result_mappings, *, reduction_factors=(),
                 need_replication_factors=(), permutation_factors=(), **factor_sizes):
        whole = {}   # factor -> whether some dimension is exactly that factor
        for m in tuple(operand_mappings) + tuple(result_mappings):
            for d in m:
                if isinstance(d, str):
                    whole[d] = True
                else:
                    for f in d:
                        whole.setdefault(f, False)
        for f in factor_sizes:
            if f not in whole:
                raise ValueError(f"Factor {f} is not used in the rule, but size is provided")
        for f, is_whole in whole.items():
            if not is_whole and f not in factor_sizes:
                raise ValueError(f"Factor {f} is only used in compound factors; must "
                                 "specify its size")
            if is_whole and f in factor_sizes:
                raise ValueError(f"Factor {f} represents a whole dimension; do not specify "
                                 "its size")
        seen = set()
        for kind, fs in (("reduction_factors", reduction_factors),
                         ("need_replication_factors", need_replication_factors),
                         ("permutation_factors", permutation_factors)):
            if not isinstance(fs, tuple):
                raise ValueError(f"{kind} must be a tuple of factors")
            if len(set(fs)) != len(fs):
                raise ValueError(f"{kind} contains duplicated factors")
            for f in fs:
                if f not in whole:
                    raise ValueError(f"Factor {f} in {kind} is not used in the rule")
                if f in seen:
                    raise ValueError(f"Factor {f} can only be in one of the reduction, need "
                                     "replication, or permutation factor sets.")
                seen.add(f)
        self.operand_mappings = tuple(operand_mappings)
        self.result_mappings = tuple(result_mappings)
        self.factor_sizes = factor_sizes
        self.reduction_factors = reduction_factors
        self.need_replication_factors = need_replication_factors
        self.permutation_factors = permutation_factors

    def __str__(self):
        special = "".join(f" {k}={v}" for k, v in (
            ("reduction_factors", self.reduction_factors),
            ("need_replication_factors", self.need_replication_factors),
            ("permutation_factors", self.permutation_factors)) if v)
        return (f"SdyShardingRule({self.operand_mappings}, {self.result_mappings}, "
                f"{self.factor_sizes}{special})")

    __repr__ = __str__


def _parse_side(text):
    """The ArrayMappings of one side (operands or results) of a rule string."""
    text = " ".join(text.split())
    if not text:
        return (ArrayMapping(),)
    values, dims, name, compound = [], [], None, None

    def add(f):
        (dims if compound is None else compound).append(f)

    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == BATCHING:
            if name is not None or compound is not None or dims:
                raise ValueError("Ellipsis can only be used at the beginning of a dimension")
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            add(BATCHING + (str(int(text[i:j])) if j > i else "0"))
            i = j
        elif ch in "(), ":
            if name is not None:
                add(name)
                name = None
            if ch == "(":
                if compound is not None:
                    raise ValueError("Compound factors should be one level, nested brackets "
                                     "are not allowed")
                compound = []
            elif ch == ")":
                if compound is None:
                    raise ValueError("Brackets are not balanced")
                if len(compound) <= 1:
                    raise ValueError("Brackets should contain at least two factors")
                dims.append(CompoundFactor(*compound))
                compound = None
            elif ch == ",":
                values.append(ArrayMapping(*dims))
                dims = []
        elif ch == "_" or ch.isalnum():
            if name is None and ch.isdigit():
                raise ValueError(f"Factor names have to start with a letter, but got '{ch}'")
            name = ch if name is None else name + ch
        else:
            raise ValueError(f"Unknown character '{ch}'")
    if compound is not None:
        raise ValueError(f"Brackets are not balanced in rule: '{text}'")
    if name is not None:
        add(name)
    values.append(ArrayMapping(*dims))
    return tuple(values)


def str_to_sdy_sharding_rule(rule, *, reduction_factors=(), need_replication_factors=(),
                             permutation_factors=(), **factor_sizes):
    """The SdyShardingRule of an einsum-like string such as ``"i j, j k -> i k"``."""
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a str, but got {type(rule)}")
    if not all(isinstance(s, int) for s in factor_sizes.values()):
        raise TypeError(f"factor_sizes must be a dict of str to int, but got {factor_sizes}")
    if BATCHING in rule:
        raise ValueError(f"Unknown character '{BATCHING}'")
    if "." in rule:
        rule = rule.replace("...", BATCHING)
        if "." in rule:
            raise ValueError("Character '.' must be used inside ellipsis '...'")
    try:
        lhs, rhs = rule.split("->")
    except ValueError:
        raise ValueError(f"There is no -> in rule: '{rule}'") from None
    return SdyShardingRule(_parse_side(lhs), _parse_side(rhs),
                           reduction_factors=reduction_factors,
                           need_replication_factors=need_replication_factors,
                           permutation_factors=permutation_factors, **factor_sizes)


class custom_partitioning:
    """A function with custom partitioning rules (``def_partition``). Calling it traces
    ``fun`` into the ``custom_partitioning`` primitive; ``static_argnums`` are passed to
    ``fun`` as Python values (and to the rules as ``static_args``)."""

    def __init__(self, fun, static_argnums=()):
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.partition = None
        self.propagate_user_sharding = None
        self.infer_sharding_from_operands = None
        self.sharding_rule = None
        self.decode_shardings = True

    def __getattr__(self, name):
        return getattr(self.__dict__["fun"], name)

    def def_partition(self, partition, infer_sharding_from_operands=None,
                      propagate_user_sharding=None, decode_shardings=True, sharding_rule=None,
                      *, reduction_factors=(), need_replication_factors=(),
                      permutation_factors=(), **factor_sizes):
        """Set the partitioning rules; ``sharding_rule`` is a string (parsed into an
        SdyShardingRule with the factor options), an SdyShardingRule or a callable."""
        self.partition = partition
        self.propagate_user_sharding = propagate_user_sharding
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.decode_shardings = decode_shardings
        if sharding_rule is None or callable(sharding_rule) or \
                isinstance(sharding_rule, SdyShardingRule):
            extra = dict(factor_sizes)
            for k, v in (("reduction_factors", reduction_factors),
                         ("need_replication_factors", need_replication_factors),
                         ("permutation_factors", permutation_factors)):
                if v:
                    extra[k] = v
            if extra:
                raise ValueError(f"Unknown keyword arguments: {extra}")
            self.sharding_rule = sharding_rule
        else:
            self.sharding_rule = str_to_sdy_sharding_rule(
                sharding_rule, reduction_factors=reduction_factors,
                need_replication_factors=need_replication_factors,
                permutation_factors=permutation_factors, **factor_sizes)
        return partition

    def __call__(self, *args, **kwargs):
        import inspect
        if kwargs:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            args = bound.args + tuple(bound.kwargs.values())
        static = set(self.static_argnums)
        static_args = tuple(args[i] for i in self.static_argnums)
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_util.tree_flatten(tuple(dyn))
        out_tree = []

        def flat(*xs):
            it = iter(tree_util.tree_unflatten(in_tree, xs))
            full = [args[i] if i in static else next(it) for i in range(len(args))]
            outs, tree = tree_util.tree_flatten(self.fun(*full))
            out_tree.append(tree)
            return outs
        jaxpr, tconsts, cvals = trace_to_jaxpr(flat, [aval_of_value(x) for x in leaves])
        closed = closed_jaxpr_from_trace(jaxpr, tconsts, cvals)   # (traced closures first)
        outs = custom_partitioning_p.bind(
            *tconsts, *leaves, call=closed, partition=self.partition,
            propagate_user_sharding=self.propagate_user_sharding,
            infer_sharding_from_operands=self.infer_sharding_from_operands,
            decode_shardings=self.decode_shardings, sharding_rule=self.sharding_rule,
            in_tree=in_tree, out_tree=out_tree[0], static_args=static_args)
        return tree_util.tree_unflatten(out_tree[0], outs)
