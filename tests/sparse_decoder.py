"""An independent, minimal decoder of sparse (structured chunk) files, written from the sparse
RFC tables and the HDF5 specification for the tests: it shares no code with purehep. It reads
superblock v2/3, version 2 object headers with compact links, and a dataset's dataspace,
fill value, filter pipeline (version 3) and layout (version 5, class 4) messages; the chunk
indexes single / fixed array (unpaged) / extensible array (index block and its data blocks) /
v2 B-tree (a root leaf); structured chunks (deflate and shuffle per section, lookup3 section
checksums) and H5Sencode selections (points v1/v2, hyperslabs v1/v2/v3, all, none)."""
import struct
import zlib

import numpy as np

MASK = 0xFFFFFFFF


def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & MASK


def lookup3(data, initval=0):
    """Bob Jenkins' hashlittle (lookup3.c), 32-bit result."""
    n = len(data)
    a = b = c = (0xDEADBEEF + n + initval) & MASK
    i = 0
    while n - i > 12:
        a = (a + int.from_bytes(data[i:i + 4], "little")) & MASK
        b = (b + int.from_bytes(data[i + 4:i + 8], "little")) & MASK
        c = (c + int.from_bytes(data[i + 8:i + 12], "little")) & MASK
        a = (a - c) & MASK; a ^= _rot(c, 4); c = (c + b) & MASK
        b = (b - a) & MASK; b ^= _rot(a, 6); a = (a + c) & MASK
        c = (c - b) & MASK; c ^= _rot(b, 8); b = (b + a) & MASK
        a = (a - c) & MASK; a ^= _rot(c, 16); c = (c + b) & MASK
        b = (b - a) & MASK; b ^= _rot(a, 19); a = (a + c) & MASK
        c = (c - b) & MASK; c ^= _rot(b, 4); b = (b + a) & MASK
        i += 12
    rest = bytes(data[i:]) + bytes(12)
    if n - i == 0:
        return c
    a = (a + int.from_bytes(rest[0:4], "little")) & MASK
    b = (b + int.from_bytes(rest[4:8], "little")) & MASK
    c = (c + int.from_bytes(rest[8:12], "little")) & MASK
    c ^= b; c = (c - _rot(b, 14)) & MASK
    a ^= c; a = (a - _rot(c, 11)) & MASK
    b ^= a; b = (b - _rot(a, 25)) & MASK
    c ^= b; c = (c - _rot(b, 16)) & MASK
    a ^= c; a = (a - _rot(c, 4)) & MASK
    b ^= a; b = (b - _rot(a, 14)) & MASK
    c ^= b; c = (c - _rot(b, 24)) & MASK
    return c


