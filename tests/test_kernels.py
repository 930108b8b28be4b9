"""Each kernel's numpy form against its loop form (numba-compiled when numba is installed,
plain Python otherwise), on edge sizes and random data, and the dispatch rules: small work
never loads numba."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from purehep.kernels import checksum as C, copy as K, scaleoffset as SO, shuffle as S
from purehep.kernels import sparse as SP
from purehep.kernels.chunkindex import bitmap_expand, decode_records

rng = np.random.default_rng(0)
SIZES = [0, 1, 3, 4, 11, 12, 13, 24, 25, 100, 1001, 4097]


@pytest.mark.parametrize("n", SIZES)
def test_lookup3(n):
    d = rng.integers(0, 256, n).astype(np.uint8)
    ref = int(C.lookup3_array(d, 7))
    assert C._py_lookup3(d.tobytes(), n, 7) == ref
    assert C.lookup3(d.tobytes(), 7) == ref
    # the bytes entry (a structure's body: all but the last 4 bytes), compiled and plain,
    # and the array loop from an unaligned start
    assert C._lookup3_bytes.compiled()(d.tobytes() + b"tail", n, 7) == ref
    assert C._lookup3_bytes.plain(d.tobytes() + b"tail", n, 7) == ref
    assert C._hash(C._lookup3_from.compiled(), np.concatenate((np.uint8([5]), d))[1:], 7) == ref
    assert C.lookup3_body(d.tobytes() + b"tail") == C._py_lookup3(d.tobytes(), n, 0)
    rows = rng.integers(0, 256, (5, n)).astype(np.uint8)
    assert C.lookup3_rows(rows, 7).tolist() == [int(C.lookup3_array(r.copy(), 7)) for r in rows]


@pytest.mark.parametrize("seed", range(6))
def test_lookup3_lanes(seed):
    """Python-int lanes and numpy lanes against the scalar lookup3: random lengths (some
    multiples of 12 or of 4, some neither), lane counts and initial values."""
    r = np.random.default_rng(seed)
    for n in [0, 1, 4, 12, 24, 8188] + r.integers(1, 300, 6).tolist():
        m = int(r.integers(1, 70))
        init = int(r.integers(0, 2**32))
        rows = r.integers(0, 256, (m, n)).astype(np.uint8)
        ref = [C._py_lookup3(row.tobytes(), n, init) for row in rows]
        assert C.lookup3_lanes(rows, init).tolist() == ref, (n, m)
        assert C.lookup3_rows(rows, init).tolist() == ref, (n, m)
        assert C.lookup3_batch(rows, init).tolist() == ref, (n, m)


@pytest.mark.parametrize("seed", range(4))
def test_lookup3_spans(seed, monkeypatch):
    """Spans of several lengths in one buffer (empty, under a block, whole blocks, long),
    unaligned: numpy lanes of ragged length, plain Python one by one and the compiled
    function give the scalar lookup3 of each."""
    r = np.random.default_rng(seed)
    buf = r.integers(0, 256, 50_000).astype(np.uint8)
    m = int(r.integers(1, 60))
    lengths = r.choice([0, 1, 11, 12, 13, 24, 25, 300, 4097], m)
    lengths[r.random(m) < 0.3] = r.integers(0, 2000)
    starts = r.integers(0, 40_000, m)
    init = int(r.integers(0, 2**32))
    ref = [C._py_lookup3(buf[s:s + n].tobytes(), int(n), init) for s, n in zip(starts, lengths)]
    assert C._ragged(buf, starts, lengths, init).tolist() == ref
    assert C.lookup3_spans(buf, starts, lengths, init).tolist() == ref
    many = (r.integers(0, 40_000, 40), r.integers(1000, 1200, 40))     # (lanes pay)
    ref = [C._py_lookup3(buf[s:s + n].tobytes(), int(n), init) for s, n in zip(*many)]
    monkeypatch.setattr(C, "_compiled_bytes", None)
    monkeypatch.setattr(C, "_worth_compiling", lambda seconds: False)
    used = []
    for name in ("_ragged", "_py_lookup3"):
        monkeypatch.setattr(C, name, lambda *a, fn=getattr(C, name), name=name:
                            used.append(name) or fn(*a))
    assert C.lookup3_spans(buf, *many, init).tolist() == ref
    assert C.lookup3_spans(buf, many[0][:1], many[1][:1], init).tolist() == ref[:1]
    assert used == ["_ragged", "_py_lookup3"]


def test_native_lookup3():
    """The LLVM IR form (kernels/native.py) against plain Python: every length up to four
    blocks and some long ones, initial values including all ones, from bytes and from an
    unaligned address; the form called without ctypes' argument conversions from bytes."""
    from purehep.kernels import native
    fn, short = native.lookup3_function(), native.bytes_function()
    if fn is None:
        pytest.skip("no llvmlite (LLVM 15 or later) on a little-endian host")
    r = np.random.default_rng(3)
    for n in list(range(50)) + [4095, 4096, 4097, 8188, 100_003]:
        d = r.integers(0, 256, n + 1).astype(np.uint8)
        body = d[1:]                                   # (an odd address)
        for init in (0, 7, 0xFFFFFFFF):
            want = C._py_lookup3(body.tobytes(), n, init)
            assert fn(body.tobytes(), n, init) == want, (n, init)
            assert short(body.tobytes(), n, init) == want, (n, init)
            assert fn(body.__array_interface__["data"][0], n, init) == want, (n, init)


