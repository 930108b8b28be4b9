"""Writing sparse datasets: the defined elements of every chunk kept in memory while a file
is written (row-major indices within the chunk, sorted and unique, and their values); chunks
changed since the last flush are encoded as structured chunks (section 0 = encoded selection +
checksum, section 1 = values; sections filtered by their pipelines) and appended to the raw
data area before the metadata is emitted."""
import numpy as np

from ..format import structured_chunk as SC
from .. import selections as _sel
from . import chunkcodec

METADATA_SECTIONS = (0,)
NSECTIONS = 2


def _merge(old_lin, old_vals, new_lin, new_vals):
    """Union of two (lin, values) sets; on repeated indices the later value wins."""
    lin = np.concatenate([old_lin, new_lin])
    vals = np.concatenate([old_vals, new_vals])
    # the last occurrence wins: unique over the reversed arrays keeps first = last original
    rl = lin[::-1]
    u, idx = np.unique(rl, return_index=True)
    return u, vals[::-1][idx]


class SparseStore:
    """Per-chunk defined elements of one sparse dataset being written."""

    flush_before_emit = True

    def __init__(self, writer, node):
        from ..write.storage import _bare
        self.writer = writer
        self.node = node
        self.dtype = _bare(node.dtype)
        self.chunks = tuple(int(c) for c in node.chunks)
        self.mem = {}          # scaled -> (lin, values)
        self.dirty = set()
        self.records = {}      # scaled -> (address, size, offsets, unfiltered sizes, masks)

    @property
    def shape(self):
        return self.node.shape

    def grid(self, shape=None):
        shape = self.shape if shape is None else shape
        return tuple(-(-int(s) // c) for s, c in zip(shape, self.chunks))

    # --- defining elements --------------------------------------------------------------
    def _coords_of(self, args):
        shape = tuple(self.shape)
        args = args if isinstance(args, tuple) else (args,)
        if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].dtype == bool \
                and args[0].shape == shape:
            return np.argwhere(args[0]).astype(np.int64), None
        sel = _sel.select(shape, args)
        if sel.nselected == 0:
            return np.zeros((0, len(shape)), np.int64), sel
        axes = sel.coords()
        grids = np.meshgrid(*axes, indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64), sel

    def write(self, args, values):
        """``ds[args] = values``: define the selected elements."""
        coords, sel = self._coords_of(args)
        if not len(coords):
            return
        if sel is None:
            vals = np.broadcast_to(np.asarray(values, self.dtype), (len(coords),))
        else:
            vals = np.broadcast_to(np.asarray(values, self.dtype), sel.mshape)
            vals = vals.reshape(sel.read_shape).reshape(-1)
        self.write_points(coords, vals)

    def write_points(self, coords, values):
        """Define the elements at ``coords`` (n, rank) with ``values`` (n,); repeated
        coordinates: the last value wins."""
        coords = np.asarray(coords, np.int64).reshape(-1, len(self.chunks))
        values = np.asarray(values, self.dtype).reshape(-1)
        if len(values) == 1 and len(coords) != 1:
            values = np.broadcast_to(values, (len(coords),))
        if len(values) != len(coords):
            raise ValueError(f"{len(coords)} coordinates but {len(values)} values")
        if not len(coords):
            return
        shape = np.asarray(self.shape, np.int64)
        if np.any(coords < 0) or np.any(coords >= shape):
            raise IndexError("coordinates outside the dataset extent")
        for scaled, lin, vals in self._split(coords, values):
            old = self.mem.get(scaled)
            if old is None:
                u, idx = np.unique(lin[::-1], return_index=True)
                self.mem[scaled] = (u, np.ascontiguousarray(vals[::-1][idx]))
            else:
                self.mem[scaled] = _merge(old[0], old[1], lin, vals)
            self.dirty.add(scaled)
        self.writer.touch()

    def _split(self, coords, values):
        """Yield (scaled, local lin, values) per chunk, in input order within a chunk."""
        grid = self.grid_all()
        from ..kernels.sparse import chunk_keys
        ck, lk = chunk_keys(np.ascontiguousarray(coords), np.asarray(self.chunks, np.int64),
                            np.asarray(grid, np.int64))
        order = np.argsort(ck, kind="stable")
        ck, lk, vals = ck[order], lk[order], np.asarray(values)[order]
        bounds = np.flatnonzero(np.diff(ck)) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [len(ck)]])
        for a, b in zip(starts, ends):
            scaled = tuple(int(x) for x in np.unravel_index(int(ck[a]), grid))
            yield scaled, lk[a:b], vals[a:b]

    def grid_all(self):
        """A chunk grid wide enough for any position of the current extent."""
        return self.grid()

    def erase(self, args):
        coords, _ = self._coords_of(args)
        self.erase_points(coords)

    def erase_points(self, coords):
        """Undefine the elements at ``coords`` (RFC H5Derase)."""
        coords = np.asarray(coords, np.int64).reshape(-1, len(self.chunks))
        if not len(coords):
            return
        for scaled, lin, _ in self._split(coords, np.zeros(len(coords), np.int8)):
            old = self.mem.get(scaled)
            if old is None:
                continue
            keep = ~np.isin(old[0], lin)
            if not keep.all():
                self.mem[scaled] = (old[0][keep], old[1][keep])
                self.dirty.add(scaled)
        self.writer.touch()

    def resize(self, old, new):
        """A new extent: elements outside it are dropped."""
        chunk = np.asarray(self.chunks, np.int64)
        newa = np.asarray(new, np.int64)
        for scaled in list(self.mem):
            lin, vals = self.mem[scaled]
            if not len(lin):
                continue
            g = np.stack(np.unravel_index(lin, self.chunks), axis=1) + np.asarray(scaled) * chunk
            keep = np.all(g < newa, axis=1)
            if not keep.all():
                self.mem[scaled] = (lin[keep], vals[keep])
                self.dirty.add(scaled)

    # --- raw structured chunks (RFC H5Dwrite_struct_chunk) --------------------------------
    def write_raw(self, scaled, sections, filter_masks=None, unfiltered_sizes=None):
        """Store a chunk from its (possibly filtered) sections, as given; section 0 of an
        unfiltered-by-mask section must carry its checksum."""
        scaled = tuple(int(s) for s in scaled)
        pipelines = self.pipelines()
        n = NSECTIONS
        masks = tuple(filter_masks) if filter_masks is not None else (0,) * n
        parts = [bytes(s) for s in sections]
        if len(parts) != n:
            raise ValueError(f"a sparse chunk has {n} sections, not {len(parts)}")
        raw = b"".join(parts)
        offsets, pos = [], 0
        for p in parts[:-1]:
            pos += len(p)
            offsets.append(pos)
        secs = SC.disassemble(raw, offsets, METADATA_SECTIONS, unfiltered_sizes, masks,
                              pipelines, self.dtype.itemsize)
        if unfiltered_sizes is None:
            unfiltered_sizes = tuple(len(s) + (4 if i in METADATA_SECTIONS and len(s) else 0)
                                     for i, s in enumerate(secs))
        lin = chunkcodec.decode_section0(secs[0], self.chunks)[1] if len(secs[0]) else \
            np.arange(int(np.prod(self.chunks)), dtype=np.int64)
        vals = np.frombuffer(secs[1], self.dtype)
        if len(vals) != len(lin):
            raise ValueError(f"{len(vals)} values for {len(lin)} defined elements")
        u, idx = np.unique(lin[::-1], return_index=True)
        self.mem[scaled] = (u, vals[::-1][idx].copy())
        addr = self.writer.alloc_raw(len(raw))
        self.writer.sink.write(self.writer.absolute(addr), raw)
        filtered = bool(pipelines)
        self.records[scaled] = (addr, len(raw), tuple(offsets),
                                tuple(unfiltered_sizes) if filtered else None,
                                masks if filtered else None)
        self.dirty.discard(scaled)
        self.writer.touch()

    # --- flushing -----------------------------------------------------------------------
    def pipelines(self):
        return {k: tuple(v) for k, v in (self.node.section_filters or {}).items() if v}

    def encode_chunk(self, lin, vals):
        """(chunk bytes, offsets, unfiltered sizes, masks) of one chunk's defined elements."""
        sec0 = chunkcodec.encode_section0(lin, self.chunks)
        sec1 = np.ascontiguousarray(vals, self.dtype).tobytes()
        return SC.assemble([sec0, sec1], METADATA_SECTIONS, self.pipelines(),
                           self.dtype.itemsize)

    def flush_dirty(self):
        if not self.dirty:
            return
        filtered = bool(self.pipelines())
        for scaled in sorted(self.dirty):
            lin, vals = self.mem.get(scaled, (np.zeros(0, np.int64), None))
            if not len(lin):
                self.records.pop(scaled, None)
                self.mem.pop(scaled, None)
                continue
            raw, offs, unf, masks = self.encode_chunk(lin, vals)
            addr = self.writer.alloc_raw(len(raw))
            self.writer.sink.write(self.writer.absolute(addr), raw)
            self.records[scaled] = (addr, len(raw), offs, unf if filtered else None,
                                    masks if filtered else None)
        self.dirty.clear()
