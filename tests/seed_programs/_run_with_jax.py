"""Run programs with the installed (reference) JAX: ``python _run_with_jax.py [--json OUT]
PROGRAM...`` (see ``_batch.py``).

The only change to JAX is how its jaxprs print NumPy integer scalars inside parameters:
as on NumPy 1 (``2``, not ``np.int64(2)``), the text jaxlite is specified to print; see
``tests/jax_print_compat.py``.
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from _batch import main  # noqa: E402
from jax_print_compat import use_numpy1_scalar_repr  # noqa: E402

if __name__ == "__main__":
    use_numpy1_scalar_repr()
    main(sys.argv)
