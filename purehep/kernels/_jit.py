"""Loop kernels compiled by numba only when the work repays loading it.

Every kernel has a vectorised numpy form, used for small work and whenever numba is missing
or disabled (``NUMBA_DISABLE_JIT=1``, ``PUREHEP_NO_NUMBA=1``), and may have a loop form
(``@loop``) that numba compiles with ``cache=True, nogil=True``. Nothing here imports numba:
``Loop.worth(seconds)`` adds up the time a kernel's numpy form is estimated to lose against
the compiled loop, and the loop is compiled (or loaded from numba's cache) once that exceeds
what loading costs (``loading_cost``): importing numba unless something already did, numba's
registries for the first kernel of a process, and the kernel itself.
A small read in a fresh process therefore never waits for numba.

numba keeps its cache in the package's ``__pycache__`` or, when the installation is not
writable, in the user cache directory (``~/.cache/numba``; ``NUMBA_CACHE_DIR`` overrides
both), so read-only installs load compiled kernels too.

A loop kernel that calls another loop kernel is compiled with that one compiled first (the
callee's global name is bound to its numba dispatcher in the caller's compiled copy).
"""
import importlib.util
import os
import sys
import threading
import types

# what loading a compiled kernel costs (measured on the 2-core reference machine)
IMPORT_SECONDS = 0.2      # importing numba (and llvmlite)
FIRST_SECONDS = 0.2       # a process's first kernel: numba fills its typing and target registries
SCIPY_SECONDS = 0.3       # ... importing scipy.linalg, when installed (numba's BLAS check)
LOAD_SECONDS = 0.005      # each further kernel, loaded from the cache


def _jit_wanted():
    if os.environ.get("PUREHEP_NO_NUMBA"):
        return False
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return False
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


JIT_AVAILABLE = _jit_wanted()
_lock = threading.RLock()


class Loop:
    """A kernel written as loops: ``kernel.py`` is the plain function, calling the kernel
    runs the numba-compiled form (compiling it first) or, without numba, the plain one."""

    def __init__(self, py, options):
        self.py = py
        self.options = options
        self.owed = 0.0
        self._compiled = None
        self._plain = None
        self.__doc__ = py.__doc__
        self.__name__ = py.__name__

    def __call__(self, *args):
        return (self._compiled or self.compiled())(*args)

    def run(self, seconds, *args):
        """Run on ``args`` compiled when ``worth(seconds)``, else as plain Python."""
        return (self.compiled() if self.worth(seconds) else self.plain)(*args)

    @property
    def ready(self):
        """True once the compiled form is loaded (calls cost no more loading)."""
        return self._compiled is not None and JIT_AVAILABLE

    def worth(self, seconds):
        """Record that the numpy form would spend ``seconds`` more than the compiled loop on
        the work at hand; True when the compiled loop should run it (numba available and the
        loading paid for by now)."""
        if not JIT_AVAILABLE:
            return False
        if self._compiled is not None:
            return True
        self.owed += seconds
        return self.owed >= loading_cost()

    def compiled(self):
        """The numba-compiled form (the plain one without numba)."""
        with _lock:
            if self._compiled is None:
                self._compiled = _compile(self) if JIT_AVAILABLE else self.plain
            return self._compiled

    @property
    def plain(self):
        """The plain-Python form, calling the plain forms of the loop kernels it calls."""
        if self._plain is None:
            self._plain = _rebind(self.py, lambda k: k.plain)
        return self._plain


_scipy_installed = []             # [bool], found on first use


def loading_cost():
    """Estimated seconds to load one more compiled kernel in this process: numba's import
    unless done, its registries (and scipy.linalg, when scipy is installed and not yet
    imported) unless a kernel was loaded before, and the kernel itself."""
    cost = LOAD_SECONDS + (0.0 if "numba" in sys.modules else IMPORT_SECONDS)
    if not _registries_filled():
        if not _scipy_installed:
            try:
                _scipy_installed.append(importlib.util.find_spec("scipy") is not None)
            except (ImportError, ValueError):
                _scipy_installed.append(False)
        cost += FIRST_SECONDS + (SCIPY_SECONDS if _scipy_installed[0] and
                                 "scipy.linalg" not in sys.modules else 0.0)
    return cost


def _registries_filled():
    """Whether numba has filled its registries in this process (its first compiled or
    loaded function does, importing numba.np.linalg among others; a dispatcher made but
    never called has not)."""
    return "numba.np.linalg" in sys.modules


def _rebind(py, form):
    """A copy of ``py`` whose global names bound to Loop kernels are bound to ``form(kernel)``."""
    env = dict(py.__globals__)
    for name in py.__code__.co_names:
        callee = env.get(name)
        if isinstance(callee, Loop):
            env[name] = form(callee)
    fn = types.FunctionType(py.__code__, env, py.__name__, py.__defaults__, py.__closure__)
    fn.__qualname__ = py.__qualname__
    fn.__module__ = py.__module__
    fn.__doc__ = py.__doc__
    return fn


def _compile(kernel):
    import numba
    options = {"cache": True, "nogil": True, **kernel.options}
    return numba.njit(**options)(_rebind(kernel.py, Loop.compiled))


def entry_point(kernel, *example):
    """``kernel``'s compiled function for arguments of the types of ``example`` (which it
    is called on first, to compile or load that form), called without numba's dispatch: the
    dispatcher finds the compiled form for the argument types at every call (~0.4 us, a
    third of hashing a 2 KB B-tree node); arguments of other types must not be passed. The
    plain form without numba."""
    fn = kernel.compiled()
    overloads = getattr(fn, "overloads", None)
    if overloads is None:
        return fn
    fn(*example)
    found = overloads.get(tuple(fn.typeof_pyval(a) for a in example))
    return fn if found is None else found.entry_point


def loop(fn=None, **options):
    """Decorator: ``fn`` becomes a Loop kernel (numba options as keyword arguments)."""
    if fn is None:
        return lambda f: Loop(f, options)
    return Loop(fn, options)