def test_hashing_enough_makes_native_lookup3_not_numba():
    """A fresh process that hashes a few MB of single buffers (array pages) switches from
    plain Python to the native lookup3 after ~0.4 MB, without importing numba, and hashes
    every buffer right before and after the switch; one that has run a numba function
    before takes numba's loop instead (cheaper to load then, and to call), but not one that
    only made a kernel's dispatcher (numba's registries are filled at the first call)."""
    code = ("import sys, numpy as np\n"
            "{first}"
            "from purehep.kernels import checksum as C, native\n"
            "bufs = [np.random.default_rng(k).bytes(8192) for k in range(300)]\n"
            "got = [C.lookup3(b, 3) for b in bufs]\n"
            "assert got == [C._py_lookup3(b, 8192, 3) for b in bufs]\n"
            "assert C.lookup3_body(memoryview(bufs[0])) == C._py_lookup3(bufs[0][:8188], 8188, 0)\n"
            "print(C._native is not None, C._compiled is not None, 'numba' in sys.modules)\n")
    from purehep.kernels import _jit, native
    if not _jit.JIT_AVAILABLE:
        assert _fresh_python(code.format(first="")) == "False False False"
        return
    assert _fresh_python(code.format(first="")) == \
        ("True False False" if native.available() else "False True True")
    assert _fresh_python(code.format(first="import numba\n")) == \
        ("True False True" if native.available() else "False True True")
    made = "from purehep.kernels import shuffle\nshuffle._unshuffle_generic.compiled()\n"
    assert _fresh_python(code.format(first=made)) == \
        ("True False True" if native.available() else "False True True")
    ran = "import numba\nnumba.njit(lambda x: x + 1)(1)\n"
    assert _fresh_python(code.format(first=ran)) == "False True True"


def test_lookup3_batch_picks_lanes_by_count(monkeypatch):
    """Uncompiled, ``lookup3_batch`` runs Python-int lanes for few rows and numpy lanes for
    many (the cheaper by ``batch_seconds``' model), equal either way."""
    monkeypatch.setattr(C, "_compiled_bytes", None)
    monkeypatch.setattr(C, "_worth_compiling", lambda seconds: False)
    used = []
    for name in ("lookup3_lanes", "lookup3_rows"):
        real = getattr(C, name)
        monkeypatch.setattr(C, name, lambda rows, init=0, real=real, name=name:
                            used.append(name) or real(rows, init))
    for m in (3, 2000):
        rows = rng.integers(0, 256, (m, 40)).astype(np.uint8)
        assert C.lookup3_batch(rows).tolist() == [C._py_lookup3(r.tobytes(), 40, 0)
                                                  for r in rows]
    assert used == ["lookup3_lanes", "lookup3_rows"]


