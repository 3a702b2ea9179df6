"""``jax._src.state.types``: the abstract value of a mutable array reference.

jaxlite has no ``jax.new_ref``/``jax.Ref`` values, so nothing is an ``AbstractRef``: the
class exists for libraries' ``isinstance`` checks (flax.nnx), which then answer False.
"""


class AbstractRef:
    """The abstract value of a mutable array reference (none exist in jaxlite)."""

    def __init__(self, inner_aval):
        raise NotImplementedError("jaxlite has no mutable array references (jax.new_ref)")
