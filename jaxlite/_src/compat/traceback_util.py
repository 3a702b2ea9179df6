"""``jax._src.traceback_util``: libraries register their source directories as internal and
mark their API functions. The registered directories are also skipped when jaxlite records
the user's line of an equation (so jaxprs and errors name the library's caller)."""
import functools

from jaxlite._src.core.source_info import register_exclusion as _skip_in_source_info

_exclude_paths: list[str] = []


def register_exclusion(path):
    """Record ``path`` (a library's source directory) as one whose frames are internal."""
    _exclude_paths.append(path)
    _skip_in_source_info(path)


def api_boundary(fun=None, **kwargs):
    """Decorator marking a public API function; returns it unchanged (also usable as
    ``api_boundary(repro_api_name=...)``)."""
    if fun is None:
        return functools.partial(api_boundary, **kwargs)
    return fun


def include_filename(filename):
    """Whether frames of ``filename`` are shown (not jaxlite's, not a registered library's)."""
    from jaxlite._src.core.source_info import _is_internal
    return not _is_internal(filename) and not any(
        filename.startswith(p) for p in _exclude_paths)


def include_frame(frame):
    """Whether the frame ``frame`` is shown in filtered tracebacks."""
    return include_filename(frame.f_code.co_filename)