@pytest.mark.parametrize("count", [1, 2, 5, len(SIZES)])
def test_lookup3_first_mismatch(count):
    """Spans of one array (any alignment, any length, an odd number of them: two hashed at
    once) each followed by its checksum; the first one whose checksum differs is found, in
    the compiled and the plain form."""
    d = rng.integers(0, 256, sum(SIZES) + 5 * len(SIZES) + 50).astype(np.uint8)
    words = tuple(np.frombuffer(d, "<u4", (len(d) - s) // 4, s) for s in range(4))
    starts, ends, at = [], [], 3
    for n in (SIZES * 2)[:count]:
        d[at + n:at + n + 4] = np.frombuffer(struct.pack("<I", C._py_lookup3(
            d[at:at + n].tobytes(), n, 0)), np.uint8)
        starts.append(at)
        ends.append(at + n)
        at += n + 4 + n % 3
    starts, ends = np.array(starts, np.int64), np.array(ends, np.int64)
    for form in (C.lookup3_first_mismatch, C.lookup3_first_mismatch.plain):
        assert form(d, words, starts, ends) == -1
    for bad in sorted({0, count // 2, count - 1}):
        d[ends[bad]] ^= 1
        for form in (C.lookup3_first_mismatch, C.lookup3_first_mismatch.plain):
            assert form(d, words, starts, ends) == bad
        d[ends[bad]] ^= 1


@pytest.mark.parametrize("n", SIZES + [720, 721, 722, 30_001])
def test_fletcher32(n, monkeypatch):
    monkeypatch.setattr(C, "_FLETCHER_SLICE", 1000)     # several numpy passes
    for d in (rng.integers(0, 256, n).astype(np.uint8), np.zeros(n, np.uint8),
              np.full(n, 255, np.uint8)):
        assert C.fletcher32_numpy(d) == int(C._fletcher32_loop(d))


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 16])
@pytest.mark.parametrize("n", [0, 7, 64, 1001])
def test_shuffle(size, n):
    src = rng.integers(0, 256, n).astype(np.uint8)
    a, b = np.empty_like(src), np.empty_like(src)
    S._unshuffle_loop(src, a, size)
    S.unshuffle_numpy(src, b, size)
    assert (a == b).all()
    S._shuffle_loop(src, a, size)
    S.shuffle_numpy(src, b, size)
    assert (a == b).all()
    S.unshuffle_numpy(a.copy(), b, size)
    assert (b == src).all()
    # unaligned buffers take the strided-copy branch
    buf = np.zeros(n + 1, np.uint8)
    un = buf[1:]
    S.shuffle_numpy(src, un, size)
    assert (un == a).all()


def test_decode_records_and_bitmap():
    raw = rng.integers(0, 256, (50, 23)).astype(np.uint8)
    addr, size, mask, scaled = decode_records(raw, 0, 8, 8, 3, 11, 15, 2, 4)
    for i in range(50):
        le = lambda a, w: int.from_bytes(raw[i, a:a + w].tobytes(), "little")  # noqa: E731
        assert int(addr[i]) == le(0, 8) and int(size[i]) == le(8, 3) and int(mask[i]) == le(11, 4)
        assert scaled[i].tolist() == [le(15, 4), le(19, 4)]
    bits = bitmap_expand(np.array([0b10100000, 0b1], np.uint8), 16)
    assert np.flatnonzero(bits).tolist() == [0, 2, 15]


@pytest.mark.parametrize("minbits", [1, 3, 8, 13, 32, 63, 64])
def test_unpack_bits(minbits):
    n = 1000
    vals = [int(v) for v in rng.integers(0, 2 ** 62, n)]
    vals = [v & ((1 << minbits) - 1) for v in vals]
    stream = "".join(format(v, f"0{minbits}b") for v in vals)
    stream += "0" * (-len(stream) % 8)
    src = np.frombuffer(int(stream, 2).to_bytes(len(stream) // 8, "big"), np.uint8)
    assert SO.unpack_bits(src, n, minbits).tolist() == vals


@pytest.mark.parametrize("seed", range(6))
def test_nbit_forms(seed, monkeypatch):
    """The n-bit numpy form against the loop on random plans: little- and big-endian
    members of any precision and offset, no-op members, overlapping members (the later
    one wins its bytes), whole and short streams (zeros past the end)."""
    from purehep.kernels import nbit as NB
    r = np.random.default_rng(seed)
    ops, at = [], 0
    for _ in range(r.integers(1, 7)):
        size = int(r.choice([1, 2, 4, 8]))
        if r.random() < 0.2:
            ops.append((4, at, size, 0, 0, 0))
        else:
            prec = int(r.integers(1, size * 8 + 1))
            ops.append((1, at, size, int(r.integers(0, 2)), prec,
                        int(r.integers(0, size * 8 - prec + 1))))
        at += size if r.random() < 0.8 else 0           # (some members overlap the next)
    ops = np.array(ops, np.int64)
    elsize = int((ops[:, 1] + ops[:, 2]).max())
    nelmts = int(r.integers(1, 40))
    bits = int(sum(8 * o[2] if o[0] == 4 else o[4] for o in ops)) * nelmts
    for nbytes in ((bits + 7) // 8, bits // 16):
        src = r.integers(0, 256, nbytes).astype(np.uint8)
        a = np.full(nelmts * elsize, 7, np.uint8)
        b = a.copy()
        NB._nbit_loop(src, a, nelmts, elsize, ops)
        for slice_bits in (1 << 21, 8 * elsize * 3 + 5):     # (several slices too)
            monkeypatch.setattr(NB, "_SLICE_BITS", slice_bits)
            b[:] = 7
            NB.nbit_decompress_numpy(src, b, nelmts, elsize, NB.bit_map(ops, elsize))
            assert (a == b).all()


def _lzf_both(src, cap):
    """(what the loop returns, what the numpy form returns) decoding ``src`` into ``cap``
    bytes; where both succeed, their outputs must agree."""
    from purehep.kernels import lzf as LZ
    src = np.asarray(src, np.uint8)
    a, b = np.full(cap, 7, np.uint8), np.full(cap, 9, np.uint8)
    ra, rb = int(LZ.lzf_decompress(src, a)), LZ.lzf_decompress_numpy(src, b)
    if ra >= 0 and ra == rb:
        assert (a[:ra] == b[:rb]).all()
    assert int(LZ.lzf_decoded_size(src)) == LZ.lzf_decoded_size_numpy(src)
    return ra, rb


def _lzf(data):
    from purehep.kernels import lzf as LZ
    data = np.frombuffer(bytes(data), np.uint8)
    out = np.empty(data.size + data.size // 32 + 64, np.uint8)     # room for literal runs
    return out[:int(LZ.lzf_compress(data, out))].copy()


@pytest.mark.parametrize("case", ["random", "few-symbols", "runs", "float", "ramp", "short"])
def test_lzf_forms(case):
    """The LZF numpy form against the loop on streams made by ``lzf_compress``: incompressible
    and compressible data, long runs (overlapping back references, distance 1), each decoded
    into an exact, a roomier and a too-small buffer."""
    r = np.random.default_rng(5)
    data = {"random": lambda: r.integers(0, 256, 70000).astype(np.uint8).tobytes(),
            "few-symbols": lambda: r.integers(0, 3, 200000).astype(np.uint8).tobytes(),
            "runs": lambda: b"a" * 1000 + b"ab" * 700 + bytes(70000) + b"xyz" * 333,
            "float": lambda: np.round(np.sin(np.arange(30000) / 300), 2).tobytes(),
            "ramp": lambda: np.arange(100000, dtype="<i4").tobytes(),
            "short": lambda: b"abcabcabcab"}[case]()
    src = _lzf(data)
    for cap in (len(data), len(data) + 100, len(data) - 1, len(data) // 2, 0):
        ra, rb = _lzf_both(src, cap)
        assert ra == rb == (len(data) if cap >= len(data) else -2)
    out = np.empty(len(data), np.uint8)
    from purehep.kernels import lzf as LZ
    assert LZ.decompress(src, out) == len(data) and out.tobytes() == data
    assert LZ.decoded_size(src) == len(data)


@pytest.mark.parametrize("src, cap, expect", [
    ([], 0, 0), ([], 5, 0),
    ([5, 1, 2], 10, -1),                 # literal run cut short
    ([5, 1, 2], 0, -1),                  # ... reported before the small buffer
    ([0, 65, 0x20], 10, -1),             # back reference without its offset byte
    ([0, 65, 0xE0], 10, -1),             # ... without its extra length byte
    ([0, 65, 0xE0, 3], 10, -1),          # ... with it, but no offset byte
    ([0x20, 0], 10, -1),                 # refers before the start
    ([0, 65, 0x20, 1], 10, -1),          # ... by one byte
    ([0, 65, 0x20, 5], 1, -1),           # ... reported before the small buffer
    ([0, 65, 0x20, 0], 4, 4),            # an overlapping copy, exactly fitting
    ([0, 65, 0x20, 0], 3, -2),           # out too small for the back reference
    ([1, 65, 66], 1, -2),                # ... for the literal run
    ([1, 65, 66, 7], 1, -2),             # too small first, cut short later
    ([0, 65, 0x20, 3, 0, 1], 100, -1),   # bad reference first, valid token after
    ([0, 65, 0xE0, 255, 0], 300, 265),   # the longest back reference (7 + 255 + 2), after 1
])
def test_lzf_corrupt(src, cap, expect):
    """Hand-made streams: the numpy form returns what the loop returns (-1 corrupt, -2 out
    too small, in the loop's order), also as plain Python."""
    from purehep.kernels import lzf as LZ
    assert _lzf_both(src, cap) == (expect, expect)
    assert LZ.lzf_decompress.plain(np.asarray(src, np.uint8), np.empty(cap, np.uint8)) == expect


def test_lzf_fuzz():
    """Random bytes and damaged streams (cut, a byte replaced, a bit flipped) decode to the
    same result in both forms, whatever the buffer size."""
    r = np.random.default_rng(11)
    for trial in range(600):
        if trial % 3 == 0:
            src = r.integers(0, 256, r.integers(1, 80)).astype(np.uint8)
        else:
            src = _lzf(r.integers(0, r.integers(1, 5), r.integers(1, 500)).astype(np.uint8))
            if trial % 3 == 2:
                k, at = trial % 9, r.integers(0, src.size)
                if k < 3:
                    src = src[:at]
                elif k < 6:
                    src[at] = r.integers(0, 256)
                else:
                    src[at] ^= 1 << r.integers(0, 8)
        for cap in (0, 1, 60, 499, 2000):
            ra, rb = _lzf_both(src, cap)
            assert ra == rb, (src.tolist(), cap)


def test_sparse_kernels():
    dims = (7, 9, 5)
    lin = np.sort(rng.choice(315, 120, replace=False))
    first, final = SP.row_runs(lin, 5)
    covered = np.concatenate([np.arange(a, b + 1) for a, b in zip(first, final)])
    assert (covered == lin).all() and ((first // 5) == (final // 5)).all()
    assert (np.diff(first)[np.diff(first) > 0] > 0).all()
    lo = np.stack(np.unravel_index(first, dims), 1).astype(np.int64)
    hi = lo.copy()
    hi[:, -1] += final - first
    for k in (1, 0):
        keys = [lo[:, k]] + [hi[:, d] for d in range(2, k, -1)] + \
            [lo[:, d] for d in range(2, -1, -1) if d != k]
        order = np.lexsort(keys).astype(np.int64)
        lo, hi = SP.merge_axis(lo, hi, order, k)
    assert sorted(SP.blocks_to_linear(lo, hi, np.asarray(dims)).tolist()) == lin.tolist()
    coords = rng.integers(0, 100, (30, 2))
    ck, lk = SP.chunk_keys(coords, np.array([7, 9]), np.array([15, 12]))
    assert (ck == (coords[:, 0] // 7) * 12 + coords[:, 1] // 9).all()
    assert (lk == (coords[:, 0] % 7) * 9 + coords[:, 1] % 9).all()


def _copy_case(shape, chunk, sel, present=0.8):
    """Output of copying every chunk of a ``shape`` array in ``chunk`` chunks into the
    selection ``sel`` (per dimension: a (start, n) dense run or a sorted coordinate array),
    both forms, against numpy fancy indexing."""
    rank = len(shape)
    itemsize = 4
    full = rng.integers(0, 1 << 30, shape).astype("<i4")
    grid = [-(-s // c) for s, c in zip(shape, chunk)]
    scaled = np.stack(np.unravel_index(np.arange(int(np.prod(grid))), grid), 1).astype(np.int64)
    cn = int(np.prod(chunk)) * itemsize
    src = np.zeros(len(scaled) * cn, np.uint8)
    for t, sc in enumerate(scaled):
        blk = np.zeros(chunk, "<i4")
        part = tuple(slice(p * c, min((p + 1) * c, s)) for p, c, s in zip(sc, chunk, shape))
        blk[tuple(slice(0, x.stop - x.start) for x in part)] = full[part]
        src[t * cn:(t + 1) * cn] = blk.view(np.uint8).reshape(-1)
    src_pos = np.arange(len(scaled), dtype=np.int64) * cn
    src_pos[rng.random(len(scaled)) > present] = -1
    rlo, rhi, carr, ubase, cbase, start, count, uposs = [], [], [], [], [], [], [], []
    pu = pc = 0
    for d, s in enumerate(sel):
        if isinstance(s, tuple):
            start.append(s[0]), count.append(s[1]), ubase.append(0), cbase.append(-1)
            uposs.append(scaled[:, d])
        else:
            k = s // chunk[d]
            touched, lo = np.unique(k, return_index=True)
            hi = np.append(lo[1:], len(s))
            start.append(int(s[0])), count.append(len(s)), ubase.append(pu), cbase.append(pc)
            where = np.searchsorted(touched, scaled[:, d])
            bad = (where >= len(touched)) | (touched[np.minimum(where, len(touched) - 1)]
                                              != scaled[:, d])
            src_pos[bad] = -1
            uposs.append(np.minimum(where, len(touched) - 1))
            rlo.append(lo), rhi.append(hi), carr.append(s)
            pu += len(touched)
            pc += len(s)
    cat = lambda p: np.concatenate(p).astype(np.int64) if p else np.zeros(1, np.int64)  # noqa
    upos = np.stack(uposs, 1).astype(np.int64)
    args = [cat(rlo), cat(rhi), np.array(ubase), cat(carr), np.array(cbase), np.array(start),
            np.array(count), np.array(chunk, np.int64)]
    cstr = np.array([int(np.prod(chunk[d + 1:])) * itemsize for d in range(rank)])
    ostr = np.array([int(np.prod(count[d + 1:])) * itemsize for d in range(rank)])
    outs = []
    for form in ("loop", "numpy"):
        out = np.full(int(np.prod(count)) * itemsize, 0xEE, np.uint8)
        if form == "loop":
            K._copy_chunks_loop(src, src_pos, scaled, upos, *args, cstr, out, ostr, itemsize)
        else:
            K._Plan(src_pos, scaled, upos, *args).run(src, out, itemsize)
        outs.append(out)
    assert (outs[0] == outs[1]).all()
    # where the loop copied, the values are the array's
    idx = np.ix_(*[np.arange(s[0], s[0] + s[1]) if isinstance(s, tuple) else s for s in sel])
    got = outs[1].view("<i4").reshape(count)
    written = outs[1].reshape(tuple(count) + (4,)).view("<u4")[..., 0] != 0xEEEEEEEE
    assert (got[written] == full[idx][written]).all()


@pytest.mark.parametrize("case", [
    ((100,), (7,), [(0, 100)]), ((100,), (7,), [(13, 50)]), ((100,), (10,), [(20, 60)]),
    ((30, 12), (7, 5), [(0, 30), (0, 12)]), ((30, 12), (7, 5), [(3, 20), (2, 9)]),
    ((30, 12), (7, 5), [np.array([0, 3, 4, 5, 22, 29]), (1, 10)]),
    ((30, 12), (7, 5), [(2, 25), np.array([0, 1, 2, 7, 11])]),
    ((9, 8, 7), (2, 3, 4), [np.array([1, 2, 3, 8]), (1, 6), np.array([0, 5, 6])]),
    ((9, 8, 7), (3, 4, 7), [(0, 9), (0, 8), (0, 7)]),
])
def test_copy_forms(case):
    shape, chunk, sel = case
    _copy_case(shape, chunk, sel)


def test_small_read_loads_no_numba(tmp_path):
    """A fresh process opening and reading a small gzip + shuffle + fletcher32 chunked
    dataset (and walking it) never imports numba."""
    h5py = pytest.importorskip("h5py")
    p = tmp_path / "s.h5"
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=np.arange(10000, dtype="f4"), chunks=(1000,),
                         compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("y", data=np.arange(100).reshape(10, 10), chunks=(3, 3),
                         maxshape=(None, None))
    code = ("import sys, numpy as np, purehep\n"
            f"with purehep.File({str(p)!r}) as f:\n"
            "    assert (f['x'][()] == np.arange(10000, dtype='f4')).all()\n"
            "    assert f['x'][5:7].tolist() == [5, 6]\n"
            "    assert (f['y'][2:9, 1:8] == np.arange(100).reshape(10, 10)[2:9, 1:8]).all()\n"
            "print('numba' in sys.modules)\n")
    assert _fresh_python(code) == "False"


def _fresh_python(code):
    """What a fresh interpreter running ``code`` from the repository root prints."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_loading_cost_counts_what_is_left_to_load():
    """The ski-rental's price of a compiled kernel: numba's import until it is imported,
    numba's registries (and scipy.linalg, which they import when scipy is installed) until a
    first kernel is loaded (a dispatcher made but not called has loaded nothing), then only
    the kernel."""
    code = ("import sys, importlib.util, numpy as np\n"
            "from purehep.kernels import _jit as J\n"
            "scipy = importlib.util.find_spec('scipy') is not None\n"
            "before = J.loading_cost()\n"
            "want = J.LOAD_SECONDS + J.IMPORT_SECONDS + J.FIRST_SECONDS + "
            "(J.SCIPY_SECONDS if scipy else 0)\n"
            "assert abs(before - want) < 1e-9, (before, want)\n"
            "from purehep.kernels import checksum as C\n"
            "if J.JIT_AVAILABLE:\n"
            "    C._lookup3_from.compiled()\n"
            "    assert abs(J.loading_cost() - before + J.IMPORT_SECONDS) < 1e-9\n"
            "    C.lookup3_array(np.zeros(40, np.uint8))\n"
            "    assert abs(J.loading_cost() - J.LOAD_SECONDS) < 1e-9\n"
            "print('ok')\n")
    assert _fresh_python(code) == "ok"
