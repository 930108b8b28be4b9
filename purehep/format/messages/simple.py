"""Small messages: object comment, modification times, symbol table, continuation, B-tree K
values, driver info, reference count, file space info and the shared message table (spec
IV.A.2.n-x)."""
from dataclasses import dataclass
import datetime as _dt


@dataclass(frozen=True)
class SymbolTable:
    btree_address: int
    heap_address: int


@dataclass(frozen=True)
class Continuation:
    address: int
    length: int


@dataclass(frozen=True)
class BTreeK:
    indexed_storage_internal_k: int
    group_internal_k: int
    group_leaf_k: int


@dataclass(frozen=True)
class DriverInfoMessage:
    driver_id: bytes
    info: bytes


def comment(cur):
    return cur.cstring().decode("utf-8", "replace")


def mtime_old(cur):
    text = bytes(cur.bytes(14)).decode("ascii", "replace")
    try:
        return int(_dt.datetime.strptime(text, "%Y%m%d%H%M%S")
                   .replace(tzinfo=_dt.timezone.utc).timestamp())
    except ValueError:
        raise cur.error(f"malformed modification time {text!r}") from None


def mtime(cur):
    cur.version((1,))
    cur.skip(3)
    return cur.u32()


def symbol_table(cur):
    return SymbolTable(cur.address(), cur.address())


def continuation(cur):
    return Continuation(cur.address(), cur.length())


def btree_k(cur):
    cur.version((0,))
    return BTreeK(cur.u16(), cur.u16(), cur.u16())


def driver_info(cur):
    cur.version((0,))
    driver = bytes(cur.bytes(8))
    return DriverInfoMessage(driver, bytes(cur.bytes(cur.u16())))


def refcount(cur):
    cur.version((0,))
    return cur.u32()


def file_space_info(cur):
    from ..free_space import decode_file_space_info
    return decode_file_space_info(cur)


@dataclass(frozen=True)
class CacheImage:
    """Metadata cache image message (libhdf5 1.10+, superblock extension): where the
    serialized metadata cache lives. Not in the format spec text."""
    address: int
    length: int


def cache_image(cur):
    cur.version((0,))
    return CacheImage(cur.address(), cur.length())


def shared_table(cur):
    from ..sohm import decode_table_message
    return decode_table_message(cur)


DECODERS = {0x0D: comment, 0x0E: mtime_old, 0x0F: shared_table, 0x10: continuation,
            0x11: symbol_table, 0x12: mtime, 0x13: btree_k, 0x14: driver_info, 0x16: refcount,
            0x17: file_space_info, 0x18: cache_image}


# --- encoders ---------------------------------------------------------------------------------

def encode_symbol_table(stab, ctx):
    return ctx.pack_address(stab.btree_address) + ctx.pack_address(stab.heap_address)


def encode_continuation(cont, ctx):
    return ctx.pack_address(cont.address) + ctx.pack_length(cont.length)


def encode_mtime(seconds):
    """Object Modification Time message (type 0x12), version 1."""
    import struct
    return bytes((1, 0, 0, 0)) + struct.pack("<I", int(seconds) & 0xFFFFFFFF)


def encode_refcount(count):
    import struct
    return bytes((0,)) + struct.pack("<I", count)
