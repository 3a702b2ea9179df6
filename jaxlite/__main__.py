"""``python -m jaxlite run script.py [args]``: run a JAX program unmodified on jaxlite."""
import sys

from jaxlite._src.import_hook import main

if __name__ == "__main__":
    sys.exit(main())
