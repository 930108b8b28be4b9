"""Dense links and dense attributes: a fractal heap of message bodies indexed by v2 B-trees.

Spec: "IV.A.2.c The Link Info Message" and "IV.A.2.v The Attribute Info Message" name a
fractal heap (III.G) holding encoded link / attribute messages, a v2 B-tree (III.A.2) on the
lookup3 hash of their names (type 5 links, type 8 attributes) and, optionally, one on their
creation order (type 6 links, type 9 attributes).

Order: the name index is ordered by *hash*, not by name. ``dense_messages`` returns bodies in
index order (hash order, or creation order when asked and indexed); callers that list names as
h5py does sort by the decoded name, or pass ``sort_by_name=True`` to have it done here on the
raw name bytes (byte order, as the library's ``strcmp``).

Attribute records carry the attribute message's header flags: a shared attribute (flag bit 1)
is stored in the heap as a shared-message reference and is resolved here (to the SOHM heap or
a committed object header), so callers always get attribute message bodies.
"""
from ..errors import FormatError
from .btree2 import BTree2
from .context import Cursor
from .fractal_heap import FractalHeap

LINK_NAME, LINK_ORDER, ATTR_NAME, ATTR_ORDER = 5, 6, 8, 9
ATTRIBUTE_MESSAGE = 0x0C
SHARED_FLAG = 0x02


def link_message_name(body, offset=0, ctx=None):
    """The name (bytes) in a link message body (spec IV.A.2.g)."""
    cur = Cursor(body, offset, "link message", ctx)
    cur.version((1,))
    flags = cur.u8()
    if flags & 0x08:
        cur.skip(1)
    if flags & 0x04:
        cur.skip(8)
    if flags & 0x10:
        cur.skip(1)
    n = cur.uint(1 << (flags & 0x03))
    if n == 0:
        raise cur.error("link name of length 0")
    return bytes(cur.bytes(n))


def attribute_message_name(body, offset=0, ctx=None):
    """The name (bytes, without its null terminator) in an attribute message body (IV.A.2.m)."""
    cur = Cursor(body, offset, "attribute message", ctx)
    version = cur.version((1, 2, 3))
    cur.skip(1)
    n = cur.u16()
    cur.skip(4)
    if version == 3:
        cur.skip(1)
    raw = bytes(cur.bytes(n))
    return raw.split(b"\0", 1)[0]


def message_name(record_type, body, offset=0, ctx=None):
    if record_type in (LINK_NAME, LINK_ORDER):
        return link_message_name(body, offset, ctx)
    return attribute_message_name(body, offset, ctx)


def _index(ctx, address, allowed, what):
    tree = BTree2.decode(ctx, address)
    if tree.type not in allowed:
        raise FormatError(f"{what} is a type {tree.type} v2 B-tree, expected type "
                          f"{' or '.join(map(str, allowed))}", "v2 B-tree header",
                          ctx.absolute(address))
    return tree


def _body(ctx, heap, record):
    body, offset = heap.get(record.heap_id)
    flags = getattr(record, "flags", 0)
    if flags & SHARED_FLAG:
        from . import messages
        from .object_header import RawMessage
        raw = RawMessage(ATTRIBUTE_MESSAGE, flags, memoryview(body), offset)
        body, offset = messages.resolve_shared(ctx, raw)
    return body, offset


def dense_records(ctx, heap_address, name_index_address, order_index_address=None,
                  by_creation_order=False):
    """Yield (B-tree record, body, absolute offset) in index order (see ``dense_messages``)."""
    heap = FractalHeap.decode(ctx, heap_address)
    if name_index_address is None:
        raise FormatError("dense storage without a name index", "fractal heap header",
                          ctx.absolute(heap_address))
    names = (name_index_address, (LINK_NAME, ATTR_NAME), "name index")
    orders = (order_index_address, (LINK_ORDER, ATTR_ORDER), "creation-order index")
    use, other = (orders, names) if by_creation_order and order_index_address is not None \
        else (names, orders)
    tree = _index(ctx, *use)
    records = list(tree.records())
    if other[0] is not None and ctx.verify_checksums:
        _same_objects(ctx, tree, records, _index(ctx, *other))
    for record in records:
        body, offset = _body(ctx, heap, record)
        yield record, body, offset


def _same_objects(ctx, tree, records, other):
    """Verify the index a read does not walk (checksums of all its nodes) and that it locates
    the same heap objects as the one it walks, as a reader using it would need."""
    theirs = sorted(bytes(r.heap_id) for r in other.records())
    if theirs != sorted(bytes(r.heap_id) for r in records):
        raise FormatError(f"the dense storage's indexes disagree: {len(records)} and "
                          f"{len(theirs)} records, or different heap objects",
                          "v2 B-tree header", ctx.absolute(other.address))


def dense_messages(ctx, heap_address, name_index_address, order_index_address=None,
                   by_creation_order=False, sort_by_name=False):
    """Raw link or attribute message bodies of dense storage: a list of (body, offset).

    Default: name-index order, i.e. by lookup3 hash of the name (not name order; sort by the
    decoded name, or pass ``sort_by_name=True``). ``by_creation_order=True`` walks the
    creation-order index when there is one; without it (creation order tracked but not
    indexed) the name-index order is returned and the caller sorts by the messages' creation
    order fields.
    """
    records = list(dense_records(ctx, heap_address, name_index_address, order_index_address,
                                 by_creation_order))
    if sort_by_name:
        records.sort(key=lambda t: message_name(_record_kind(t[0]), t[1], t[2], ctx))
    return [(body, offset) for _rec, body, offset in records]


def _record_kind(record):
    return ATTR_NAME if hasattr(record, "flags") else LINK_NAME


def dense_lookup(ctx, heap_address, name_index_address, name, record_type):
    """(body, offset) of the link (record_type 5) or attribute (8) called ``name``, or None.

    Hashes the name with lookup3, descends the name index to the records of that hash, and
    compares the names in their messages (hash collisions are possible).
    """
    if isinstance(name, str):
        name = name.encode("utf-8")
    name = bytes(name)
    if record_type not in (LINK_NAME, ATTR_NAME):
        raise ValueError(f"record_type must be 5 (links) or 8 (attributes), not {record_type}")
    tree = _index(ctx, name_index_address, (record_type,), "name index")
    heap = FractalHeap.decode(ctx, heap_address)
    for record in tree.find(name):
        body, offset = _body(ctx, heap, record)
        if message_name(record_type, body, offset, ctx) == name:
            return body, offset
    return None
