"""A new file: the superblock (spec II.A) and an empty root group, as libhdf5's H5Fcreate
writes them for a ``libver``. Everything after that is a change to an existing file
(purehep.write.writer): a new file is an empty file opened for modification.
"""
from ..format import superblock as SB
from ..format.context import Context
from . import model
from .emit import Emitter, GROUP_LEAF_K, GROUP_INTERNAL_K


class _Layout:
    """What the emitter asks of a writer: the encoding parameters and the format policy."""

    def __init__(self, ctx, policy):
        self.ctx, self.policy = ctx, policy


def check_userblock(size):
    if size and (size < 512 or size & (size - 1)):
        raise ValueError("userblock size must be a power of 2 and >= 512")


def write_empty(sink, policy, userblock_size=0, track_order=False):
    """Write [user block][superblock][root group header and its side structures] to ``sink``
    (an empty file)."""
    check_userblock(userblock_size)
    base = int(userblock_size or 0)
    ctx = Context(None, 8, 8, base, path=sink.path)
    version = policy.superblock_version
    start = SB.superblock_size(version, ctx)
    start = (start + 7) & ~7
    em = Emitter(_Layout(ctx, policy), start)
    root = em.run(model.GroupNode(track_order=bool(track_order)))
    eof = em.meta.end
    old_style = root.old_style
    sb = SB.encode_superblock(ctx, version, eof, root.address,
                              root.side.get("btree") if old_style else None,
                              root.side.get("heap") if old_style else None,
                              base_address=0, group_leaf_k=GROUP_LEAF_K,
                              group_internal_k=GROUP_INTERNAL_K)
    sink.write(0, bytes(base) + sb + bytes(start - len(sb)))
    sink.write(base + start, em.meta.buf)
    sink.truncate(base + eof)
