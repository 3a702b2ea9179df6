"""The primitives: one module per family, one class per primitive holding all its rules.

Rules bind other primitives directly (never the lax wrappers above them) through the helpers
of ``ad_util`` (the AD values ``Zero`` and ``UndefinedPrimal``, tangent helpers and lax-like
binding helpers) and ``batch_util`` (``moveaxis``, ``bdim_at_front``, ``loop_batch``);
``operands`` turns Python values into operands. The interpreters build on these modules too.

The higher-order primitives (``call``, ``control``, ``scan``, ``custom``, ``remat``,
``linear_call``) carry jaxprs as parameters; their rules run the interpreters on them, so
they sit above ``interpreters/`` while the first-order families sit below it.
"""
