"""lookup3 compiled straight to machine code by llvmlite (numba's code generator, installed
with it), for the process that has hashed too much for plain Python but not enough to repay
loading numba.

Importing llvmlite and compiling this one function takes ~50 ms; numba's import and first
kernel take ~0.45 s more (its registries, scipy.linalg). A fresh process reading 1,000
random elements of a 10 M-chunk dataset verifies 1,000 fixed-array pages of 8 KB: about
1 s of plain Python, 3 ms here. The function is Jenkins' ``hashlittle``
(spec Appendix C) as LLVM IR, for little-endian hosts and LLVM 15 and later (opaque
pointers); elsewhere, or if llvmlite is missing or fails, ``lookup3_function`` gives None
and the caller keeps its other forms (kernels/checksum.py).
"""
import importlib.util
import sys
import threading

from ._jit import JIT_AVAILABLE

COMPILE_SECONDS = 0.01       # parsing and compiling the IR (measured: 3-8 ms)
IMPORT_SECONDS = 0.04        # importing llvmlite.binding

_MIX = (("a", "c", 4, "b"), ("b", "a", 6, "c"), ("c", "b", 8, "a"),      # x -= y;
        ("a", "c", 16, "b"), ("b", "a", 19, "c"), ("c", "b", 4, "a"))    # x ^= rot(y, k); y += z
_FINAL = (("c", "b", 14), ("a", "c", 11), ("b", "a", 25), ("c", "b", 16),   # x ^= y;
          ("a", "c", 4), ("b", "a", 14), ("c", "b", 24))                     # x -= rot(y, k)


class _Ssa:
    """IR lines in static single assignment: each step names a new value."""

    def __init__(self):
        self.lines, self.n = [], 0

    def __call__(self, expr):
        self.n += 1
        self.lines.append(f"  %v{self.n} = {expr}")
        return f"%v{self.n}"

    def rot(self, x, k):
        return self(f"call i32 @llvm.fshl.i32(i32 {x}, i32 {x}, i32 {k})")

    def mix(self, v):
        """lookup3's ``mix`` of the values named in ``v`` ({"a", "b", "c"} -> name)."""
        for x, y, k, z in _MIX:
            v[x] = self(f"sub i32 {v[x]}, {v[y]}")
            v[x] = self(f"xor i32 {v[x]}, {self.rot(v[y], k)}")
            v[y] = self(f"add i32 {v[y]}, {v[z]}")

    def final(self, v):
        for x, y, k in _FINAL:
            v[x] = self(f"xor i32 {v[x]}, {v[y]}")
            v[x] = self(f"sub i32 {v[x]}, {self.rot(v[y], k)}")

    def add_words(self, v, words):
        for name, w in zip("abc", words):
            v[name] = self(f"add i32 {v[name]}, {w}")


def lookup3_ir():
    """The LLVM IR of ``i32 @lookup3(ptr data, i64 n, i32 initval)``: the 12-byte blocks but
    the last as three unaligned little-endian loads each, then the last 1-12 bytes gathered
    byte by byte into a zero-padded 96-bit value and the final mix; n == 0 gives the
    initial value. ``@lookup3_short`` is the same with ``n`` an i32 (below 2**32), for
    callers that pass C ints (``bytes_function``)."""
    body, last = _Ssa(), _Ssa()
    last.n = 100
    v = {x: f"%{x}" for x in "abc"}
    at = body("mul i64 %i, 12")
    words = []
    for d in (0, 4, 8):
        place = body(f"getelementptr i8, ptr %k, i64 {body(f'add i64 {at}, {d}')}")
        words.append(body(f"load i32, ptr {place}, align 1"))
    body.add_words(v, words)
    body.mix(v)
    t = {x: f"%t{x}" for x in "abc"}
    last.add_words(t, [last(f"trunc i128 {last(f'lshr i128 %t, {b}')} to i32") for b in (0, 32, 64)])
    last.final(t)
    carried = [f"[%s, %pre], [{v[x]}, %loop]" for x in "abc"]      # (the state after a block)
    return "\n".join([
        "declare i32 @llvm.fshl.i32(i32, i32, i32)",
        "define i32 @lookup3(ptr nocapture readonly %k, i64 %n, i32 %init) nounwind {",
        "entry:",
        "  %n32 = trunc i64 %n to i32",
        "  %s0 = add i32 %n32, 3735928559",            # 0xDEADBEEF + length + initval
        "  %s = add i32 %s0, %init",
        "  %empty = icmp eq i64 %n, 0",
        "  br i1 %empty, label %none, label %pre",
        "none:",
        "  ret i32 %s",
        "pre:",
        "  %nm1 = sub i64 %n, 1",
        "  %full = udiv i64 %nm1, 12",                 # blocks before the last
        "  %any = icmp ne i64 %full, 0",
        "  br i1 %any, label %loop, label %last",
        "loop:",
        "  %i = phi i64 [0, %pre], [%inext, %loop]",
        *[f"  %{x} = phi i32 {c}" for x, c in zip("abc", carried)],
        *body.lines,
        "  %inext = add i64 %i, 1",
        "  %more = icmp ult i64 %inext, %full",
        "  br i1 %more, label %loop, label %last",
        "last:",
        *[f"  %t{x} = phi i32 {c}" for x, c in zip("abc", carried)],
        "  %done = mul i64 %full, 12",
        "  %left = sub i64 %n, %done",
        "  %from = getelementptr i8, ptr %k, i64 %done",
        "  br label %byte",
        "byte:",                                       # byte j at bit 8 j of %acc
        "  %j = phi i64 [0, %last], [%jnext, %byte]",
        "  %acc = phi i128 [0, %last], [%acc2, %byte]",
        "  %bp = getelementptr i8, ptr %from, i64 %j",
        "  %bv = load i8, ptr %bp",
        "  %bw = zext i8 %bv to i128",
        "  %j8 = mul i64 %j, 8",
        "  %sh = zext i64 %j8 to i128",
        "  %bs = shl i128 %bw, %sh",
        "  %acc2 = or i128 %acc, %bs",
        "  %jnext = add i64 %j, 1",
        "  %bmore = icmp ult i64 %jnext, %left",
        "  br i1 %bmore, label %byte, label %fin",
        "fin:",
        "  %t = phi i128 [%acc2, %byte]",
        *last.lines,
        f"  ret i32 {t['c']}",
        "}",
        "define i32 @lookup3_short(ptr nocapture readonly %k, i32 %n, i32 %init) nounwind {",
        "  %n64 = zext i32 %n to i64",
        "  %r = call i32 @lookup3(ptr %k, i64 %n64, i32 %init)",
        "  ret i32 %r",
        "}",
    ])


