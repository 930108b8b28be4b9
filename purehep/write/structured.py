"""Writing sparse datasets (layout class 4, structured chunks): the defined elements of every
chunk kept in memory while a file is written (row-major indices within the chunk, sorted and
unique, and their values); chunks changed since the last flush are encoded as structured
chunks (section 0 = encoded selection + checksum, section 1 = values; sections filtered by
their pipelines) and appended to the raw data area before the metadata is emitted; then their
chunk index (sparse RFC section 4) and object header messages.

Index versions written, as the prototype writes them: fixed array header and data block 1,
extensible array 0, v2 B-tree header 1 (nodes 0).
"""
import math

import numpy as np

from .. import selections as _sel
from ..errors import FormatError
from ..format import (btree2, extensible_array, fixed_array, sparse_sections,
                      structured_chunk as SC)
from ..format.messages import fill_value as m_fill, layout as L, struct_pipeline
from ..chunks.structured_index import CLIENT_STRUCT, CLIENT_STRUCT_FILTERED, size_len
from . import values as V
from .chunk_index import put_blocks
from .policy import BT2_PARAMS, EA_PARAMS, FA_PAGE_BITS
from .storage import _bare

FA_VERSION, EA_VERSION, BT2_VERSION = 1, 0, 1
INDEX_NAMES = {"single": L.SINGLE, "fixed_array": L.FIXED_ARRAY,
               "extensible_array": L.EXTENSIBLE_ARRAY, "btree2": L.BTREE2}
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

    def raw_blocks(self):
        """The raw-data blocks this store holds: (address, size)."""
        return [(r[0], r[1]) for r in self.records.values()]

    def _drop_record(self, scaled):
        """Forget chunk ``scaled``'s record; a block written since the last commit is free
        once this stage is written (the committed ones: when the commit no longer refers to
        them, purehep.write.update)."""
        rec = self.records.pop(scaled, None)
        if rec is not None and self.writer.alloc.fresh.get(rec[0]) == rec[1]:
            self.writer.release(rec[0], rec[1], self.node)

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
        lin = sparse_sections.decode_section0(secs[0], self.chunks)[1] if len(secs[0]) else \
            np.arange(int(np.prod(self.chunks)), dtype=np.int64)
        vals = np.frombuffer(secs[1], self.dtype)
        if len(vals) != len(lin):
            raise ValueError(f"{len(vals)} values for {len(lin)} defined elements")
        u, idx = np.unique(lin[::-1], return_index=True)
        self.mem[scaled] = (u, vals[::-1][idx].copy())
        self._drop_record(scaled)
        addr = self.writer.alloc_raw(len(raw))
        self.writer.sink.write_raw(self.writer.absolute(addr), raw)
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
        sec0 = sparse_sections.encode_section0(lin, self.chunks)
        sec1 = np.ascontiguousarray(vals, self.dtype).tobytes()
        return SC.assemble([sec0, sec1], METADATA_SECTIONS, self.pipelines(),
                           self.dtype.itemsize)

    def flush_dirty(self):
        if not self.dirty:
            return
        filtered = bool(self.pipelines())
        for scaled in sorted(self.dirty):
            lin, vals = self.mem.get(scaled, (np.zeros(0, np.int64), None))
            self._drop_record(scaled)
            if not len(lin):
                self.mem.pop(scaled, None)
                continue
            raw, offs, unf, masks = self.encode_chunk(lin, vals)
            addr = self.writer.alloc_raw(len(raw))
            self.writer.sink.write_raw(self.writer.absolute(addr), raw)
            self.records[scaled] = (addr, len(raw), offs, unf if filtered else None,
                                    masks if filtered else None)
        self.dirty.clear()


