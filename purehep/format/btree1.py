"""Level 1A1: version 1 B-trees (spec III.A.1), node type 0 (group nodes) and type 1 (raw
data chunks).

A node is "TREE", node type, node level, entries used N, left and right sibling addresses,
then N+1 keys interleaved with N child addresses. Type 0 keys are a local-heap offset (Size of
Lengths bytes); type 1 keys are the chunk size (4 bytes), the filter mask (4 bytes) and D+1
64-bit element offsets (spec Appendix F, note 4). Trees are walked level by level; every node
is bounds-checked, its level must be one less than its parent's, and no node is visited twice.
"""
from dataclasses import dataclass
import struct

import numpy as np

from ..errors import FormatError

SIGNATURE = b"TREE"
GROUP, CHUNK = 0, 1
MAX_LEVEL = 64
MAX_NODES = 1 << 26
_HEAD = struct.Struct("<4sBBH")    # signature, node type, level, entries used


@dataclass(frozen=True)
class Node:
    """One decoded B-tree node; ``entries`` is a uint8 array (N, key size + address size)
    whose row i is key i followed by child i; ``last_key`` is key N."""
    address: int
    node_type: int
    level: int
    nentries: int
    left: int | None
    right: int | None
    entries: object
    last_key: bytes

    def children(self, ctx):
        so = ctx.sizeof_offsets
        ks = self.entries.shape[1] - so
        raw = self.entries[:, ks:ks + so]
        return [int.from_bytes(bytes(r), "little") for r in raw]


def key_size(ctx, node_type, ndims=None):
    """Bytes of one key: Size of Lengths for groups; 8 + 8 * ndims for chunks, where ndims is
    the layout's dimensionality (dataset rank + 1)."""
    if node_type == GROUP:
        return ctx.sizeof_lengths
    if ndims is None:
        raise ValueError("raw data chunk keys need the layout dimensionality")
    return 8 + 8 * ndims


def node_header(ctx, addr, node_type, expected_level=None):
    """(level, entries used, left sibling, right sibling) of the node at ``addr``, checked:
    signature, node type, a plausible level (``expected_level`` when given)."""
    so = ctx.sizeof_offsets
    head = ctx.read_small(addr, 8 + 2 * so, "v1 B-tree node")
    level, nentries = _checked_header(ctx, addr, head, node_type, expected_level)
    left = int.from_bytes(head[8:8 + so], "little")
    right = int.from_bytes(head[8 + so:8 + 2 * so], "little")
    return (level, nentries, None if left == ctx.undefined else left,
            None if right == ctx.undefined else right)


def _checked_header(ctx, addr, head, node_type, expected_level):
    """(level, entries used) of the node header ``head``, checked."""
    sig, ntype, level, nentries = _HEAD.unpack_from(head)
    where = ctx.absolute(addr)
    if sig != SIGNATURE:
        raise FormatError(f"bad signature {sig!r}, expected {SIGNATURE!r}", "v1 B-tree node",
                          where)
    if ntype != node_type:
        raise FormatError(f"node type {ntype}, expected {node_type}", "v1 B-tree node", where)
    if level > MAX_LEVEL:
        raise FormatError(f"node level {level} is implausible", "v1 B-tree node", where)
    if expected_level is not None and level != expected_level:
        raise FormatError(f"node level {level}, expected {expected_level}", "v1 B-tree node",
                          where)
    return level, nentries


def node_body(ctx, addr, nentries, key_bytes):
    """The bytes after a node's header: ``nentries`` (key, child address) pairs, then the
    last key."""
    so = ctx.sizeof_offsets
    return ctx.read_small(addr + 8 + 2 * so, nentries * (key_bytes + so) + key_bytes,
                          "v1 B-tree node keys")


def read_node(ctx, addr, node_type, key_bytes, expected_level=None, room=0):
    """(level, entries used, body) of the node at ``addr``: its header checked as by
    ``node_header``, its body as ``node_body`` gives it. The header and ``room`` entries
    are read in one piece (as far as the file goes: the library allocates every node at
    its full size), the rest of a fuller node after."""
    so = ctx.sizeof_offsets
    hsize, es = 8 + 2 * so, key_bytes + so
    fits = ctx.source.size - ctx.base_address - addr
    buf = ctx.read_small(addr, max(hsize, min(hsize + room * es + key_bytes, fits)),
                         "v1 B-tree node")
    level, n = _checked_header(ctx, addr, buf, node_type, expected_level)
    end = hsize + n * es + key_bytes
    body = memoryview(buf)[hsize:end] if end <= len(buf) else node_body(ctx, addr, n, key_bytes)
    return level, n, body


