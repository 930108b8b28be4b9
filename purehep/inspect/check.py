"""``purehep check``: spec conformance rules over the byte map, one small function per rule.

Each rule takes the FileMap (its structures and the facts the walker collected) and yields
Findings naming the structure, its offset, the rule and the spec section. The walker's own
findings (signatures, versions, addresses and sizes past the end of file, structures that do
not decode) come first.
"""
import struct

from ..errors import PurehepError
from ..format import btree1, checksum
from .structure import Finding
from .walker import classify, walk

HASH_KEYED_BTREE2 = (5, 7, 8)     # name-hash / message-hash orders allow equal keys


def rule_walk(fmap, read):
    """Signatures, versions, bounds and decodability, as found while walking (all sections)."""
    yield from fmap.findings


def rule_checksums(fmap, read):
    """Every checksummed structure's stored lookup3 checksum matches (spec Appendix E, and
    each structure's "Checksum" field)."""
    for top in fmap.structures:
        for _d, s in top.walk():
            if s.checksum is None:
                continue
            start, end, at, zeroed = s.checksum
            if start < 0 or end > fmap.size or at + 4 > fmap.size or end < start:
                continue
            data = bytearray(read(start, end - start))
            if zeroed:
                rel = at - start
                data[rel:rel + 4] = b"\0\0\0\0"
            stored = struct.unpack("<I", read(at, 4))[0]
            computed = checksum.lookup3(bytes(data))
            if stored != computed:
                yield Finding(s.name, s.offset, "checksum", s.section,
                              f"stored checksum {stored:#010x} but the bytes give {computed:#010x}")


def rule_no_overlap(fmap, read):
    """No two structures (or raw data blocks) share bytes (spec I.A: each address names one
    structure; overlapping allocations corrupt each other)."""
    last = None
    for s in fmap.structures:
        if s.size <= 0:
            continue
        if last is not None and s.offset < last.end:
            yield Finding(s.name, s.offset, "no overlap", s.section,
                          f"{s.size} bytes at offset {s.offset} ({s.owner or 'no owner'}) overlap "
                          f"the {last.name} at offset {last.offset} ({last.size} bytes, "
                          f"{last.owner or 'no owner'})")
        if last is None or s.end > last.end:
            last = s


def _chunk_key(raw, ndims):
    return tuple(int.from_bytes(raw[8 + 8 * i:16 + 8 * i], "little") for i in range(ndims))


def _group_key(raw, heap, ctx):
    off = int.from_bytes(raw, "little")
    try:
        return heap.string(off) if heap is not None else off
    except PurehepError:
        return None


def rule_btree1_keys(fmap, read):
    """Version 1 B-tree keys increase along each node and across each level (spec III.A.1:
    key i bounds child i below, key i+1 above)."""
    ctx = fmap.ctx
    for t in fmap.facts["btree1"]:
        ks = t["key_size"]
        for nodes in t["levels"]:
            prev = None
            for node in nodes:
                raws = [bytes(node.entries[i, :ks]) for i in range(node.nentries)] + [node.last_key]
                if t["type"] == btree1.CHUNK:
                    keys = [_chunk_key(r, t["ndims"]) for r in raws]
                else:
                    keys = [_group_key(r, t["heap"], ctx) for r in raws]
                where = ctx.absolute(node.address)
                if any(k is None for k in keys):
                    yield Finding("v1 B-tree node", where, "key order", "III.A.1",
                                  "a key names no string in the group's local heap")
                    continue
                for i in range(len(keys) - 1):
                    bad = keys[i] > keys[i + 1] if (t["type"] == btree1.GROUP or
                                                    i == len(keys) - 2) else keys[i] >= keys[i + 1]
                    if bad:
                        yield Finding("v1 B-tree node", where, "key order", "III.A.1",
                                      f"key {i} ({keys[i]!r}) does not sort before key {i + 1} "
                                      f"({keys[i + 1]!r})")
                        break
                if prev is not None and keys and keys[0] < prev:
                    yield Finding("v1 B-tree node", where, "key order", "III.A.1",
                                  f"first key {keys[0]!r} sorts before the last key of its left "
                                  f"sibling ({prev!r})")
                if keys:
                    prev = keys[-1]


