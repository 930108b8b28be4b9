"""A new file: the superblock (spec II.A), its extension when the file has file space settings
of its own (an object header holding the File Space Info message, IV.A.2.x) and an empty root
group, as libhdf5's H5Fcreate writes them for a ``libver``. Everything after that is a change
to an existing file (purehep.write.writer): a new file is an empty file opened for
modification.
"""
import dataclasses
import time

from ..format import object_header, superblock as SB
from ..format.context import Context
from ..format.free_space import PAGE_STRATEGY
from ..format.object_header import DONT_SHARE, MARK_IF_UNKNOWN
from . import model
from .emit import Emitter, Metadata, GROUP_LEAF_K, GROUP_INTERNAL_K

FILE_SPACE_INFO = 0x17


class _Layout:
    """What the emitter asks of a writer: the encoding parameters and the format policy."""

    def __init__(self, ctx, policy):
        self.ctx, self.policy = ctx, policy


class PagedMetadata(Metadata):
    """The metadata area of a new file that uses paged aggregation: a block smaller than a
    page lies inside one page, a bigger one starts a run of whole pages (as libhdf5 places
    metadata in such files, for its page buffer)."""

    def __init__(self, start, page):
        super().__init__(start)
        self.page = page

    def alloc(self, n):
        end, page = self.end, self.page
        if n >= page and end % page or end % page + n > page:
            self.buf += bytes(-end % page)
        return super().alloc(n)


def check_userblock(size):
    if size and (size < 512 or size & (size - 1)):
        raise ValueError("userblock size must be a power of 2 and >= 512")


def _extension(ctx, version, space):
    """The superblock extension's object header holding the File Space Info message
    ``space`` (version 1 header for superblock 2, version 2 with times for 3, the message
    flagged not to be shared and to be marked if unknown, as libhdf5 writes them)."""
    msgs = [(FILE_SPACE_INFO, DONT_SHARE | MARK_IF_UNKNOWN, space.encode(ctx))]
    if version < 3:
        return object_header.encode_v1(msgs)
    t = int(time.time())
    return object_header.encode_v2(msgs, times=(t, t, t, t))


def write_empty(sink, policy, userblock_size=0, track_order=False, space=None):
    """Write [user block][superblock][extension][root group header and its side structures]
    to ``sink`` (an empty file); ``space`` is the File Space Info message of a file with file
    space settings (its end-of-allocation field is filled in here), None for libhdf5's
    defaults. Returns the end of the metadata written (a paged file's end of file is the end
    of that page)."""
    check_userblock(userblock_size)
    base = int(userblock_size or 0)
    ctx = Context(None, 8, 8, base, path=sink.path)
    version = policy.superblock_version
    start = (SB.superblock_size(version, ctx) + 7) & ~7
    ext_address, ext_size = None, 0
    if space is not None:
        ext_address, ext_size = start, len(_extension(ctx, version, space))
    page = space.page_size if space is not None and space.strategy == PAGE_STRATEGY else 0
    em = Emitter(_Layout(ctx, policy), start)
    if page:
        em.meta = em.gheaps.meta = PagedMetadata(start, page)
    if space is not None:
        em.meta.alloc(ext_size)
    root = em.run(model.GroupNode(track_order=bool(track_order)))
    end = em.meta.end
    eof = -(-end // page) * page if page else end
    if space is not None:
        if space.persist:
            space = dataclasses.replace(space, eoa_before_managers=eof)
        em.meta.put(ext_address, _extension(ctx, version, space))
    old_style = root.old_style
    sb = SB.encode_superblock(ctx, version, eof, root.address,
                              root.side.get("btree") if old_style else None,
                              root.side.get("heap") if old_style else None,
                              base_address=0, group_leaf_k=GROUP_LEAF_K,
                              group_internal_k=GROUP_INTERNAL_K, extension_address=ext_address)
    sink.write(0, bytes(base) + sb + bytes(start - len(sb)))
    sink.write(base + start, em.meta.buf)
    sink.truncate(base + eof)
    return end
