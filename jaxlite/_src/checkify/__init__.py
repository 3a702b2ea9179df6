"""checkify: functionalised run-time checks (``jax.experimental.checkify``).

``errors.py`` holds the error values and exception classes, ``core.py`` the ``check``
primitive, the ``checkify`` transformation and its interpreter, ``rules.py`` the per-primitive
rules (nan, division and index checks; control flow and calls carrying the error through).
"""
