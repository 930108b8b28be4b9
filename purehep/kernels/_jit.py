"""The ``njit`` decorator every kernel uses: numba's with cache=True, or identity without numba."""
import os

try:
    if os.environ.get("PUREHEP_NO_NUMBA"):
        raise ImportError
    import numba
except ImportError:  # numpy-only Python: kernels run as plain Python
    numba = None


def njit(*args, **kwargs):
    """numba.njit(cache=True, nogil=True) when numba is available, else the plain function."""
    if numba is None:
        if args and callable(args[0]):
            return args[0]
        return lambda f: f
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    return numba.njit(*args, **kwargs)


def prange(*args):
    return numba.prange(*args) if numba is not None else range(*args)


JIT_ENABLED = numba is not None and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")
