"""A file being written: the sink, the object graph, and flush (emit) / close (commit).

The file is laid out as [user block][superblock][raw data ...][metadata]. Raw data (contiguous
blocks, chunks) is written as soon as it is known, at the end of the raw-data area; each flush
drops the previous metadata (truncation), writes pending chunks, then emits all metadata once
after the raw data and the superblock in front. Reading back in write mode reads the flushed
file through the ordinary reader.
"""
import os
import time

from ..format import superblock as SB
from ..format.context import Context
from ..io.sink import FileSink
from . import model
from .emit import Emitter, GROUP_LEAF_K, GROUP_INTERNAL_K
from .policy import Policy


class Writer:
    def __init__(self, path, mode="w", libver=None, userblock_size=0, track_order=False):
        if userblock_size:
            if userblock_size < 512 or userblock_size & (userblock_size - 1):
                raise ValueError("userblock size must be a power of 2 and >= 512")
        self.policy = Policy.from_libver(libver)
        self.libver = libver
        self.sink = FileSink(path, exclusive=mode in ("w-", "x"))
        self.base = int(userblock_size)
        self.ctx = Context(None, 8, 8, self.base, path=self.sink.path)
        self.root = model.GroupNode(track_order=bool(track_order))
        self.sb_size = SB.superblock_size(self.policy.superblock_version, self.ctx)
        self.raw_end = self.sb_size            # relative address where raw data continues
        self.meta_written = False
        self.generation = 0
        self.dirty = True
        self.datasets = []                     # nodes with chunk stores (flushed first)
        self.superblock = None
        self.root_address = None
        self.sink.write(0, bytes(self.base + self.sb_size))

    def absolute(self, addr):
        return self.base + addr

    def alloc_raw(self, n):
        """Space for ``n`` bytes of raw data (the metadata of a previous flush is dropped)."""
        if self.meta_written:
            self.sink.truncate(self.base + self.raw_end)
            self.meta_written = False
        addr = self.raw_end
        self.raw_end += n
        if self.sink.size < self.base + self.raw_end:
            self.sink.truncate(self.base + self.raw_end)
        self.dirty = True
        return addr

    def touch(self):
        self.dirty = True

    def flush(self):
        """Write pending chunks and all metadata; the file on disk (under its temporary name)
        is then complete."""
        if not self.dirty and self.meta_written:
            return
        for node in model.walk(self.root):
            store = getattr(node, "store", None)
            if getattr(store, "flush_before_emit", False):
                store.flush_dirty()
        if self.meta_written:
            self.sink.truncate(self.base + self.raw_end)
        start = (self.raw_end + 7) & ~7
        em = Emitter(self, start)
        root_plan = em.run(self.root)
        eof = em.meta.end
        self.sink.truncate(self.base + start)
        self.sink.write(self.base + start, em.meta.buf)
        if self.sink.size < self.base + eof:
            self.sink.truncate(self.base + eof)
        version = self.policy.superblock_version
        sb = SB.encode_superblock(self.ctx, version, eof, root_plan.address,
                                  root_plan.side.get("btree") if root_plan.old_style else None,
                                  root_plan.side.get("heap") if root_plan.old_style else None,
                                  base_address=0, group_leaf_k=GROUP_LEAF_K,
                                  group_internal_k=GROUP_INTERNAL_K)
        self.sink.write(self.base, sb)
        self.meta_written = True
        self.dirty = False
        self.generation += 1
        self.root_address = root_plan.address
        self.addresses = {k: v for k, v in em.addresses.items()}
        self.ctx.cache.clear()
        self.ctx.source = self.sink.source()
        self.superblock = SB.Superblock.decode(self.ctx.source, self.base)
        self.ctx.superblock = self.superblock

    def node_at(self, address):
        """The node written at ``address`` by the last flush (None if none)."""
        if not self.meta_written:
            return None
        rev = getattr(self, "_by_address", None)
        if rev is None or rev[0] != self.generation:
            nodes = {id(n): n for n in model.walk(self.root)}
            rev = (self.generation, {a: nodes[k] for k, a in self.addresses.items()
                                     if k in nodes})
            self._by_address = rev
        return rev[1].get(address)

    def path_of(self, node):
        """A path to ``node`` (depth first, link creation order), or None."""
        return model.path_of(self.root, node)

    def address_of(self, node):
        if self.dirty or not self.meta_written:
            self.flush()
        return self.addresses.get(id(node))

    def close(self):
        try:
            self.flush()
        except BaseException:
            self.sink.abort()
            raise
        self.sink.commit()

    def abort(self):
        self.sink.abort()

    @staticmethod
    def now():
        t = int(time.time())
        return (t, t, t, t)
