"""The type errors of cond/switch branches and of loop carries, worded as JAX words them:
which function (name and source line), which part of the output or carry (its pytree path,
under the carry argument's own name), and what differs (pytree structure, dtype, shape)."""
from __future__ import annotations

import inspect

from jaxlite._src.tree_util import tree_flatten_with_path, tree_unflatten
from jaxlite._src.tree_util.errors import equality_errors, equality_errors_pytreedef
from jaxlite._src.tree_util.keys import keystr

__all__ = ["check_branch_outputs", "check_carry_type"]


def fun_sourceinfo(f):
    """``name at file:line`` of a Python function (its name alone when it has no code)."""
    name = getattr(f, "__name__", None) or type(f).__name__
    code = getattr(inspect.unwrap(f), "__code__", None) if callable(f) else None
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _mismatch(a1, a2):
    kinds = []
    if a1.dtype != a2.dtype:
        kinds.append("the dtypes do not match")
    if tuple(a1.shape) != tuple(a2.shape):
        kinds.append("the shapes do not match")
    if _vma_differs(a1, a2):
        kinds.append("the manual axis types do not match")
    if not kinds:
        return ""
    if len(kinds) == 1:
        return ", so " + kinds[0]
    return ", so " + ", ".join(kinds[:-1]) + ", and " + kinds[-1]


def _short(a):
    return a.str_short(short_dtypes=False)


def _same(a1, a2):
    return a1.dtype == a2.dtype and tuple(a1.shape) == tuple(a2.shape) and \
        not _vma_differs(a1, a2)


def _vma_differs(a1, a2, carry=False):
    """Whether two types differ in the manual axes they vary over (inside shard_map). A loop
    carry may come out varying over fewer axes than it went in (it is widened), not more."""
    v1, v2 = set(getattr(a1, "vma", ())), set(getattr(a2, "vma", ()))
    return bool(v2 - v1) if carry else v1 != v2


_VMA_DOC = "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more " \
    "information.\n\n"


def _pcast_hint(items):
    """JAX's hint for carries/branches that differ in their varying manual axes: apply
    ``lax.pcast(..., axes, to='varying')`` to each ``(axes, where)``."""
    if not items:
        return ""
    fixes = [f"applying `jax.lax.pcast(..., {axes!r}, to='varying')`{where}"
             for axes, where in items]
    if len(fixes) == 1:
        return f"This might be fixed by {fixes[0]}.\n{_VMA_DOC}"
    body = "".join(f"  * {f};\n" for f in fixes[:-1]) + f"  * {fixes[-1]}.\n"
    return f"This might be fixed by:\n{body}{_VMA_DOC}"


def _missing_vma(a_in, a_out):
    got = getattr(a_out, "vma", ())
    have = set(getattr(a_in, "vma", ()))
    return tuple(a for a in got if a not in have)


def _capitalize(s):
    return s[0].upper() + s[1:]


def _listing(diffs, carry=False):
    """One difference as a sentence, several as a bulleted list (JAX's two layouts: loop
    carries end each item with a newline, branch outputs join them with one)."""
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    if carry:
        return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _paths(tree, n):
    try:
        return [p for p, _ in tree_flatten_with_path(tree_unflatten(tree, [0] * n))[0]]
    except Exception:  # noqa: BLE001 - a custom node that cannot be rebuilt
        return [None] * n


def check_branch_outputs(api_name, name1, name2, f1, f2, tree1, avals1, tree2, avals2):
    """Raise JAX's TypeError when two branches' outputs differ in structure or type."""
    info = f"{name1} is {fun_sourceinfo(f1)}\n{name2} is {fun_sourceinfo(f2)}\n\n"
    if tree1 != tree2:
        diffs = [f"{name1} output{f' at path {keystr(p)}' if p else ''} is a {t1} but "
                 f"{name2} output{f' at path {keystr(p)}' if p else ''} is a {t2}, so {why}"
                 for p, t1, t2, why in equality_errors_pytreedef(tree1, tree2)]
        if not diffs:
            return
        text = f"{diffs[0]}.\n" if len(diffs) == 1 else _listing(diffs, carry=True)
        raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but "
                        f"they differ:\n\n{info}{text}\nRevise {name1} and/or {name2} so "
                        "that they have the same pytree structure.")
    paths = _paths(tree1, len(avals1))
    diffs = [f"the output of {name1}{f' at path {keystr(p)}' if p else ''} has type "
             f"{_short(a1)} but the corresponding output of {name2} has type "
             f"{_short(a2)}{_mismatch(a1, a2)}"
             for p, a1, a2 in zip(paths, avals1, avals2) if not _same(a1, a2)]
    hints = []
    for p, a1, a2 in zip(paths, avals1, avals2):
        if _vma_differs(a1, a2):
            at = f" at path {keystr(p)}" if p else ""
            lo, hi, who = (a1, a2, name1) if set(a1.vma) <= set(a2.vma) else (a2, a1, name2)
            hints.append((_missing_vma(lo, hi), f" to the output of {who}{at}"))
    if diffs:
        raise TypeError(f"{api_name} branches must have equal output types but they differ."
                        f"\n\n{info}{_listing(diffs)}\n{_pcast_hint(hints)}Revise {name1} "
                        f"and/or {name2} so that all output types match.")


def _carry_name(body_fun):
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    """Raise JAX's TypeError when a loop body's carry output differs from its input."""
    carry = _carry_name(body_fun)

    def component(p):
        if carry:
            return f"the input carry component {carry}{keystr(p)}" if p else \
                f"the input carry {carry}"
        return f"the input carry at path {keystr(p)}" if p else "the input carry"

    if in_tree != out_tree:
        try:
            ins = tree_unflatten(in_tree, list(in_avals))
            outs = tree_unflatten(out_tree, list(out_avals))
        except Exception:  # noqa: BLE001
            ins = None
        if ins is None:
            text = (f"the input tree structure is:\n{in_tree}\n"
                    f"the output tree structure is:\n{out_tree}\n")
        else:
            diffs = [f"{component(p)} is a {t1} but the corresponding component of the "
                     f"carry output is a {t2}, so {why}"
                     for p, t1, t2, why in equality_errors(ins, outs)]
            if not diffs:
                return
            text = _listing(diffs, carry=True)
        raise TypeError(f"{name} function carry input and carry output must have the same "
                        f"pytree structure, but they differ:\n\n{text}\nRevise the function "
                        "so that the carry output has the same pytree structure as the carry "
                        "input.")
    paths = _paths(in_tree, len(in_avals))

    def same(a1, a2):
        return a1.dtype == a2.dtype and tuple(a1.shape) == tuple(a2.shape) and \
            not _vma_differs(a1, a2, carry=True)
    diffs = [f"{component(p)} has type {_short(a1)} but the corresponding output carry "
             f"component has type {_short(a2)}{_mismatch(a1, a2)}"
             for p, a1, a2 in zip(paths, in_avals, out_avals) if not same(a1, a2)]
    hints = [(_missing_vma(a1, a2), f", to the initial carry value corresponding to "
              f"{component(p)}")
             for p, a1, a2 in zip(paths, in_avals, out_avals) if _vma_differs(a1, a2, True)]
    if diffs:
        raise TypeError(f"{name} function carry input and carry output must have equal types, "
                        f"but they differ:\n\n{_listing(diffs, carry=True)}\n"
                        f"{_pcast_hint(hints)}Revise the function so that all output types "
                        "match the corresponding input types.")