def choose_index(shape, maxshape, chunks, requested=None):
    """(index type, info): as libhdf5 picks for chunked datasets, without implicit indexes
    (RFC section 4), or the requested one when it fits. Each index is accepted only for the
    extents the format assigns it: single chunk when the one chunk is the fixed extent, fixed
    array without unlimited dimensions, extensible array with exactly one (spec III.H), v2
    B-tree with more than one ("B-tree types 12/13 ... datasets with more than one dimension
    of unlimited extent", sparse RFC 4.4, as types 10/11 in the base spec)."""
    unlimited = sum(1 for m in maxshape if m is None)
    params = {L.FIXED_ARRAY: {"page_bits": FA_PAGE_BITS}, L.EXTENSIBLE_ARRAY: dict(EA_PARAMS),
              L.BTREE2: dict(BT2_PARAMS), L.SINGLE: {}}
    if requested is not None:
        kind = INDEX_NAMES.get(requested, requested)
        if kind in (L.BTREE1, L.IMPLICIT, "btree1", "implicit"):
            raise ValueError("structured chunks cannot use a v1 B-tree or implicit chunk index "
                             "(sparse RFC section 4)")
        if kind not in params:
            raise ValueError(f"unknown chunk index {requested!r}; use one of "
                             f"{sorted(INDEX_NAMES)}")
        ok = {L.SINGLE: tuple(shape) == tuple(chunks) and tuple(maxshape) == tuple(shape),
              L.FIXED_ARRAY: unlimited == 0, L.EXTENSIBLE_ARRAY: unlimited == 1,
              L.BTREE2: unlimited > 1}[kind]
        if not ok:
            why = {L.FIXED_ARRAY: "it is for datasets without unlimited dimensions",
                   L.EXTENSIBLE_ARRAY: "it is for datasets with one unlimited dimension",
                   L.BTREE2: "the format reserves it for datasets with more than one "
                             "unlimited dimension (sparse RFC 4.4)",
                   L.SINGLE: "it is for a fixed extent stored in one chunk"}[kind]
            raise ValueError(f"a {L.INDEX_NAMES[kind]} index does not fit shape {shape}, "
                             f"maxshape {maxshape} and chunks {chunks}: {why}")
        return kind, params[kind]
    if unlimited == 1:
        return L.EXTENSIBLE_ARRAY, params[L.EXTENSIBLE_ARRAY]
    if unlimited > 1:
        return L.BTREE2, params[L.BTREE2]
    if tuple(shape) == tuple(chunks) and tuple(maxshape) == tuple(shape):
        return L.SINGLE, {}
    return L.FIXED_ARRAY, params[L.FIXED_ARRAY]


# --- the chunk index -----------------------------------------------------------------------------

def encode_element(ctx, rec, width, nsections, filtered):
    """One array element: address, chunk size, metadata; ``rec`` None = unallocated."""
    n = nsections
    if rec is None:
        return ctx.pack_address(None) + bytes(width + SC.metadata_size(n, filtered))
    addr, size, offs, unf, masks = rec
    return (ctx.pack_address(addr) + int(size).to_bytes(width, "little")
            + SC.encode_metadata(offs, unf if filtered else None, masks if filtered else None))