_lock = threading.Lock()
_state = {"owed": 0.0}   # "fn": the ctypes functions (None once it failed), "engine":
                         # their owner, "can": whether llvmlite may be tried
SHORT = 1 << 31          # bytes_function's lengths are below this


def available():
    """True when ``lookup3_function`` may give a function: numba's code generator is
    wanted and installed (kernels/_jit.py), the host is little-endian, and no earlier
    attempt failed (found once per process)."""
    if "can" not in _state:
        _state["can"] = JIT_AVAILABLE and sys.byteorder == "little" and \
            importlib.util.find_spec("llvmlite") is not None
    return _state["can"] and _state.get("fn", True) is not None


def worth(seconds):
    """Record that plain Python would spend ``seconds`` more than this function on the work
    at hand; True once what was recorded repays making it (``loading_cost``)."""
    _state["owed"] += seconds
    return _state["owed"] >= loading_cost()


def loading_cost():
    """Seconds ``lookup3_function`` would take now (nothing once it was made)."""
    if "fn" in _state:
        return 0.0
    return COMPILE_SECONDS + (0.0 if "llvmlite.binding" in sys.modules else IMPORT_SECONDS)


def lookup3_function():
    """``f(data, n, initval) -> int``: lookup3 of the first ``n`` bytes of ``data`` (bytes,
    or the address of contiguous memory that the caller keeps alive), compiled once per
    process; None where it cannot be made."""
    fns = _functions()
    return fns and fns[0]


def bytes_function():
    """``f(data, n, initval) -> int`` as ``lookup3_function`` gives it, for ``data`` a bytes
    object, ``n`` below SHORT and ``initval`` below 2**32 only, called without ctypes'
    argument conversions (declared argument types cost ~0.3 us a call, a third of hashing
    a 2 KB B-tree node); None where it cannot be made."""
    fns = _functions()
    return fns and fns[1]


def _functions():
    with _lock:
        if "fn" not in _state:
            _state["fn"] = _compile() if available() else None
        return _state["fn"]


def _compile():
    try:
        import llvmlite.binding as llvm
        if llvm.llvm_version_info < (15,):
            return None
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        module = llvm.parse_assembly(lookup3_ir())
        module.verify()
        machine = llvm.Target.from_default_triple().create_target_machine(opt=2)
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
        address = engine.get_function_address("lookup3")
        short = engine.get_function_address("lookup3_short")
    except Exception:          # (any failure: the other forms of lookup3 stay)
        return None
    _state["engine"] = engine  # (the machine code lives as long as its engine)
    import ctypes
    proto = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32)
    # no declared argument types: ctypes passes a bytes object as a pointer to its bytes and
    # an int as a C int (its low 32 bits: what the i32 arguments take)
    return proto(address), ctypes.CFUNCTYPE(ctypes.c_uint32)(short)
