"""Level 2A2: object header messages — a registry of decoders by message type.

Each module decodes one message (spec "IV.A.2.x") from a Cursor over the message body. Shared
messages (flag bit 1) are resolved here, to the committed object header or the shared object
header message heap, before the type's decoder sees the body.
"""
from importlib import import_module

from ...errors import FormatError, UnsupportedFeatureError
from ..context import Cursor

# type -> (spec name, module that defines ``decode(cur)``)
MESSAGE_TYPES = {
    0x00: ("NIL", None),
    0x01: ("dataspace", "dataspace"),
    0x02: ("link info", "link_info"),
    0x03: ("datatype", "datatype"),
    0x04: ("fill value (old)", "fill_value"),
    0x05: ("fill value", "fill_value"),
    0x06: ("link", "link"),
    0x07: ("external data files", "external_files"),
    0x08: ("data layout", "layout"),
    0x09: ("bogus", None),
    0x0A: ("group info", "group_info"),
    0x0B: ("filter pipeline", "filter_pipeline"),
    0x0C: ("attribute", "attribute"),
    0x0D: ("object comment", "simple"),
    0x0E: ("object modification time (old)", "simple"),
    0x0F: ("shared message table", "simple"),
    0x10: ("object header continuation", "simple"),
    0x11: ("symbol table", "simple"),
    0x12: ("object modification time", "simple"),
    0x13: ("B-tree K values", "simple"),
    0x14: ("driver info", "simple"),
    0x15: ("attribute info", "attribute_info"),
    0x16: ("object reference count", "simple"),
    0x17: ("file space info", "simple"),
    0x18: ("metadata cache image", "simple"),
}


def name(mtype):
    return MESSAGE_TYPES.get(mtype, (f"unknown message {mtype:#x}", None))[0]


_STRUCTURE = {t: f"{n} message" for t, (n, _) in MESSAGE_TYPES.items()}


_DECODERS = {}


def _decoder(mtype):
    """The decode function for a message type (its module is imported on first use)."""
    try:
        return _DECODERS[mtype]
    except KeyError:
        entry = MESSAGE_TYPES.get(mtype)
        found = None
        if entry is not None and entry[1] is not None:
            found = import_module(f"{__name__}.{entry[1]}").DECODERS[mtype]
        _DECODERS[mtype] = found
        return found


# Messages whose decoding depends only on their bytes (and the file's sizes), decoded once per
# distinct body: the same datatype and dataspace recur in thousands of attributes and datasets.
_MEMO_TYPES = (0x01, 0x03)
_MEMO_LIMIT = 4096


def decode_body(ctx, mtype, data, offset):
    """Decode an unshared message body of type ``mtype`` (bytes at absolute ``offset``)."""
    decoder = _decoder(mtype)
    if decoder is None:
        return None
    if mtype in _MEMO_TYPES and len(data) <= 256:
        memo = ctx.cache.setdefault(("memo", mtype), {})
        key = bytes(data)
        value = memo.get(key)
        if value is None:
            value = decoder(Cursor(data, offset, _STRUCTURE[mtype], ctx))
            if len(memo) < _MEMO_LIMIT:
                memo[key] = value
        return value
    return decoder(Cursor(data, offset, _STRUCTURE[mtype], ctx))


def decode(ctx, raw, depth=0):
    """Decode a RawMessage, resolving a shared message to where it is stored.

    Returns None for message types that carry nothing to decode (NIL, bogus) and for unknown
    types the flags allow to skip; an unknown type flagged "fail if unknown" raises.
    """
    if raw.type not in MESSAGE_TYPES:
        if raw.flags & 0x80 or raw.flags & 0x08:
            raise UnsupportedFeatureError(
                f"object header message type {raw.type:#x} at offset {raw.offset} is unknown and "
                "flagged as required")
        return None
    if raw.shared:
        data, offset = resolve_shared(ctx, raw, depth)
        return decode_body(ctx, raw.type, data, offset)
    return decode_body(ctx, raw.type, raw.data, raw.offset)


def shared_location(ctx, raw):
    """Where a shared message's body is kept (spec IV.A.2 "Shared Message"):
    ("sohm", heap ID), ("global heap", (collection address, index)) or ("header", address)."""
    cur = Cursor(raw.data, raw.offset, f"shared {name(raw.type)} message", ctx)
    version = cur.version((1, 2, 3))
    kind = cur.u8()
    if version == 1:
        cur.skip(6)
    if version == 3 and kind == 1:
        return "sohm", bytes(cur.bytes(8))
    if version < 3 and kind & 0x01:
        # libhdf5 before 1.6 could keep a shared message in a global heap object
        return "global heap", (cur.address(), cur.u32())
    if version == 1:
        # version 1 holds a whole symbol table entry: the (unused) link name offset, then the
        # object header address (libhdf5 decodes it with H5G_ent_decode)
        cur.skip(ctx.sizeof_offsets)
    if version < 3 or kind == 2:  # before version 3 every shared message is a committed one
        addr = cur.address()
        if addr is None:
            raise cur.error("undefined address of the committed message's object header")
        return "header", addr
    raise cur.error(f"unsupported shared message location type {kind} (version {version})")


def committed_address(ctx, raw):
    """The address of the committed object header a shared message points to (spec IV.A.2
    "Shared Message", a committed datatype), or None for an unshared message or one kept in
    the shared object header message table or a global heap."""
    if raw is None or not raw.shared:
        return None
    where, loc = shared_location(ctx, raw)
    return loc if where == "header" else None


def encode_committed(ctx, address):
    """The body of a shared message pointing to the committed object header at ``address``:
    version 2, type 2 ("committed"), the address (spec IV.A.2 "Shared Message"), as libhdf5
    writes it for a committed datatype in every format version."""
    return bytes((2, 2)) + ctx.pack_address(address)


def resolve_shared(ctx, raw, depth=0):
    """(body, absolute offset) of the message a shared message points to (spec IV.A.2)."""
    if depth > 8:
        raise FormatError("shared message chain too deep", f"shared {name(raw.type)} message",
                          raw.offset)
    where, loc = shared_location(ctx, raw)
    if where == "sohm":
        from ..sohm import shared_message_table
        return shared_message_table(ctx, raw.offset).get(raw.type, loc)
    if where == "global heap":
        from ..global_heap import get_object
        return get_object(ctx, *loc), ctx.absolute(loc[0])
    from ..object_header import ObjectHeader
    header = ctx.cached("ohdr", loc, lambda: ObjectHeader.decode(ctx, loc))
    target = header.first(raw.type)
    if target is None:
        raise FormatError(f"the committed object header at {loc} has no {name(raw.type)} "
                          "message", f"shared {name(raw.type)} message", raw.offset)
    if target.shared:
        return resolve_shared(ctx, target, depth + 1)
    return target.data, target.offset