def decode_node(ctx, addr, node_type, ndims=None, expected_level=None):
    """Decode the node at ``addr`` (spec III.A.1, "Layout: B-tree Nodes")."""
    level, nentries, left, right = node_header(ctx, addr, node_type, expected_level)
    ks = key_size(ctx, node_type, ndims)
    raw = np.frombuffer(node_body(ctx, addr, nentries, ks), np.uint8)
    es = ks + ctx.sizeof_offsets
    entries = raw[:nentries * es].reshape(nentries, es)
    return Node(addr, node_type, level, nentries, left, right, entries,
                bytes(raw[nentries * es:]))


def _walk(ctx, root, node_type, ndims):
    """Yield the leaf nodes of the tree at ``root`` in key order (level by level)."""
    if root is None:
        return
    first = decode_node(ctx, root, node_type, ndims)
    level_nodes = [first]
    seen = {root}
    level = first.level
    while level > 0:
        nxt = []
        for node in level_nodes:
            for child in node.children(ctx):
                if child in seen:
                    raise FormatError("v1 B-tree node visited twice (cycle)", "v1 B-tree node",
                                      ctx.absolute(child))
                seen.add(child)
                if len(seen) > MAX_NODES:
                    raise FormatError("v1 B-tree has too many nodes", "v1 B-tree node",
                                      ctx.absolute(root))
                nxt.append(decode_node(ctx, child, node_type, ndims, level - 1))
        level_nodes = nxt
        level -= 1
    yield from level_nodes


def group_symbol_table_nodes(ctx, btree_address):
    """Addresses of the symbol table nodes (SNOD) of a group's type-0 tree, in key order."""
    out = []
    for leaf in _walk(ctx, btree_address, GROUP, None):
        out.extend(leaf.children(ctx))
    return out


def chunk_records(ctx, btree_address, ndims):
    """All chunk entries of a type-1 tree as a uint8 array (nchunks, key size + address size):
    chunk size (4), filter mask (4), ``ndims`` 64-bit offsets, chunk address."""
    ks = key_size(ctx, CHUNK, ndims)
    mats = [leaf.entries for leaf in _walk(ctx, btree_address, CHUNK, ndims)]
    if not mats:
        return np.zeros((0, ks + ctx.sizeof_offsets), np.uint8)
    return np.concatenate(mats) if len(mats) > 1 else mats[0]


# --- encoding ----------------------------------------------------------------------------------

def node_size(ctx, key_bytes, k):
    """Bytes of a node with room for 2K children (the library's fixed allocation)."""
    return 8 + 2 * ctx.sizeof_offsets + 2 * k * ctx.sizeof_offsets + (2 * k + 1) * key_bytes


def encode_node(ctx, node_type, level, keys, children, left, right, key_bytes, k):
    """A node (spec III.A.1) with ``children`` and len(children) + 1 encoded ``keys``, padded
    to the size of a full node."""
    out = bytearray(SIGNATURE + struct.pack("<BBH", node_type, level, len(children)))
    out += ctx.pack_address(left) + ctx.pack_address(right)
    for key, child in zip(keys, children):
        out += key + ctx.pack_address(child)
    out += keys[len(children)]
    return bytes(out) + bytes(node_size(ctx, key_bytes, k) - len(out))


def node_addresses(ctx, root, node_type, ndims=None):
    """Every node address of the tree at ``root`` (internal and leaf, not the children the
    leaves point to), level by level."""
    out, level_nodes = [], [root] if root is not None else []
    seen = set(level_nodes)
    while level_nodes:
        out.extend(level_nodes)
        nxt = []
        for addr in level_nodes:
            node = decode_node(ctx, addr, node_type, ndims)
            if node.level == 0:
                continue
            for child in node.children(ctx):
                if child in seen:
                    raise FormatError("v1 B-tree node visited twice (cycle)", "v1 B-tree node",
                                      ctx.absolute(child))
                seen.add(child)
                nxt.append(child)
        level_nodes = nxt
    return out
