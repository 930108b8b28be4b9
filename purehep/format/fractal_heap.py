"""Level 1G: fractal heaps — header FRHP, direct blocks FHDB, indirect blocks FHIB, heap IDs.

Spec: "III.G. Disk Format: Level 1G - Fractal Heap". The doubling-table arithmetic follows the
library (the spec's formula for the rows of a child indirect block omits the table width):

- row 0 and row 1 blocks are *Starting Block Size* bytes, each later row doubles;
- row ``r >= 1`` starts at heap offset ``start * width * 2**(r-1)``;
- rows below ``max_direct_rows = log2(max_direct) - log2(start) + 2`` hold direct blocks,
  later rows hold indirect blocks of ``log2(row block size) - log2(start * width) + 1`` rows;
- heap ID offsets take ``ceil(max_heap_bits / 8)`` bytes, lengths
  ``min(ceil(log2(max_direct) / 8), floor(log2(max_managed)) // 8 + 1)`` bytes;
- tiny IDs use the extended (12-bit length) form when the ID is longer than 18 bytes;
- huge IDs hold address and length directly when they fit in ``id_len - 1`` bytes, else a
  key of ``min(id_len - 1, 8)`` bytes into the huge-object v2 B-tree (types 1/2).

Every block address and size is checked against the file, the number of rows is capped by the
header's *Maximum Heap Size*, and descent through indirect blocks is bounded (child blocks have
strictly fewer rows).
"""
from collections import OrderedDict
from typing import NamedTuple

from ..errors import FormatError, UnsupportedFeatureError
from . import checksum
from .context import Cursor

SIGNATURE_HEADER = b"FRHP"
SIGNATURE_DIRECT = b"FHDB"
SIGNATURE_INDIRECT = b"FHIB"
FLAG_HUGE_ID_WRAPPED = 0x01
FLAG_CHECKSUM_DIRECT = 0x02
ID_MANAGED, ID_HUGE, ID_TINY = 0, 1, 2
MAX_INDEX_BITS = 64
MAX_DIRECT_BLOCK_SIZE = 1 << 31
FILTERED_BLOCK_CACHE = 16     # decoded (defiltered) direct blocks kept per heap


def _log2(n):
    return n.bit_length() - 1


def _power_of_two(n):
    return n > 0 and n & (n - 1) == 0


class BlockEntry(NamedTuple):
    """One child entry of an indirect block (a direct block unless ``indirect``)."""
    address: int | None
    filtered_size: int | None = None
    filter_mask: int = 0


class IndirectBlock(NamedTuple):
    address: int
    block_offset: int
    nrows: int
    entries: tuple          # nrows * width BlockEntry (direct rows) or addresses (indirect rows)


class DirectBlock(NamedTuple):
    """A direct block: heap offset, address, size, (defiltered) bytes, absolute offset."""
    block_offset: int
    address: int
    size: int
    data: object
    offset: int
    filtered: bool = False


