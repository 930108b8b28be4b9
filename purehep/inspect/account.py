"""The byte account of a FileMap: every byte of the file is metadata (a structure), raw data,
free space (tracked free-space sections, bytes past the end-of-file address), the user block,
or unclaimed. Where extents overlap (a broken file) a byte counts once, in that order."""
from .structure import FREE, METADATA, RAW, USERBLOCK

PRIORITY = (METADATA, RAW, FREE, USERBLOCK)


def _events(structures, size):
    ev = []
    for s in structures:
        start, end = max(s.offset, 0), min(s.end, size)
        if end > start:
            ev.append((start, 1, s.kind))
            ev.append((end, -1, s.kind))
    ev.sort(key=lambda e: (e[0], e[1]))
    return ev


def _segments(structures, size):
    """Yield (start, end, {kind: count}) for consecutive segments of [0, size)."""
    counts = {k: 0 for k in PRIORITY}
    pos = 0
    for at, delta, kind in _events(structures, size):
        if at > pos:
            yield pos, at, dict(counts)
            pos = at
        counts[kind] = counts.get(kind, 0) + delta
    if pos < size:
        yield pos, size, dict(counts)


def gaps(structures, size):
    """[(start, end)] of the byte ranges no top-level structure claims."""
    out = []
    for start, end, counts in _segments(structures, size):
        if not any(counts.values()):
            if out and out[-1][1] == start:
                out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
    return out


def account(fmap):
    """{size, metadata, raw, free, userblock, unclaimed, overlapping, unused_in_structures,
    gaps}: the first six sum to the file size (``overlapping`` counts bytes claimed twice)."""
    totals = {k: 0 for k in PRIORITY}
    unclaimed = overlapping = 0
    gap_list = []
    for start, end, counts in _segments(fmap.structures, fmap.size):
        n = end - start
        if sum(counts.values()) > 1:
            overlapping += n
        for kind in PRIORITY:
            if counts.get(kind):
                totals[kind] += n
                break
        else:
            unclaimed += n
            gap_list.append((start, end))
    unused = sum(s.unused for top in fmap.structures for _d, s in top.walk() if s.kind == METADATA)
    out = {"size": fmap.size, "metadata": totals[METADATA], "raw": totals[RAW],
           "free": totals[FREE], "userblock": totals[USERBLOCK], "unclaimed": unclaimed,
           "overlapping": overlapping, "unused_in_structures": unused,
           "gaps": [{"offset": a, "size": b - a} for a, b in gap_list]}
    return out


# signatures of structures a gap may still hold after the library freed or replaced them
SIGNATURES = (b"OHDR", b"OCHK", b"TREE", b"SNOD", b"HEAP", b"GCOL", b"FRHP", b"FHDB", b"FHIB",
              b"BTHD", b"BTIN", b"BTLF", b"FAHD", b"FADB", b"EAHD", b"EAIB", b"EASB", b"EADB",
              b"FSHD", b"FSSE", b"SMTB", b"SMLI")


def classify_gaps(fmap, acc):
    """Sort the unclaimed bytes into zero-filled runs (space the library freed, or left over in
    a metadata/raw-data aggregator block, without recording it in the file: files that do not
    persist free space keep no list of it), stale structures (a gap starting with a structure
    signature: a block the library replaced, e.g. a grown local heap data segment or the
    symbol table of a group converted to link messages) and other bytes."""
    zero = stale = other = 0
    segments = [heap.data[:16] for heap, _seg, _free in fmap.facts.get("lheap", [])
                if len(heap.data) >= 16]
    for g in acc["gaps"]:
        data = fmap.read(g["offset"], g["size"])
        if not data.strip(b"\0"):
            g["class"] = "zero-filled"
            zero += g["size"]
        elif data[:4] in SIGNATURES:
            g["class"] = f"stale {data[:4].decode()}"
            stale += g["size"]
        elif len(data) >= 16 and data[:16] in segments:
            g["class"] = "stale local heap data segment"
            stale += g["size"]
        else:
            g["class"] = "other"
            other += g["size"]
    acc["unclaimed_zero_filled"] = zero
    acc["unclaimed_stale_structures"] = stale
    acc["unclaimed_other"] = other
    return acc
