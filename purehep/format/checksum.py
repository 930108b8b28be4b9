"""Metadata checksums (spec: "Appendix C: Jenkins' lookup3 Hash Function for Checksums").

Buffers are hashed in plain Python until a process has hashed enough to repay loading the
compiled kernel (see ``kernels.checksum``): opening and walking small files never imports
numba. ``Batches`` verifies many equal structures together meanwhile.
"""
import struct

import numpy as np

from ..errors import ChecksumError, FormatError, TruncatedError
from ..kernels.checksum import (batch_seconds, lookup3, lookup3_batch, lookup3_body,
                                lookup3_is_compiled)

__all__ = ["lookup3", "verify", "intact", "Batches"]    # (lookup3: what the format modules hash with)

_tail = struct.Struct("<I").unpack_from


def intact(buf):
    """True when the lookup3 checksum in the last 4 bytes of ``buf`` is that of the rest
    (``verify`` without its error: the one call of the hot paths, which call ``verify``
    for the error only when this fails)."""
    return _tail(buf, len(buf) - 4)[0] == lookup3_body(buf)


def verify(ctx, buf, structure, offset):
    """Check the lookup3 checksum stored in the last 4 bytes of ``buf`` (a whole structure)."""
    if not ctx.verify_checksums:
        return
    stored = _tail(buf, len(buf) - 4)[0]
    computed = lookup3_body(buf)
    if stored != computed:
        raise ChecksumError(f"checksum mismatch (stored {stored:#010x}, computed {computed:#010x})",
                            structure, offset)


class Batches:
    """Loading of equal checksummed structures of ``size`` bytes (array data block pages,
    data blocks of one super block), grouped by the caller, one at a time as asked for,
    except while lookup3 runs as plain Python: there, hashing a group's structures
    together costs little more than hashing one (``kernels.checksum.lookup3_batch``), so
    a group's first structures are verified alone while what they cost, with the one asked
    for and one more, stays below what the whole group would (rent, then buy), and then
    every structure of the group not loaded yet is read and verified at once: at most twice
    what the cheaper of the two would have cost, however many are asked for. A batch that
    verifies fails only for the structure asked for, as when read alone (the library reads
    and fails nothing else): another one whose checksum (or ``check``) fails is left out, to
    fail when asked for."""

    def __init__(self, ctx, size, structure, check=None):
        self.ctx, self.size, self.structure, self.check = ctx, size, structure, check
        self._rent = {}            # group -> plain-Python seconds spent on it one at a time
        self._loaded = {}          # group -> structures loaded from it

    def load(self, group, n, want, addr, others):
        """{key: bytes-like} of verified structures: the one ``want`` at relative address
        ``addr`` (else ChecksumError or ``check``'s error) and maybe others of the group of
        ``n`` structures at most: ``others()`` gives {key: relative address} of those not
        loaded yet (asked for only when they are loaded)."""
        ctx = self.ctx
        got = None
        if ctx.verify_checksums and not lookup3_is_compiled():
            done = self._loaded.get(group, 0)
            one = batch_seconds(1, self.size - 4)
            spent = self._rent.get(group, 0.0) + one
            if n - done > 1 and spent + one >= batch_seconds(n - done, self.size - 4):
                addrs = others()
                if addrs:
                    addrs[want] = addr
                    got = self._batch(want, addrs)
            self._rent[group] = 0.0 if got else spent
            self._loaded[group] = done + (len(got) if got else 1)
        if got:
            return got
        # bytes kept: a view of the file's map would pin it (a pread's are not copied)
        buf = bytes(ctx.read_small(addr, self.size, self.structure))
        if self.check is not None:
            self.check(buf, addr)
        verify(ctx, buf, self.structure, ctx.absolute(addr))
        return {want: buf}

    def _batch(self, want, addrs):
        """``load``'s batch: None when one of the structures lies past the end of the file
        (``want`` is then read alone)."""
        ctx, size = self.ctx, self.size
        keys = sorted(addrs, key=addrs.get)
        first, last = addrs[keys[0]], addrs[keys[-1]]
        try:
            if last + size - first <= 2 * size * len(keys):     # close together: one read
                whole = bytes(ctx.read_small(first, last + size - first, self.structure))
                view = memoryview(whole)     # the structures are views of it
                bufs = [view[addrs[k] - first:addrs[k] - first + size] for k in keys]
            else:                      # (a remote source fetches them in one go)
                whole = b""
                with ctx.source.prefetch([(ctx.absolute(addrs[k]), size) for k in keys]):
                    bufs = [bytes(ctx.read_small(addrs[k], size, self.structure))
                            for k in keys]
        except TruncatedError:
            return None
        joined = whole if len(whole) == size * len(keys) else b"".join(bufs)
        mat = np.frombuffer(joined, np.uint8).reshape(len(keys), size)
        good = lookup3_batch(mat[:, :-4]) == mat[:, -4:].copy().view("<u4").reshape(-1)
        out = {}
        for k, buf, ok in zip(keys, bufs, good.tolist()):
            try:                       # as ``load`` checks one: ``check``, then checksum
                if self.check is not None:
                    self.check(buf, addrs[k])
                if not ok:
                    verify(ctx, buf, self.structure, ctx.absolute(addrs[k]))   # raises
            except FormatError:
                if k == want:
                    raise
                continue
            out[k] = buf
        return out