class R:
    """A little-endian reader over bytes."""

    def __init__(self, buf, pos=0):
        self.buf, self.pos = buf, pos

    def u(self, n):
        v = int.from_bytes(self.buf[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def raw(self, n):
        v = self.buf[self.pos:self.pos + n]
        self.pos += n
        return v


def _messages(buf, addr):
    """[(type, body)] of a version 2 object header (with continuation blocks)."""
    r = R(buf, addr)
    assert r.raw(4) == b"OHDR" and r.u(1) == 2
    flags = r.u(1)
    if flags & 0x20:
        r.pos += 16
    if flags & 0x10:
        r.pos += 4
    size = r.u(1 << (flags & 3))
    blocks = [(r.pos, r.pos + size)]
    out = []
    while blocks:
        start, end = blocks.pop(0)
        r.pos = start
        while r.pos + 4 <= end:
            mtype, msize, mflags = r.u(1), r.u(2), r.u(1)
            if flags & 0x04:
                r.pos += 2
            body = r.raw(msize)
            if mtype == 0x10:
                caddr = int.from_bytes(body[:8], "little")
                clen = int.from_bytes(body[8:16], "little")
                assert buf[caddr:caddr + 4] == b"OCHK"
                blocks.append((caddr + 4, caddr + clen - 4))
            out.append((mtype, body))
    return out


def _links(msgs):
    out = {}
    for mtype, body in msgs:
        if mtype != 0x06:
            continue
        r = R(body)
        assert r.u(1) == 1
        flags = r.u(1)
        ltype = r.u(1) if flags & 0x08 else 0
        if flags & 0x04:
            r.pos += 8
        if flags & 0x10:
            r.pos += 1
        name = bytes(r.raw(r.u(1 << (flags & 3)))).decode()
        if ltype == 0:
            out[name] = r.u(8)
    return out


def decode_selection(r, rank):
    """Row-major chunk-relative coordinates (n, rank) in selection order."""
    kind, version = r.u(4), r.u(4)
    if kind in (0, 3):
        r.pos += 8
        return kind, version, None
    if kind == 1:
        if version == 1:
            r.pos += 8
            assert r.u(4) == rank
            n = r.u(4)
            enc = 4
        else:
            enc = r.u(1)
            assert r.u(4) == rank
            n = r.u(enc)
        pts = [[r.u(enc) for _ in range(rank)] for _ in range(n)]
        return kind, version, np.array(pts, np.int64).reshape(n, rank)
    # hyperslabs
    if version == 1:
        r.pos += 8
        assert r.u(4) == rank
        n = r.u(4)
        blocks = [([r.u(4) for _ in range(rank)], [r.u(4) for _ in range(rank)])
                  for _ in range(n)]
        return kind, version, ("blocks", blocks)
    flags = r.u(1)
    if version == 2:
        r.pos += 4
        enc = 8
    else:
        enc = r.u(1)
    assert r.u(4) == rank
    if flags & 1:
        params = [[r.u(enc) for _ in range(4)] for _ in range(rank)]
        return kind, version, ("regular", params)
    n = r.u(enc)
    blocks = [([r.u(enc) for _ in range(rank)], [r.u(enc) for _ in range(rank)])
              for _ in range(n)]
    return kind, version, ("blocks", blocks)


def defined_elements(section0, chunk):
    """Chunk-relative coordinates of the defined elements in section-1 order. An empty
    section 0 encodes no selection: every element of the chunk is stored (seed RFC 2.1.1,
    "the encoded selection would be absent" for chunks holding every element; an empty
    selection is encoded as such, or the chunk is not allocated)."""
    if not len(section0):
        return np.argwhere(np.ones(chunk, bool))
    r = R(section0)
    assert r.u(1) == 1 and r.u(1) in (0, 1)
    size = r.u(1)
    ext = r.u(4)
    ext_start = r.pos
    assert r.u(1) in (1, 2)
    rank = r.u(1)
    r.pos = ext_start + ext
    dims = [int.from_bytes(section0[ext_start + 8 + size * i:ext_start + 8 + size * (i + 1)],
                           "little") for i in range(rank)]
    assert dims == list(chunk), (dims, chunk)
    kind, version, sel = decode_selection(r, rank)
    if kind == 3:
        return np.argwhere(np.ones(chunk, bool))
    if kind == 0:
        return np.zeros((0, rank), np.int64)
    if kind == 1:
        return sel
    m = np.zeros(chunk, bool)
    if sel[0] == "regular":
        for idx in np.ndindex(*[p[2] for p in sel[1]]):
            sl = tuple(slice(p[0] + p[1] * i, p[0] + p[1] * i + p[3]) for p, i in zip(sel[1], idx))
            m[sl] = True
    else:
        for lo, hi in sel[1]:
            m[tuple(slice(a, b + 1) for a, b in zip(lo, hi))] = True
    return np.argwhere(m)


def _unfilter(data, filters):
    for fid, cd in reversed(filters):
        if fid == 1:
            data = zlib.decompress(data)
        elif fid == 2:
            size = cd[0]
            n = len(data) // size
            arr = np.frombuffer(data[:n * size], np.uint8).reshape(size, n)
            data = arr.T.tobytes() + data[n * size:]
        else:
            raise NotImplementedError(f"filter {fid}")
    return data


def read(path, name):
    """{"shape", "chunks", "fill", "index", "coords", "values", "chunks_read"} of a sparse
    dataset ``name`` (a link in the root group) of float64 values."""
    buf = open(path, "rb").read()
    assert buf[:8] == b"\x89HDF\r\n\x1a\n" and buf[8] in (2, 3)
    so, sl = buf[9], buf[10]
    assert so == 8 and sl == 8
    root = int.from_bytes(buf[12 + 24:12 + 32], "little")
    addr = _links(_messages(buf, root))[name]
    msgs = dict((t, b) for t, b in _messages(buf, addr))
    # dataspace
    r = R(msgs[0x01])
    version, rank, flags = r.u(1), r.u(1), r.u(1)
    r.pos += 1 if version == 2 else 5
    shape = [r.u(8) for _ in range(rank)]
    maxshape = [r.u(8) for _ in range(rank)] if flags & 1 else shape
    # fill value (version 3: flags bit 5 = defined)
    r = R(msgs[0x05])
    assert r.u(1) == 3
    fflags = r.u(1)
    fill = None
    if fflags & 0x20:
        fill = np.frombuffer(r.raw(r.u(4)), "<f8")[0]
    # filter pipeline version 3
    pipelines = {}
    if 0x0B in msgs:
        r = R(msgs[0x0B])
        assert r.u(1) == 3
        for _ in range(r.u(1)):
            sec, nf, size = r.u(1), r.u(1), r.u(2)
            end = r.pos + size
            flist = []
            for _ in range(nf):
                fid = r.u(2)
                nlen = r.u(2) if fid >= 256 else 0
                r.u(2)
                ncd = r.u(2)
                r.pos += nlen
                flist.append((fid, [r.u(4) for _ in range(ncd)]))
            assert r.pos == end
            pipelines[sec] = flist
    # layout version 5, class 4 (RFC Tables 13-16)
    r = R(msgs[0x08])
    assert (r.u(1), r.u(1)) == (5, 4)
    prop_version, stype, lflags, ndims, width = r.u(1), r.u(2), r.u(1), r.u(1), r.u(1)
    assert stype & 1
    dims = [r.u(width) for _ in range(ndims)]
    chunk, esize = dims[:-1], dims[-1]
    offset_size, nsects, nmd = r.u(1), r.u(1), r.u(1)
    md = [r.u(1) for _ in range(nmd)]
    itype = r.u(1)
    layout_size = int(np.prod(dims))
    csl = min(offset_size, 1 + ((layout_size.bit_length() - 1) + offset_size) // offset_size)
    filtered = bool(pipelines)
    meta = 8 * (nsects - 1) + (12 * nsects if filtered else 0)

    def metadata(rr):
        offs = [rr.u(8) for _ in range(nsects - 1)]
        unf = [rr.u(8) for _ in range(nsects)] if filtered else None
        masks = [rr.u(4) for _ in range(nsects)] if filtered else None
        return offs, unf, masks

    grid = [-(-(m if m != 2**64 - 1 else s) // c) for m, s, c in zip(maxshape, shape, chunk)]
    records = []          # (scaled, addr, size, offs, unf, masks)
    if itype == 1:
        csize = r.u(csl)
        offs, unf, masks = metadata(r)
        records.append(([0] * rank, r.u(8), csize, offs, unf, masks))
    elif itype in (3, 4, 5):
        params = r.raw({3: 1, 4: 5, 5: 6}[itype])
        idx = r.u(8)
        es = 8 + csl + meta

        def element(rr):
            a = rr.u(8)
            size = rr.u(csl)
            return a, size, metadata(rr)

        if itype == 3:      # fixed array: FAHD -> FADB (client id 2/3)
            h = R(buf, idx)
            assert h.raw(4) == b"FAHD" and h.u(1) in (0, 1)
            assert h.u(1) == (3 if filtered else 2) and h.u(1) == es
            h.u(1)
            n, daddr = h.u(8), h.u(8)
            d = R(buf, daddr)
            assert d.raw(4) == b"FADB"
            d.pos += 2 + 8
            linear = [(i, element(d)) for i in range(n)]
            order = list(range(rank))
            gdims = grid
        elif itype == 4:    # extensible array: EAHD -> EAIB (+ its data blocks)
            h = R(buf, idx)
            assert h.raw(4) == b"EAHD" and h.u(1) in (0, 1)
            assert h.u(1) == (3 if filtered else 2) and h.u(1) == es
            max_bits, nidx, min_el, min_ptrs = h.u(1), h.u(1), h.u(1), h.u(1)
            h.u(1)
            h.pos += 32
            total = h.u(8)
            h.pos += 8
            iaddr = h.u(8)
            b = R(buf, iaddr)
            assert b.raw(4) == b"EAIB"
            b.pos += 2 + 8
            linear = [(i, element(b)) for i in range(nidx)]
            dptrs = [b.u(8) for _ in range(2 * (min_ptrs - 1))]
            first, s, k = nidx, 0, 0
            while first < total and k < len(dptrs):
                nd, ne = 1 << (s // 2), (1 << ((s + 1) // 2)) * min_el
                for _ in range(nd):
                    if dptrs[k] != 2**64 - 1:
                        db = R(buf, dptrs[k])
                        assert db.raw(4) == b"EADB"
                        db.pos += 2 + 8 + (max_bits + 7) // 8
                        linear += [(first + j, element(db)) for j in range(ne)]
                    first += ne
                    k += 1
                s += 1
            udim = [i for i, m in enumerate(maxshape) if m == 2**64 - 1][0]
            order = [udim] + [i for i in range(rank) if i != udim]
            gdims = [max(1, -(-total // int(np.prod([grid[i] for i in order[1:]]))))] + \
                [grid[i] for i in order[1:]]
        else:               # v2 B-tree type 12/13 (a root leaf)
            h = R(buf, idx)
            assert h.raw(4) == b"BTHD" and h.u(1) in (0, 1)
            assert h.u(1) == (13 if filtered else 12)
            h.u(4)
            rsize, depth = h.u(2), h.u(2)
            assert depth == 0 and rsize == 8 + csl + 8 * rank + meta
            h.pos += 2
            root, nrec = h.u(8), h.u(2)
            leaf = R(buf, root)
            assert leaf.raw(4) == b"BTLF"
            leaf.pos += 2
            for _ in range(nrec):
                a, size = leaf.u(8), leaf.u(csl)
                scaled = [leaf.u(8) for _ in range(rank)]
                offs, unf, masks = metadata(leaf)
                records.append((scaled, a, size, offs, unf, masks))
            linear = []
        for i, (a, size, (offs, unf, masks)) in linear:
            if a == 2**64 - 1:
                continue
            sw = np.unravel_index(i, gdims)
            scaled = [0] * rank
            for j, dim in enumerate(order):
                scaled[dim] = int(sw[j])
            records.append((scaled, a, size, offs, unf, masks))
    else:
        raise AssertionError(f"index type {itype} is not allowed for structured chunks")
    coords, values = [], []
    for scaled, a, size, offs, unf, masks in records:
        raw = buf[a:a + size]
        bounds = [0] + offs + [size]
        secs = []
        for k in range(nsects):
            data = raw[bounds[k]:bounds[k + 1]]
            if k in pipelines and len(data):
                data = _unfilter(data, [f for j, f in enumerate(pipelines[k])
                                        if not (masks[k] >> j) & 1])
                assert len(data) == unf[k]
            if k in md and len(data):
                stored = int.from_bytes(data[-4:], "little")
                if stored != lookup3(data[:-4]):
                    raise ValueError(f"section {k} checksum of chunk {scaled}")
                data = data[:-4]
            secs.append(data)
        local = defined_elements(secs[0], chunk)
        vals = np.frombuffer(secs[1], "<f8")
        assert len(vals) == len(local) and esize == 8
        g = local + np.array(scaled) * np.array(chunk)
        keep = np.all(g < np.array(shape), axis=1)
        coords.append(g[keep])
        values.append(vals[keep])
    coords = np.concatenate(coords) if coords else np.zeros((0, rank), np.int64)
    values = np.concatenate(values) if values else np.zeros(0)
    order = np.lexsort(coords.T[::-1]) if len(coords) else np.zeros(0, np.int64)
    return {"shape": shape, "chunks": chunk, "fill": fill, "index": itype,
            "coords": coords[order], "values": values[order], "chunks_read": len(records),
            "layout_bytes": bytes(msgs[0x08])}
