"""Tokens: ``lax.create_token`` and ``lax.after_all`` (JAX's ordering values, printed
``Tok``).

A token carries no data; it orders side effects in XLA. jaxlite runs effects in program
order anyway, so a token is a value of an extended dtype whose physical data is one bool:
the transformations pass it around like a key array, and jit takes and returns it.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Token", "TOKEN", "create_token_p", "after_all_p", "create_token", "after_all"]


class token_type(dtypes.extended):
    """Abstract scalar type of tokens."""


class TokenTy(dtypes.ExtendedDType):
    """The dtype of tokens (an extended dtype over one bool of data)."""
    type = token_type
    name = "token"
    short_name = "Tok"
    kind = "V"
    itemsize = 0
    physical_dtype = np.dtype(bool)
    physical_shape = ()
    dtype = np.dtype(bool)

    def physical_aval(self, aval):
        """One bool per token."""
        return ShapedArray(tuple(aval.shape), self.physical_dtype)

    def to_physical(self, x):
        """The bool data of the concrete token ``x``."""
        return x._data

    def from_physical(self, data):
        """The token over ``data``."""
        return Token(data)

    def __repr__(self):
        return "token"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, TokenTy)

    def __hash__(self):
        return hash(TokenTy)


TOKEN = TokenTy()


class Token:
    """A token value (``lax.create_token()``): it only orders effects."""
    __slots__ = ("_data",)
    shape = ()
    ndim = 0
    size = 1
    weak_type = False
    dtype = TOKEN

    def __init__(self, data=None):
        self._data = data if data is not None else ArrayImpl(np.asarray(True), False)

    @property
    def aval(self):
        return ShapedArray((), TOKEN)

    def block_until_ready(self):
        """Tokens are always ready; returns self."""
        return self

    def __repr__(self):
        return "Token()"


dtypes.extended_array_types.add(Token)


class CreateToken(Primitive):
    """``create_token``: a new token."""
    name = "create_token"
    jvp = NOT_DIFFERENTIABLE
    accepts_extended = True
    effectful = False

    def eager(self, args, params):
        return Token()

    def impl(self):
        return np.asarray(True)

    def abstract_eval(self):
        return ShapedArray((), TOKEN)

    def physical(self, avals):
        return np.asarray(True)

    def batch(self, size, args, dims):
        return self.bind(), None


class AfterAll(Primitive):
    """``after_all(*tokens)``: a token ordered after all of ``tokens``."""
    name = "after_all"
    jvp = NOT_DIFFERENTIABLE
    accepts_extended = True

    def eager(self, args, params):
        self.abstract_eval(*[getattr(a, "aval", None) or ShapedArray(np.shape(a),
                                                                      np.asarray(a).dtype)
                             for a in args])
        return Token()

    def impl(self, *data):
        return np.asarray(True)

    def abstract_eval(self, *avals):
        if not all(a is not None and isinstance(a.dtype, TokenTy) for a in avals):
            raise TypeError("Arguments to after_all must be tokens")
        return ShapedArray((), TOKEN)

    def physical(self, avals, *data):
        return np.asarray(True)

    def batch(self, size, args, dims):
        return self.bind(*args), None


create_token_p = CreateToken()
after_all_p = AfterAll()


def create_token(_=None):
    """A new token (the argument is ignored, as in JAX's old signature)."""
    return create_token_p.bind()


def after_all(*operands):
    """A token ordered after all of ``operands`` (tokens; TypeError otherwise)."""
    return after_all_p.bind(*operands)