def emit_index(em, layout, shape, maxshape, records, filtered):
    """Write the index of ``records`` ({scaled: (addr, size, offsets, unfiltered, masks)});
    returns (index address, index info for the layout message)."""
    ctx = em.ctx
    chunks = tuple(layout.chunk_shape)
    rank = len(chunks)
    n = layout.nsections
    width = size_len(layout)
    info = dict(layout.index_info)
    items = sorted(records.items())
    if layout.index_type == L.SINGLE:
        if not items:
            return None, {"chunk_size": 0, "offsets": (0,) * (n - 1),
                          **({"unfiltered_sizes": (0,) * n, "filter_masks": (0,) * n}
                             if filtered else {})}
        addr, size, offs, unf, masks = items[0][1]
        info = {"chunk_size": size, "offsets": offs}
        if filtered:
            info.update(unfiltered_sizes=unf, filter_masks=masks)
        return addr, info
    if not items:
        return None, info
    es = ctx.sizeof_offsets + width + SC.metadata_size(n, filtered)
    client = CLIENT_STRUCT_FILTERED if filtered else CLIENT_STRUCT
    if layout.index_type == L.FIXED_ARRAY:
        grid = [-(-int(m) // c) for m, c in zip(maxshape, chunks)]
        total = math.prod(grid)
        by = {int(np.ravel_multi_index(s, grid)): r for s, r in items}
        elements = [encode_element(ctx, by.get(i), width, n, filtered) for i in range(total)]
        addr, blocks = fixed_array.encode(ctx, elements, es, client, info["page_bits"],
                                          em.meta.alloc, version=FA_VERSION)
        put_blocks(em, blocks)
        return addr, info
    if layout.index_type == L.EXTENSIBLE_ARRAY:
        udim = [d for d, m in enumerate(maxshape) if m is None][0]
        others = [d for d in range(rank) if d != udim]
        ogrid = [-(-int(maxshape[d]) // chunks[d]) for d in others]
        per = math.prod(ogrid) if others else 1
        by = {}
        for s, r in items:
            rest = int(np.ravel_multi_index([s[d] for d in others], ogrid)) if others else 0
            by[s[udim] * per + rest] = r
        addr, blocks = extensible_array.encode(
            ctx, by, lambda r: encode_element(ctx, r, width, n, filtered), es, client,
            em.meta.alloc, version=EA_VERSION, **{k: info[k] for k in extensible_array.PARAMETERS})
        put_blocks(em, blocks)
        return addr, info
    if layout.index_type == L.BTREE2:
        btype = 13 if filtered else 12
        rctx = btree2.ChunkRecordContext(rank, width, n)
        recs = [btree2.encode_record(btype, btree2.StructuredChunk(
            r[0], r[1], tuple(s), r[2], r[3] if filtered else None, r[4] if filtered else None),
            ctx, rctx) for s, r in items]
        addr, blocks = btree2.encode_tree(ctx, btype, recs, len(recs[0]), em.meta.alloc,
                                          node_size=info["node_size"],
                                          split_percent=info["split_percent"],
                                          merge_percent=info["merge_percent"],
                                          version=BT2_VERSION)
        put_blocks(em, blocks)
        return addr, info
    raise FormatError(f"chunk index type {layout.index_type} cannot index structured chunks")


# --- object header messages ----------------------------------------------------------------------

def layout_of(node, esize, address=None, info=None):
    index, default_info = node.index
    filtered = bool(node.section_filters)
    flags = L.SINGLE_INDEX_WITH_FILTER if (index == L.SINGLE and filtered) else 0
    return L.Layout(5, L.STRUCTURED, address=address, chunk_shape=tuple(node.chunks),
                    element_size=esize, flags=flags, index_type=index,
                    index_info=dict(default_info if info is None else info),
                    struct_type=L.STRUCT_SPARSE, offset_size=L.STRUCT_OFFSET_SIZE,
                    nsections=2, metadata_sections=(0,))


def messages(em, p, R):
    """Dataspace, datatype, fill value, per-section filter pipeline (version 3) and data
    layout (version 5, class 4) messages of a sparse dataset node."""
    from .emit import DATASPACE, FILL, FILTERS, LAYOUT
    node = p.node
    pol = em.policy
    msgs = [(DATASPACE, 0, em._space_body(node.shape, node.maxshape)),
            em.type_message(node, R)]
    fill = m_fill.FillValue(pol.fill_version, node.fill, m_fill.ALLOC_INCREMENTAL,
                            m_fill.FILL_IF_SET, True)
    msgs.append((FILL, 0x01, m_fill.encode(fill)))
    if node.section_filters:
        pipe = struct_pipeline.StructuredFilterPipeline(
            3, tuple(sorted(node.section_filters.items())))
        msgs.append((FILTERS, 0x01, struct_pipeline.encode(pipe)))
    esize = V.stored_dtype(node.dtype, em.ctx.sizeof_offsets).itemsize
    layout = layout_of(node, esize, p.side.get("index_address"), p.side.get("index_info"))
    msgs.append((LAYOUT, 0, L.encode(layout, em.ctx)))
    return msgs


def side_structures(em, p):
    """The chunk index of a sparse dataset node (its chunks are already in the file)."""
    node = p.node
    esize = V.stored_dtype(node.dtype, em.ctx.sizeof_offsets).itemsize
    layout = layout_of(node, esize)
    addr, info = emit_index(em, layout, node.shape, node.maxshape, node.store.records,
                         bool(node.section_filters))
    p.side["index_address"] = addr
    p.side["index_info"] = info