def rule_btree1_counts(fmap, read):
    """Entries used per node are at most 2K; internal nodes have children; siblings link up
    (spec III.A.1 "Entries Used", "Left/Right Sibling Address")."""
    ctx = fmap.ctx
    for t in fmap.facts["btree1"]:
        for nodes in t["levels"]:
            for i, node in enumerate(nodes):
                where = ctx.absolute(node.address)
                if node.nentries > 2 * t["k"]:
                    yield Finding("v1 B-tree node", where, "child count", "III.A.1",
                                  f"{node.nentries} entries exceed 2K = {2 * t['k']}")
                if node.level > 0 and node.nentries == 0:
                    yield Finding("v1 B-tree node", where, "child count", "III.A.1",
                                  "internal node without children")
                left = nodes[i - 1].address if i > 0 else None
                right = nodes[i + 1].address if i + 1 < len(nodes) else None
                if node.left != left or node.right != right:
                    yield Finding("v1 B-tree node", where, "sibling links", "III.A.1",
                                  f"sibling addresses ({node.left}, {node.right}) should be "
                                  f"({left}, {right})")


def rule_symbol_nodes(fmap, read):
    """Symbol table nodes hold at most 2 x group leaf K entries, in increasing name order
    (spec III.B)."""
    for s, names, cap in fmap.facts["snod"]:
        if len(names) > cap:
            yield Finding("symbol table node", s.offset, "child count", "III.B",
                          f"{len(names)} symbols exceed the node's capacity of {cap}")
        for a, b in zip(names, names[1:]):
            if not a < b:
                yield Finding("symbol table node", s.offset, "key order", "III.B",
                              f"symbol {a!r} does not sort before {b!r}")
                break


def rule_btree2_keys(fmap, read):
    """Version 2 B-tree records are in increasing key order in-order across the whole tree
    (spec III.A.2; hashes of names and messages may repeat)."""
    for tree, keys, owner in fmap.facts["btree2"]:
        strict = tree.type not in HASH_KEYED_BTREE2
        for (k1, _o1, _n1), (k2, o2, n2) in zip(keys, keys[1:]):
            if (k1 >= k2) if strict else (k1 > k2):
                yield Finding(n2, o2, "key order", "III.A.2",
                              f"record key {k2!r} follows {k1!r} (out of order, {owner})")
                break


def rule_btree2_counts(fmap, read):
    """Record counts of v2 B-tree nodes add up to the header's total (spec III.A.2 "Total
    Number of Records", "Number of Records for Child Node N")."""
    ctx = fmap.ctx
    for tree, keys, owner in fmap.facts["btree2"]:
        try:
            n = sum(1 for _ in tree.records())
        except PurehepError as exc:
            yield Finding(getattr(exc, "structure", None) or "v2 B-tree header",
                          getattr(exc, "offset", None) or ctx.absolute(tree.address),
                          "record counts", "III.A.2", getattr(exc, "reason", str(exc)))
            continue
        if n != tree.total_records:
            yield Finding("v2 B-tree header", ctx.absolute(tree.address), "record counts",
                          "III.A.2", f"{n} records found, header says {tree.total_records}")


