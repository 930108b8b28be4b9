"""Level 1B: group symbol table nodes ("SNOD") and the entries of symbol-table groups."""
from .superblock import SymbolTableEntry

MAX_SYMBOLS = 1 << 16


def decode_node(ctx, addr):
    """The symbol table entries of one node (spec III.B), in the node's (name) order."""
    head = ctx.cursor(addr, 8, "symbol table node")
    head.signature(b"SNOD")
    head.version((1,))
    head.skip(1)
    count = head.u16()
    if count > MAX_SYMBOLS:
        raise head.error(f"{count} symbols in one node")
    esize = SymbolTableEntry.size(ctx)
    cur = ctx.cursor(addr + 8, count * esize, "symbol table node")
    return [SymbolTableEntry.decode(cur) for _ in range(count)]


def group_entries(ctx, btree_address, heap):
    """(name bytes, entry) for every member of a symbol-table group, in name order."""
    from .btree1 import group_symbol_table_nodes
    out = []
    for node in group_symbol_table_nodes(ctx, btree_address):
        for entry in decode_node(ctx, node):
            out.append((heap.string(entry.name_offset, ctx), entry))
    return out


def node_size(ctx, leaf_k):
    """Bytes of a symbol table node: the library allocates room for 2K entries."""
    return 8 + 2 * leaf_k * SymbolTableEntry.size(ctx)


def encode_node(ctx, entries, leaf_k):
    """A symbol table node (spec III.B) holding ``entries`` (encoded symbol table entries),
    padded to the full 2K-entry size."""
    import struct
    if len(entries) > 2 * leaf_k:
        raise ValueError(f"{len(entries)} entries exceed a node of 2K = {2 * leaf_k}")
    out = b"SNOD" + struct.pack("<BBH", 1, 0, len(entries)) + b"".join(entries)
    return out + bytes(node_size(ctx, leaf_k) - len(out))
