"""The package layers of DESIGN.md ("Layers, as they must stay"), checked on the source.

Every module under purehep/ is parsed with ``ast``; every import in it (at module level or
inside a function, absolute or relative) is resolved to the package it reaches. The test
asserts that no two packages import each other through any chain, that every import goes to
the importer's own layer or one below, and that no module is longer than 800 lines. A lazy
import inside a function counts like any other: it still makes the importer depend on the
imported package.
"""
import ast
import os
from collections import defaultdict

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "purehep")
MAX_LINES = 800

# DESIGN.md's table, bottom first. A name is a package under purehep/ or a top-level module;
# "" is purehep/__init__.py (the public face). The bottom rows split DESIGN's last row
# ("chunks/ filters/ kernels/ io/ format/ below everything else") in the order they use
# each other, under the plain value modules every layer shares.
LAYERS = (
    # values with no file behind them: errors, references, h5py's dtype helpers, index
    # arguments to selections, the version
    ("errors", "version", "reference", "dtypes", "selections"),
    ("kernels", "io"),                     # numba kernels; byte sources and sinks
    ("filters",),                          # the filter pipeline, by filter id
    ("format",),                           # spec structures and messages, their codecs
    ("chunks",),                           # the storage of each layout class, chunk indexes
    ("write",),                            # the one writer: knows structures, not objects
    ("hl",),                               # h5py-like objects and h5py's low-level modules
    ("sparse", "table", "index", "query", "versioned", "arkouda", "inspect"),   # extensions
    # bridges (their short public names too), commands, the public face
    ("integrations", "h5netcdf", "dask", "pandas", "cli", "demo", "__main__", ""),
)
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}


def _modules():
    """(dotted module name, is package, path) of every module under purehep/."""
    for folder, _, files in os.walk(ROOT):
        for fname in sorted(files):
            if not fname.endswith(".py"):
                continue
            path = os.path.join(folder, fname)
            rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].split(os.sep)
            is_pkg = rel[-1] == "__init__"
            yield ".".join(rel[:-1] if is_pkg else rel), is_pkg, path


def _targets(module, is_pkg, node):
    """The purehep modules (dotted) one import statement reaches."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "purehep"]
    if node.level == 0:
        if not (node.module or "").split(".")[0] == "purehep":
            return []
        base = node.module
    else:
        parts = module.split(".")
        parts = parts if is_pkg else parts[:-1]
        parts = parts[:len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    # ``from purehep import hl`` reaches purehep.hl; ``from purehep import File`` the top
    return [f"{base}.{a.name}" if base == "purehep" else base for a in node.names]


# h5py's low-level modules (purehep.h5t, purehep.h5d, ...) are the other face of hl/'s
# objects (the ids behind Dataset, Group, File): one layer with hl/, calling each other
LOW_LEVEL = {"h5", "h5a", "h5d", "h5ds", "h5f", "h5g", "h5i", "h5l", "h5o", "h5p", "h5r",
             "h5s", "h5t", "h5z", "h5py_warnings"}


def _package(dotted):
    """The layer name of a dotted purehep module: its package, its top-level module, or ""."""
    parts = dotted.split(".")
    if len(parts) == 1:
        return ""
    name = parts[1]
    if name in LOW_LEVEL:
        return "hl"
    if len(parts) == 2 and name not in LAYER and not os.path.exists(os.path.join(ROOT, name)):
        return ""                       # a name defined in purehep/__init__.py (File, ...)
    return name


def _imports():
    """[(importer package, imported package, path, line)] of every cross-package import."""
    out = []
    for module, is_pkg, path in _modules():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                src = _package(module)
                for target in _targets(module, is_pkg, node):
                    dst = _package(target)
                    if dst != src:
                        out.append((src, dst, os.path.relpath(path, ROOT), node.lineno))
    return out


IMPORTS = _imports()


def test_every_package_has_a_layer():
    names = {p for src, dst, _, _ in IMPORTS for p in (src, dst)}
    names |= {_package(m) for m, _, _ in _modules()}
    assert sorted(names - set(LAYER)) == []


def test_imports_go_down():
    up = [f"{path}:{line}: {src} imports {dst}" for src, dst, path, line in IMPORTS
          if LAYER.get(dst, -1) > LAYER.get(src, -1)]
    assert up == []


def _cycle(edges):
    """One cycle of the directed graph ``edges`` (dict of sets), or None."""
    state, stack = {}, []

    def visit(v):
        state[v] = "open"
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == "open":
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = "done"
        return None

    for v in sorted(edges):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_no_cycle_between_packages():
    edges = defaultdict(set)
    for src, dst, _, _ in IMPORTS:
        edges[src].add(dst)
    cycle = _cycle(edges)
    where = [] if cycle is None else [
        f"{path}:{line}: {a} -> {b}" for a, b in zip(cycle, cycle[1:])
        for src, dst, path, line in IMPORTS if (src, dst) == (a, b)]
    assert cycle is None, where


def test_cycle_finder_finds_one():
    """The check above can fail: a two-package loop and a longer one are both reported."""
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


@pytest.mark.parametrize("code, module, is_pkg, expected", [
    ("from ..format import selection", "purehep.chunks.read", False, ["purehep.format"]),
    ("from . import ChunkedStorage", "purehep.chunks", True, ["purehep.chunks"]),
    ("from .. import selections", "purehep.hl.dataset", False, ["purehep.selections"]),
    ("from purehep import File", "purehep.cli.ls", False, ["purehep.File"]),
    ("import purehep.hl.files", "purehep.demo", False, ["purehep.hl.files"]),
    ("import numpy", "purehep.hl.files", False, []),
])
def test_imports_resolved(code, module, is_pkg, expected):
    """Relative imports resolve against the importing module (its package for __init__)."""
    node = ast.parse(code).body[0]
    assert _targets(module, is_pkg, node) == expected


def test_package_of():
    assert _package("purehep.format.messages.layout") == "format"
    assert _package("purehep.selections") == "selections"
    assert _package("purehep.File") == ""
    assert _package("purehep") == ""


def test_modules_are_short():
    long = []
    for _, _, path in _modules():
        with open(path, encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            long.append(f"{os.path.relpath(path, ROOT)}: {n} lines")
    assert long == []