def rule_local_heap_free_list(fmap, read):
    """Local heap free blocks lie inside the data segment, are at least 2 x Size of Lengths
    bytes, do not overlap and end the list with offset 1 (spec III.D)."""
    sl = fmap.ctx.sizeof_lengths
    for heap, seg, free in fmap.facts["lheap"]:
        spans = []
        for off, n in free:
            if n < 0:
                yield Finding("local heap", fmap.ctx.absolute(heap.address), "heap free list",
                              "III.D", f"free block offset {off} lies outside the "
                              f"{heap.data_size}-byte data segment or repeats (cycle)")
                continue
            if off + n > heap.data_size:
                yield Finding("local heap", fmap.ctx.absolute(heap.address), "heap free list",
                              "III.D", f"free block at {off} of {n} bytes overruns the data segment")
            if n < 2 * sl:
                yield Finding("local heap", fmap.ctx.absolute(heap.address), "heap free list",
                              "III.D", f"free block at {off} of {n} bytes is smaller than "
                              f"{2 * sl} bytes")
            spans.append((off, off + n))
        spans.sort()
        for (a0, a1), (b0, _b1) in zip(spans, spans[1:]):
            if b0 < a1:
                yield Finding("local heap", fmap.ctx.absolute(heap.address), "heap free list",
                              "III.D", f"free blocks at {a0} and {b0} overlap")


def rule_object_header_messages(fmap, read):
    """Object header message sizes and alignment (spec IV.A.1.a: version 1 messages are
    8-byte aligned multiples of 8, and "Total Number of Header Messages" counts them)."""
    for oh, structs, path, _d in fmap.facts["ohdr"]:
        top = structs[0]
        if oh.version == 1:
            declared = top.fields.get("declared_messages")
            if declared is not None and declared != len(oh.messages):
                yield Finding("object header", top.offset, "message count", "IV.A.1.a",
                              f"header declares {declared} messages but holds {len(oh.messages)}")
            for blk in structs:
                for m in blk.children:
                    if (m.offset - blk.offset) % 8 or (m.size - 8) % 8:
                        yield Finding(m.name, m.offset, "message alignment", "IV.A.1.a",
                                      f"version 1 message of {m.size - 8} bytes at block offset "
                                      f"{m.offset - blk.offset} is not 8-byte aligned")
                        break
        if oh.refcount == 0:
            yield Finding("object header", top.offset, "reference count", top.section,
                          "reference count of 0")


