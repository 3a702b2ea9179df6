"""``jax._src.traceback_util``: libraries register their source directories as internal and
mark their API functions, whose exceptions are then filtered as jaxlite's are. The
registered directories are also skipped when jaxlite records the user's line of an
equation (so jaxprs and errors name the library's caller)."""
from jaxlite._src.traceback_util import (  # noqa: F401
    UnfilteredStackTrace,
    api_boundary,
    exclude_paths as _exclude_paths,
    filter_traceback,
    include_filename,
    include_frame,
    register_exclusion,
)
