"""A small Wadler/Lindig-style pretty printer used to print jaxprs in JAX's text format.

Documents are built from ``text``, ``concat``, ``brk`` (a break: its text when its group fits
on the line, a newline otherwise), ``group`` and ``nest`` (indentation). A group is laid out
flat when all of it fits in the remaining width; otherwise its own breaks become newlines and
the groups inside it decide for themselves.
"""
from __future__ import annotations

__all__ = ["Doc", "text", "concat", "brk", "group", "nest", "join", "nil"]


class Doc:
    """A pretty-printer document; ``str(doc)`` formats it at width 80."""
    __slots__ = ()

    def __add__(self, other: "Doc") -> "Doc":
        return Concat((self, other))

    def __str__(self) -> str:
        return self.format()

    def format(self, width: int = 80) -> str:
        """Lay the document out at the given line width and return the text."""
        return _format(self, width)


class Text(Doc):
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children):
        self.children = tuple(children)


class Brk(Doc):
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n = n
        self.child = child


_NIL = Concat(())


def nil() -> Doc:
    """The empty document."""
    return _NIL


def text(s: str) -> Doc:
    """Literal text (must not contain newlines to lay out correctly)."""
    return Text(s)


def concat(docs) -> Doc:
    """The documents one after the other."""
    return Concat(docs)


def brk(s: str = " ") -> Doc:
    """A break: ``s`` if the enclosing group is flat, else a newline plus indentation."""
    return Brk(s)


def group(doc: Doc) -> Doc:
    """Lay ``doc`` out flat if it fits on the rest of the line."""
    return Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    """Indent the lines that breaks inside ``doc`` start by ``n`` more columns."""
    return Nest(n, doc)


def join(sep: Doc, docs) -> Doc:
    """Concatenate ``docs`` with ``sep`` between each pair."""
    docs = list(docs)
    if not docs:
        return _NIL
    out = [docs[0]]
    for d in docs[1:]:
        out.append(sep)
        out.append(d)
    return Concat(out)


def _flat_width(doc, limit):
    """Width of ``doc`` laid flat, stopping early once it exceeds ``limit``."""
    total = 0
    stack = [doc]
    while stack:
        d = stack.pop()
        t = type(d)
        if t is Text:
            total += len(d.s)
        elif t is Brk:
            total += len(d.s)
        elif t is Concat:
            stack.extend(reversed(d.children))
        else:  # Group / Nest
            stack.append(d.child)
        if total > limit:
            return total
    return total


def _format(doc, width):
    out = []
    col = 0
    # stack entries: (indent, flat, doc)
    stack = [(0, False, doc)]
    while stack:
        indent, flat, d = stack.pop()
        t = type(d)
        if t is Text:
            out.append(d.s)
            col += len(d.s)
        elif t is Concat:
            for c in reversed(d.children):
                stack.append((indent, flat, c))
        elif t is Brk:
            if flat:
                out.append(d.s)
                col += len(d.s)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif t is Nest:
            stack.append((indent + d.n, flat, d.child))
        else:  # Group
            fits = flat or _flat_width(d.child, width - col) <= width - col
            stack.append((indent, fits, d.child))
    return "".join(out)