class FractalHeap:
    """A decoded fractal heap header (all fields, spec names) and object access by heap ID."""

    def __init__(self, ctx, address):
        self.ctx = ctx
        self.address = address
        self._iblocks = {}
        self._verified = set()
        self._filtered_cache = OrderedDict()
        self._huge_btree = None
        self._pipeline = None

    def __repr__(self):
        return (f"FractalHeap(address={self.address}, id_len={self.heap_id_length}, "
                f"managed={self.managed_objects}, huge={self.huge_objects}, "
                f"tiny={self.tiny_objects})")

    # --- header (spec III.G "Fractal Heap Header") -----------------------------------------

    @classmethod
    def decode(cls, ctx, addr):
        """The heap whose header is at relative address ``addr`` (cached on the context)."""
        ctx.defined(addr, "fractal heap header")
        return ctx.cached("frhp", addr, lambda: cls._decode(ctx, addr))

    @classmethod
    def _decode(cls, ctx, addr):
        structure = "fractal heap header"
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        fixed = 4 + 1 + 2 + 2 + 1 + 4 + sl + so + sl + so + 8 * sl + 2 + sl + sl + 2 + 2 + so + 2
        ctx.check_range(addr, fixed + 4, structure)
        cur = ctx.cursor(addr, fixed, structure)
        cur.signature(SIGNATURE_HEADER)
        cur.version((0,))
        h = cls(ctx, addr)
        h.heap_id_length = cur.u16()
        h.io_filters_encoded_length = cur.u16()
        h.flags = cur.u8()
        h.max_managed_object_size = cur.u32()
        h.next_huge_id = cur.length()
        h.huge_btree_address = cur.address()
        h.managed_free_space = cur.length()
        h.free_space_manager_address = cur.address()
        h.managed_space = cur.length()
        h.allocated_managed_space = cur.length()
        h.direct_block_iterator_offset = cur.length()
        h.managed_objects = cur.length()
        h.huge_objects_size = cur.length()
        h.huge_objects = cur.length()
        h.tiny_objects_size = cur.length()
        h.tiny_objects = cur.length()
        h.table_width = cur.u16()
        h.starting_block_size = cur.length()
        h.max_direct_block_size = cur.length()
        h.max_heap_size = cur.u16()              # log2 of the managed address space
        h.starting_root_rows = cur.u16()
        h.root_block_address = cur.address()
        h.current_root_rows = cur.u16()
        h.root_filtered_size = None
        h.root_filter_mask = 0
        h.io_filter_information = b""
        total = fixed + 4
        if h.io_filters_encoded_length:
            total += sl + 4 + h.io_filters_encoded_length
        ctx.check_range(addr, total, structure)
        whole = ctx.read(addr, total, structure)
        checksum.verify(ctx, whole, structure, ctx.absolute(addr))
        if h.io_filters_encoded_length:
            tail = Cursor(whole, ctx.absolute(addr), structure, ctx, fixed)
            h.root_filtered_size = tail.length()
            h.root_filter_mask = tail.u32()
            h.io_filter_information = bytes(tail.bytes(h.io_filters_encoded_length))
        h._init_tables(ctx.absolute(addr))
        if h.free_space_manager_address is not None and ctx.verify_checksums:
            # not needed to read the heap, but damage to the heap's metadata all the same
            from .free_space import verify_manager
            verify_manager(ctx, h.free_space_manager_address)
        return h

    def _init_tables(self, where):
        structure = "fractal heap header"

        def bad(msg):
            return FormatError(msg, structure, where)

        if not _power_of_two(self.table_width):
            raise bad(f"table width {self.table_width} is not a power of two")
        if not _power_of_two(self.starting_block_size):
            raise bad(f"starting block size {self.starting_block_size} is not a power of two")
        if not _power_of_two(self.max_direct_block_size) or \
                self.max_direct_block_size < self.starting_block_size:
            raise bad(f"maximum direct block size {self.max_direct_block_size} is not a power of "
                      f"two at least the starting block size")
        if self.max_direct_block_size > MAX_DIRECT_BLOCK_SIZE:
            raise bad(f"maximum direct block size {self.max_direct_block_size} exceeds the "
                      f"library's limit of {MAX_DIRECT_BLOCK_SIZE}")
        self.start_bits = _log2(self.starting_block_size)
        self.first_row_bits = self.start_bits + _log2(self.table_width)
        self.max_direct_rows = _log2(self.max_direct_block_size) - self.start_bits + 2
        if not self.first_row_bits <= self.max_heap_size <= min(MAX_INDEX_BITS,
                                                                8 * self.ctx.sizeof_lengths):
            raise bad(f"maximum heap size of 2**{self.max_heap_size} bytes is out of range")
        self.max_root_rows = self.max_heap_size - self.first_row_bits + 1
        if self.current_root_rows > self.max_root_rows:
            raise bad(f"{self.current_root_rows} root indirect block rows exceed the "
                      f"{self.max_root_rows} the heap size allows")
        self.row_block_size = [self.starting_block_size]
        self.row_block_offset = [0]
        for r in range(1, self.max_root_rows + 1):
            self.row_block_size.append(self.starting_block_size << max(r - 1, 0))
            self.row_block_offset.append((self.starting_block_size * self.table_width) << (r - 1))
        self.row_block_size[1] = self.starting_block_size
        self.heap_offset_size = (self.max_heap_size + 7) // 8
        max_dir_off_size = (_log2(self.max_direct_block_size) + 7) // 8
        self.heap_length_size = min(max_dir_off_size,
                                    (max(self.max_managed_object_size, 1).bit_length() - 1) // 8 + 1)
        self.checksum_direct_blocks = bool(self.flags & FLAG_CHECKSUM_DIRECT)
        self.filtered = self.io_filters_encoded_length > 0
        if self.heap_id_length == 0:
            raise bad("heap ID length of 0")
        if self.heap_id_length - 1 <= 16:
            self.tiny_max_length, self.tiny_extended = self.heap_id_length - 1, False
        elif self.heap_id_length - 1 == 17:
            self.tiny_max_length, self.tiny_extended = 16, False
        else:
            self.tiny_max_length, self.tiny_extended = self.heap_id_length - 2, True
        so, sl = self.ctx.sizeof_offsets, self.ctx.sizeof_lengths
        if self.filtered:
            self.huge_ids_direct = self.heap_id_length - 1 >= so + sl + 4 + sl
        else:
            self.huge_ids_direct = self.heap_id_length - 1 >= so + sl
        self.huge_id_size = None if self.huge_ids_direct else min(self.heap_id_length - 1, 8)
        self.direct_overhead = (4 + 1 + so + self.heap_offset_size
                                + (4 if self.checksum_direct_blocks else 0))
        if self.root_block_address is not None:
            if self.current_root_rows == 0:
                size = self.root_filtered_size if self.filtered else self.starting_block_size
                self.ctx.check_range(self.root_block_address, size or 0, "fractal heap direct block")
            else:
                self.ctx.check_range(self.root_block_address, self.indirect_block_size(
                    self.current_root_rows), "fractal heap indirect block")

    # --- doubling table ----------------------------------------------------------------------

    def rows_for_size(self, block_size):
        """Rows of an indirect block spanning ``block_size`` bytes of heap space."""
        return _log2(block_size) - self.first_row_bits + 1

    def indirect_block_size(self, nrows):
        so = self.ctx.sizeof_offsets
        entry = so + (self.ctx.sizeof_lengths + 4 if self.filtered else 0)
        ndirect = min(nrows, self.max_direct_rows) * self.table_width
        nindirect = max(nrows - self.max_direct_rows, 0) * self.table_width
        return 4 + 1 + so + self.heap_offset_size + ndirect * entry + nindirect * so + 4

    def _lookup(self, rel):
        """(row, column) of the block holding relative heap offset ``rel`` in an indirect block."""
        if rel < self.starting_block_size * self.table_width:
            return 0, rel // self.starting_block_size
        high = _log2(rel)
        row = high - self.first_row_bits + 1
        if row >= len(self.row_block_size):
            return row, 0
        return row, (rel - (1 << high)) // self.row_block_size[row]

    def indirect_block(self, addr, nrows, block_offset):
        """Decode (and cache) the indirect block at ``addr`` with ``nrows`` rows."""
        got = self._iblocks.get(addr)
        if got is not None:
            if got.nrows != nrows or got.block_offset != block_offset:
                raise FormatError("indirect block reached with two different shapes",
                                  "fractal heap indirect block", self.ctx.absolute(addr))
            return got
        ctx, structure = self.ctx, "fractal heap indirect block"
        if nrows <= 0 or nrows > self.max_root_rows:
            raise FormatError(f"{nrows} rows out of range", structure, ctx.absolute(addr))
        size = self.indirect_block_size(nrows)
        cur = ctx.cursor(addr, size, structure)
        self._check_prefix(cur, SIGNATURE_INDIRECT, block_offset,
                           lambda: checksum.verify(ctx, cur.buf, structure, cur.base))
        entries = []
        for row in range(nrows):
            for _ in range(self.table_width):
                if row < self.max_direct_rows:
                    baddr = cur.address()
                    if self.filtered:
                        entries.append(BlockEntry(baddr, cur.length(), cur.u32()))
                    else:
                        entries.append(BlockEntry(baddr))
                else:
                    entries.append(BlockEntry(cur.address()))
        block = IndirectBlock(addr, block_offset, nrows, tuple(entries))
        self._iblocks[addr] = block
        return block

    def children(self, iblock):
        """(entry, block size, heap offset, rows) of each allocated child of an indirect block;
        rows is None for a direct block, else the child indirect block's row count (the caller
        checks it is smaller than the parent's)."""
        for i, entry in enumerate(iblock.entries):
            if entry.address is None:
                continue
            row, col = divmod(i, self.table_width)
            size = self.row_block_size[row]
            child_off = iblock.block_offset + self.row_block_offset[row] + col * size
            yield (entry, size, child_off,
                   None if row < self.max_direct_rows else self.rows_for_size(size))

    def direct_block(self, addr, size, block_offset, filtered_size=None, filter_mask=0):
        """The DirectBlock at ``addr`` of ``size`` bytes (defiltered, checksum verified)."""
        ctx, structure = self.ctx, "fractal heap direct block"
        where = ctx.absolute(addr)
        if size < self.direct_overhead:
            raise FormatError(f"block of {size} bytes is smaller than its prefix", structure, where)
        if self.filtered:
            data = self._filtered_cache.get(addr)
            if data is None:
                if filtered_size is None or filtered_size <= 0:
                    raise FormatError("filtered direct block without a size", structure, where)
                raw = ctx.read(addr, filtered_size, structure)
                data = self._defilter(raw, filter_mask, size, structure, where)
                self._check_direct(data, addr, block_offset, structure, where)
                self._filtered_cache[addr] = data
                if len(self._filtered_cache) > FILTERED_BLOCK_CACHE:
                    self._filtered_cache.popitem(last=False)
            return DirectBlock(block_offset, addr, size, data, where, True)
        data = ctx.read(addr, size, structure)
        if addr not in self._verified:
            self._check_direct(data, addr, block_offset, structure, where)
            self._verified.add(addr)
        return DirectBlock(block_offset, addr, size, data, where)

    def _check_prefix(self, cur, signature, block_offset, after_version=None):
        """The prefix direct and indirect blocks share (spec III.G): signature, version 0, the
        heap header's address and the block's offset in the heap's address space."""
        cur.signature(signature)
        cur.version((0,))
        if after_version is not None:
            after_version()
        heap_addr = cur.address()
        if heap_addr != self.address:
            raise cur.error(f"belongs to the heap at {heap_addr}, not {self.address}")
        stored_offset = cur.uint(self.heap_offset_size)
        if stored_offset != block_offset:
            raise cur.error(f"block offset {stored_offset}, expected {block_offset}")

    def _check_direct(self, data, addr, block_offset, structure, where):
        cur = Cursor(data, where, structure, self.ctx)
        self._check_prefix(cur, SIGNATURE_DIRECT, block_offset)
        if self.checksum_direct_blocks and self.ctx.verify_checksums:
            pos = cur.pos
            stored = cur.u32()
            buf = bytearray(data)
            buf[pos:pos + 4] = b"\0\0\0\0"
            computed = checksum.lookup3(buf)
            if stored != computed:
                from ..errors import ChecksumError
                raise ChecksumError(f"checksum mismatch (stored {stored:#010x}, computed "
                                    f"{computed:#010x})", structure, where)

    def _defilter(self, raw, mask, size, structure, where):
        """Undo the heap's I/O filter pipeline (spec: I/O Filter Information)."""
        try:
            from ..filters import decode_pipeline
        except ImportError:
            raise UnsupportedFeatureError(
                f"{structure} at offset {where}: fractal heaps with I/O filters need "
                "purehep.filters.decode_pipeline, which is not available") from None
        if self._pipeline is None:
            from .messages import filter_pipeline
            cur = Cursor(self.io_filter_information,
                         self.ctx.absolute(self.address), "fractal heap I/O filter information",
                         self.ctx)
            self._pipeline = filter_pipeline.decode(cur)
        out = decode_pipeline(bytes(raw), self._pipeline, mask, 1, size, (structure, where))
        if size is not None and len(out) != size:
            raise FormatError(f"defiltered to {len(out)} bytes, expected {size}", structure, where)
        return memoryview(bytes(out))

    def root_direct_block(self):
        return self.direct_block(self.root_block_address, self.starting_block_size, 0,
                                 self.root_filtered_size, self.root_filter_mask)

    def _locate(self, offset):
        """The DirectBlock holding managed heap offset ``offset``."""
        where = self.ctx.absolute(self.address)
        if self.root_block_address is None:
            raise FormatError(f"managed object at heap offset {offset} but the heap has no blocks",
                              "fractal heap", where)
        if self.current_root_rows == 0:
            return self.root_direct_block()
        nrows, base, addr, rel = self.current_root_rows, 0, self.root_block_address, offset
        for _ in range(self.max_root_rows + 1):
            iblock = self.indirect_block(addr, nrows, base)
            row, col = self._lookup(rel)
            if row >= nrows:
                raise FormatError(f"heap offset {offset} lies beyond the {nrows} rows of the "
                                  "indirect block", "fractal heap indirect block",
                                  self.ctx.absolute(addr))
            entry = iblock.entries[row * self.table_width + col]
            size = self.row_block_size[row]
            child_off = self.row_block_offset[row] + col * size
            if entry.address is None:
                raise FormatError(f"heap offset {offset} lies in an unallocated block",
                                  "fractal heap indirect block", self.ctx.absolute(addr))
            if row < self.max_direct_rows:
                return self.direct_block(entry.address, size, base + child_off,
                                         entry.filtered_size, entry.filter_mask)
            child_rows = self.rows_for_size(size)
            if child_rows >= nrows:
                raise FormatError("child indirect block is not smaller than its parent",
                                  "fractal heap indirect block", self.ctx.absolute(addr))
            nrows, base, addr, rel = child_rows, base + child_off, entry.address, rel - child_off
        raise FormatError("indirect blocks nest too deeply", "fractal heap", where)

    # --- heap IDs (spec III.G "Fractal Heap ID for ...") -----------------------------------

    def get(self, heap_id, id_offset=None):
        """(object bytes, absolute file offset) of the object a heap ID names.

        The offset is that of the object's bytes for managed objects in unfiltered blocks and
        for unfiltered huge objects; for filtered objects it is that of their stored block; for
        tiny objects (data inside the ID) it is ``id_offset`` + header bytes when the caller
        says where it read the ID, else the heap header's offset.
        """
        heap_id = bytes(heap_id)
        where = self.ctx.absolute(self.address)
        at = id_offset if id_offset is not None else where   # errors: the ID, else the heap
        if not heap_id:
            raise FormatError("empty heap ID", "fractal heap ID", at)
        flags = heap_id[0]
        if flags >> 6 != 0:
            raise FormatError(f"heap ID version {flags >> 6} (only 0 is defined)",
                              "fractal heap ID", at)
        kind = (flags >> 4) & 0x03
        if kind == ID_MANAGED:
            return self._get_managed(heap_id, id_offset)
        if kind == ID_TINY:
            if self.tiny_extended:
                if len(heap_id) < 2:
                    raise FormatError("truncated tiny heap ID", "fractal heap ID", at)
                length, start = (((flags & 0x0F) << 8) | heap_id[1]) + 1, 2
            else:
                length, start = (flags & 0x0F) + 1, 1
            if start + length > min(len(heap_id), self.heap_id_length):
                raise FormatError(f"tiny object of {length} bytes overruns the "
                                  f"{self.heap_id_length}-byte heap ID", "fractal heap ID",
                                  at)
            return heap_id[start:start + length], (id_offset + start if id_offset is not None
                                                   else where)
        if kind == ID_HUGE:
            return self._get_huge(heap_id, id_offset)
        raise FormatError(f"heap ID type {kind} is not managed, huge or tiny", "fractal heap ID",
                          at)

    def managed_id_fields(self, heap_id, id_offset=None):
        """(offset, length) of a managed heap ID (stored at ``id_offset``, when known)."""
        need = 1 + self.heap_offset_size + self.heap_length_size
        if len(heap_id) < need:
            raise FormatError(f"managed heap ID of {len(heap_id)} bytes, needs {need}",
                              "fractal heap ID", id_offset if id_offset is not None
                              else self.ctx.absolute(self.address))
        off = int.from_bytes(heap_id[1:1 + self.heap_offset_size], "little")
        length = int.from_bytes(heap_id[1 + self.heap_offset_size:need], "little")
        return off, length

    def _get_managed(self, heap_id, id_offset):
        off, length = self.managed_id_fields(heap_id, id_offset)
        where = self.ctx.absolute(self.address)
        if length == 0 or length > min(self.max_direct_block_size, self.max_managed_object_size):
            raise FormatError(f"managed object length {length} out of range", "fractal heap ID",
                              id_offset if id_offset is not None else where)
        if off + length > self.managed_space:
            raise FormatError(f"managed object at heap offset {off} (+{length}) lies past the "
                              f"heap's {self.managed_space} bytes of managed space",
                              "fractal heap ID", id_offset if id_offset is not None else where)
        block = self._locate(off)
        inner = off - block.block_offset
        if inner < self.direct_overhead or inner + length > block.size:
            raise FormatError(f"managed object at heap offset {off} (+{length}) does not lie "
                              f"inside its direct block (heap offset {block.block_offset}, "
                              f"{block.size} bytes)", "fractal heap direct block", block.offset)
        data = bytes(block.data[inner:inner + length])
        return data, (block.offset if block.filtered else block.offset + inner)

    def _get_huge(self, heap_id, id_offset):
        ctx = self.ctx
        so = ctx.sizeof_offsets
        structure = "fractal heap huge object"
        cur = Cursor(heap_id, id_offset if id_offset is not None else ctx.absolute(self.address),
                     "fractal heap ID", ctx, 1)
        mask, mem_size = 0, None
        if self.huge_ids_direct:
            addr, length = cur.uint(so), cur.length()
            if self.filtered:
                mask, mem_size = cur.u32(), cur.length()
        else:
            key = cur.uint(self.huge_id_size)
            tree = self.huge_btree()
            found = tree.find(key)
            if not found:
                raise FormatError(f"huge object ID {key} is not in the huge-object B-tree",
                                  "v2 B-tree header", ctx.absolute(tree.address))
            rec = found[0]
            addr, length, mask, mem_size = rec.address, rec.length, rec.filter_mask or 0, \
                rec.memory_size
        if addr == ctx.undefined or length == 0:
            raise FormatError("huge object with undefined address or zero length", structure,
                              ctx.absolute(0) if addr == ctx.undefined else ctx.absolute(addr))
        raw = ctx.read(addr, length, structure)
        if self.filtered:
            return bytes(self._defilter(raw, mask, mem_size, structure, ctx.absolute(addr))), \
                ctx.absolute(addr)
        return bytes(raw), ctx.absolute(addr)

    def huge_btree(self):
        """The v2 B-tree of huge objects (type 1 unfiltered or 2 filtered, for indirect IDs)."""
        if self._huge_btree is None:
            from .btree2 import BTree2
            if self.huge_btree_address is None:
                raise FormatError("huge object ID but the heap has no huge-object B-tree",
                                  "fractal heap header", self.ctx.absolute(self.address))
            tree = BTree2.decode(self.ctx, self.huge_btree_address)
            expected = 2 if self.filtered else 1
            if tree.type != expected:
                raise FormatError(f"huge-object B-tree has type {tree.type}, expected {expected}",
                                  "v2 B-tree header", self.ctx.absolute(self.huge_btree_address))
            self._huge_btree = tree
        return self._huge_btree

    # --- iteration ---------------------------------------------------------------------------

    def iter_direct_blocks(self):
        """Yield every allocated DirectBlock in heap-offset order (bounded descent)."""
        if self.root_block_address is None:
            return
        if self.current_root_rows == 0:
            yield self.root_direct_block()
            return
        seen = set()

        def walk(addr, nrows, base):
            if addr in seen:
                raise FormatError("indirect block referenced twice", "fractal heap indirect block",
                                  self.ctx.absolute(addr))
            seen.add(addr)
            iblock = self.indirect_block(addr, nrows, base)
            for entry, size, child_off, child_rows in self.children(iblock):
                if child_rows is None:
                    yield self.direct_block(entry.address, size, child_off, entry.filtered_size,
                                            entry.filter_mask)
                else:
                    if child_rows >= nrows:
                        raise FormatError("child indirect block is not smaller than its parent",
                                          "fractal heap indirect block", self.ctx.absolute(addr))
                    yield from walk(entry.address, child_rows, child_off)

        yield from walk(self.root_block_address, self.current_root_rows, 0)

    def iter_managed(self):
        """Yield (heap offset, DirectBlock) for each allocated direct block.

        The heap keeps no table of its objects (their IDs live in the B-trees that index them),
        so this walks blocks, not objects.
        """
        for block in self.iter_direct_blocks():
            yield block.block_offset, block


# --- encoding ----------------------------------------------------------------------------------
# ``encode_heap`` writes a new, unfiltered heap holding a list of objects: managed objects are
# packed in doubling-table order (a block that cannot hold the next object is closed and later
# blocks too small for it are skipped, left unallocated as the library leaves them); objects
# larger than the maximum managed size become huge objects, each its own file block, found by
# ID through a type 1 v2 B-tree. No free-space manager is written (address undefined); the
# header's managed free space counts the unused bytes of the allocated blocks.

def managed_id(offset, length, offset_size, length_size):
    """A managed object heap ID (version 0, type 0)."""
    return b"\0" + offset.to_bytes(offset_size, "little") + length.to_bytes(length_size, "little")


def encode_heap(ctx, objects, alloc, heap_id_length=7, starting_block_size=512,
                max_direct_block_size=65536, max_heap_bits=32, table_width=4,
                max_managed_object_size=4096, checksum_direct=True, starting_root_rows=1):
    """Encode a fractal heap holding ``objects``; returns (header address, [(address, bytes)],
    [heap ID per object])."""
    import struct
    so = ctx.sizeof_offsets
    offset_size = (max_heap_bits + 7) // 8
    length_size = min((_log2(max_direct_block_size) + 7) // 8,
                      (max(max_managed_object_size, 1).bit_length() - 1) // 8 + 1)
    overhead = 5 + so + offset_size + (4 if checksum_direct else 0)
    max_direct_rows = _log2(max_direct_block_size) - _log2(starting_block_size) + 2

    def block_size(row):
        return starting_block_size if row < 2 else starting_block_size << (row - 1)

    def row_offset(row):
        return 0 if row == 0 else (starting_block_size * table_width) << (row - 1)

    header_len = 14 + 12 * ctx.sizeof_lengths + 3 * so + 2 * 4 + 4
    header_addr = alloc(header_len)
    blocks = []
    ids = [None] * len(objects)

    # managed objects: placed in the direct blocks of the doubling table, in heap-offset
    # order; rows past the direct rows hold child indirect blocks (spec III.G), walked
    # recursively. A block is identified by its path of entry indices from the root.
    max_rows = max_heap_bits - _log2(starting_block_size * table_width) + 2

    def slots(base, nrows, path):
        """(heap offset, size, entry path, rows of the child indirect block or None for a
        direct block) of each entry of an indirect block's ``nrows`` rows."""
        off = base
        for row in range(nrows):
            size = block_size(row)
            child_rows = None if row < max_direct_rows else \
                _log2(size) - _log2(starting_block_size * table_width) + 1
            for col in range(table_width):
                yield off, size, path + (row * table_width + col,), child_rows
                off += size

    def direct_blocks(base, nrows, path):
        for off, size, entry, child_rows in slots(base, nrows, path):
            if child_rows is None:
                yield off, size, entry
            else:
                yield from direct_blocks(off, child_rows, entry)

    placed = {}                   # block path -> (heap offset, size, [(position, object)])
    huge = []
    blocks_iter = direct_blocks(0, max_rows, ())
    current = None
    for i, obj in enumerate(objects):
        n = len(obj)
        if n > max_managed_object_size or n + overhead > max_direct_block_size:
            huge.append(i)
            continue
        if current is None or current[3] + n > current[1]:
            for boff, size, path in blocks_iter:
                if size - overhead >= n:
                    break
            else:
                raise UnsupportedFeatureError("managed objects exceed the heap's address space")
            current = [boff, size, path, overhead]
            placed[path] = (boff, size, [])
        boff, size, path, pos = current
        placed[path][2].append((pos, i))
        ids[i] = managed_id(boff + pos, n, offset_size, length_size)
        current[3] = pos + n
    allocated = free = span = 0
    entries = {}                  # block path -> address of its direct block
    for path, (boff, size, members) in placed.items():
        buf = bytearray(size)
        buf[:5] = SIGNATURE_DIRECT + b"\0"
        buf[5:5 + so] = ctx.pack_address(header_addr)
        buf[5 + so:5 + so + offset_size] = boff.to_bytes(offset_size, "little")
        end = overhead
        for p, i in members:
            buf[p:p + len(objects[i])] = objects[i]
            end = p + len(objects[i])
        if checksum_direct:
            c = checksum.lookup3(bytes(buf))
            buf[overhead - 4:overhead] = struct.pack("<I", c)
        addr = alloc(size)
        blocks.append((addr, bytes(buf)))
        entries[path] = addr
        allocated += size
        free += size - end
        span = max(span, boff + size)

    def indirect_block(base, nrows, path):
        """Encode the indirect block at ``path`` (its used descendants first); its address."""
        out = bytearray(SIGNATURE_INDIRECT + b"\0" + ctx.pack_address(header_addr)
                        + base.to_bytes(offset_size, "little"))
        for off, _, entry, child_rows in slots(base, nrows, path):
            if child_rows is None:
                out += ctx.pack_address(entries.get(entry))
            else:
                used = any(p[:len(entry)] == entry for p in entries)
                out += ctx.pack_address(indirect_block(off, child_rows, entry) if used
                                        else None)
        out += struct.pack("<I", checksum.lookup3(bytes(out)))
        addr = alloc(len(out))
        blocks.append((addr, bytes(out)))
        return addr

    root_rows, root_addr = 0, None
    if list(entries) == [(0,)]:
        root_addr = entries[(0,)]
        iterator = 0
    elif entries:
        root_rows = max(p[0] for p in entries) // table_width + 1
        root_addr = indirect_block(0, root_rows, ())
        iterator = span
    else:
        iterator = 0

    # huge objects: one block each, indexed by a type 1 v2 B-tree on their IDs
    huge_btree, huge_size = None, 0
    if huge:
        from . import btree2
        id_size = min(heap_id_length - 1, 8)
        records = []
        for k, i in enumerate(huge, 1):
            addr = alloc(len(objects[i]))
            blocks.append((addr, bytes(objects[i])))
            huge_size += len(objects[i])
            ids[i] = b"\x10" + k.to_bytes(id_size, "little") + bytes(heap_id_length - 1 - id_size)
            records.append(btree2.encode_record(1, btree2.HugeObject(addr, len(objects[i]), k),
                                                ctx))
        huge_btree, tree_blocks = btree2.encode_tree(ctx, 1, records, len(records[0]), alloc)
        blocks.extend(tree_blocks)
    for i in range(len(ids)):
        if ids[i] is not None and len(ids[i]) < heap_id_length:
            ids[i] = ids[i] + bytes(heap_id_length - len(ids[i]))

    L = ctx.pack_length
    hdr = (SIGNATURE_HEADER + b"\0" + struct.pack("<HHBI", heap_id_length, 0,
                                                  FLAG_CHECKSUM_DIRECT if checksum_direct else 0,
                                                  max_managed_object_size)
           + L(len(huge)) + ctx.pack_address(huge_btree) + L(free)
           + ctx.pack_address(None) + L(span) + L(allocated) + L(iterator)
           + L(len(objects) - len(huge)) + L(huge_size) + L(len(huge)) + L(0) + L(0)
           + struct.pack("<H", table_width) + L(starting_block_size) + L(max_direct_block_size)
           + struct.pack("<HH", max_heap_bits, starting_root_rows)
           + ctx.pack_address(root_addr) + struct.pack("<H", root_rows))
    hdr += struct.pack("<I", checksum.lookup3(hdr))
    if len(hdr) != header_len:
        raise AssertionError(f"fractal heap header of {len(hdr)} bytes, expected {header_len}")
    blocks.append((header_addr, hdr))
    return header_addr, blocks, ids