def rule_chunk_index(fmap, read):
    """Chunk index entries agree with the dataspace and chunk shape: offsets on the chunk
    grid within the maximum dimensions, no chunk twice, unfiltered chunks exactly one chunk
    of bytes, filter masks naming existing filters (spec IV.A.2.i, Appendix C)."""
    import numpy as np
    ctx = fmap.ctx
    for layout, space, nfilters, table, path, top, chunk_nbytes in fmap.facts["chunked"]:
        if table is None or not len(table):
            continue
        where = ctx.absolute(layout.address) if layout.address is not None else top.offset
        grid = [None if m is None else -(-int(m) // c)
                for m, c in zip(space.maxshape or space.shape, layout.chunk_shape)]
        for d, g in enumerate(grid):
            if g is not None and np.any(table.scaled[:, d] >= g):
                i = int(np.flatnonzero(table.scaled[:, d] >= g)[0])
                yield Finding("chunk index", where, "chunk index entries", "IV.A.2.i",
                              f"chunk {(table.scaled[i] * layout.chunk_shape).tolist()} of {path} "
                              f"lies outside the maximum dimensions {space.maxshape}")
                break
        if len({tuple(r) for r in table.scaled.tolist()}) != len(table):
            yield Finding("chunk index", where, "chunk index entries", "IV.A.2.i",
                          f"a chunk of {path} is indexed twice")
        if nfilters == 0 and np.any(table.sizes != chunk_nbytes):
            yield Finding("chunk index", where, "chunk index entries", "IV.A.2.i",
                          f"an unfiltered chunk of {path} is not {chunk_nbytes} bytes")
        if nfilters < 32 and np.any(table.masks >> np.uint32(nfilters)):
            yield Finding("chunk index", where, "chunk index entries", "IV.A.2.l",
                          f"a chunk filter mask of {path} skips filters the pipeline does not have")
        if np.any(table.sizes <= 0):
            yield Finding("chunk index", where, "chunk index entries", "IV.A.2.i",
                          f"a chunk of {path} has a stored size of 0")


def rule_link_attribute_counts(fmap, read):
    """Dense link and attribute storage: the name index, the creation-order index and the
    fractal heap agree on how many links/attributes there are, and tracked creation orders
    stay below the info message's maximum (spec IV.A.2.c, IV.A.2.v, III.G)."""
    ctx = fmap.ctx
    for info, path, what, heap, name_tree, order_tree in fmap.facts["dense"]:
        msg = "link info message" if what == "links" else "attribute info message"
        n = name_tree.total_records if name_tree is not None else None
        if name_tree is not None and order_tree is not None and \
                order_tree.total_records != n:
            yield Finding("v2 B-tree header", ctx.absolute(order_tree.address), "link/attribute counts",
                          "III.A.2", f"creation-order index of the {what} of {path} holds "
                          f"{order_tree.total_records} records, the name index {n}")
        if heap is not None and n is not None:
            stored = heap.managed_objects + heap.huge_objects + heap.tiny_objects
            if stored != n:
                yield Finding("fractal heap header", ctx.absolute(heap.address),
                              "link/attribute counts", "III.G",
                              f"heap holds {stored} objects but the name index of the {what} of "
                              f"{path} has {n} records")
        if info.track_order and info.max_creation_index is not None and n is not None and \
                n > info.max_creation_index + (1 if what == "links" else 1) and n > 0:
            yield Finding(msg, None, "link/attribute counts", "IV.A.2.c",
                          f"{n} {what} but maximum creation index {info.max_creation_index}")


def rule_free_space_sections(fmap, read):
    """A free-space section list holds the number of sections its header declares (III.H)."""
    for s, client, nserial, nread in fmap.facts["fsm"]:
        if nread != nserial:
            yield Finding("free-space section list", s.offset, "section count", "III.H",
                          f"{nread} sections read, header declares {nserial}")


def rule_symbol_table_cache(fmap, read):
    """A symbol table entry caching a group's B-tree and heap addresses (cache type 1) agrees
    with the group's symbol table message (spec III.C)."""
    stabs = {}
    for oh, structs, path, d in fmap.facts["ohdr"]:
        if d.get(0x11):
            stabs[oh.address] = d[0x11][0]
    entries = [(e, "/", off) for e, off in fmap.facts["root_cache"]] + fmap.facts["stab_cache"]
    for e, path, off in entries:
        stab = stabs.get(e.header_address)
        if stab is not None and (stab.btree_address, stab.heap_address) != \
                (e.btree_address, e.heap_address):
            yield Finding("symbol table entry", off, "cached addresses", "III.C",
                          f"entry for {path} caches B-tree {e.btree_address} and heap "
                          f"{e.heap_address}; its symbol table message says "
                          f"{stab.btree_address} and {stab.heap_address}")


RULES = [rule_walk, rule_checksums, rule_no_overlap, rule_btree1_keys, rule_btree1_counts,
         rule_symbol_nodes, rule_btree2_keys, rule_btree2_counts, rule_local_heap_free_list,
         rule_object_header_messages, rule_chunk_index, rule_link_attribute_counts,
         rule_free_space_sections, rule_symbol_table_cache]


def check_map(fmap, read):
    """All findings of all rules, each once, in rule order."""
    out, seen = [], set()
    for rule in RULES:
        try:
            found = list(rule(fmap, read))
        except Exception as exc:  # noqa: BLE001 - a rule tripping over a broken file is a finding
            found = [Finding(rule.__name__[5:].replace("_", " "), None, classify(exc), "",
                             f"the rule could not be evaluated ({type(exc).__name__}: {exc})")]
        for f in found:
            key = (f.structure, f.offset, f.message)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def check_source(source, progress=None):
    """(FileMap, findings) of a byte source."""
    fmap = walk(source, progress)
    return fmap, check_map(fmap, lambda off, n: bytes(source.read(off, n, "checked bytes")))
