"""Batched checksum verification of v2 B-tree chunk index nodes (chunks/btree2.py): while
lookup3 runs as plain Python, a node's siblings of the same size (as many records) are
verified with it once reading them one at a time has cost what a batch would; the
siblings' bytes wait until asked for. A damaged sibling read along fails only when a chunk
it indexes is read, naming the node and its offset, as libhdf5 fails only when it loads
that node. Here the cost model is patched so that every miss loads its whole group."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.chunks import btree2 as chunks_btree2
from purehep.chunks.btree2 import _siblings, _tree
from purehep.format import checksum


@pytest.fixture
def batching(monkeypatch):
    """lookup3 as if plain Python, and a batch always cheaper than one more node."""
    monkeypatch.setattr(chunks_btree2, "lookup3_is_compiled", lambda: False)
    monkeypatch.setattr(checksum, "lookup3_is_compiled", lambda: False)
    monkeypatch.setattr(checksum, "batch_seconds", lambda m, n: 1.0 if m == 1 else 0.5)


@pytest.fixture(scope="module")
def tree_file(tmp_path_factory):
    """A 2-D dataset indexed by a v2 B-tree of depth 2 (leaves full but the last)."""
    p = tmp_path_factory.mktemp("bt2") / "f.h5"
    values = np.arange(60000 * 2, dtype="<i4").reshape(60000, 2)
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=values, chunks=(2, 1), maxshape=(None, None))
    return p, values


def _leaves(p):
    """[(absolute address, records)] of the leaves under the root's first child."""
    with purehep.File(p) as f:
        st = f["x"]._storage.chunked
        tree = _tree(st.ctx, st.layout)
        assert tree.depth == 2
        _, root_children, _ = tree._read_node(tree.root_address, tree.root_nrecords, 2)
        a, n, _ = root_children[0]
        _, children, _ = tree._read_node(a, n, 1)
        return [(st.ctx.absolute(children[j][0]), children[j][1])
                for j in range(len(children))], tree.record_size


def test_reads_through_batches_equal_h5py(tree_file, batching):
    p, values = tree_file
    rng = np.random.default_rng(2)
    with purehep.File(p) as f:
        ds = f["x"]
        for i in rng.integers(0, values.shape[0], 400).tolist():
            assert ds[i, 1] == values[i, 1]
        assert (ds[100:140, :] == values[100:140]).all()


def test_damaged_sibling_fails_only_when_asked_for(tree_file, batching):
    p, values = tree_file
    leaves, rs = _leaves(p)
    assert len({n for _, n in leaves}) == 1 and len(leaves) > 3
    (first, n), (bad, _) = leaves[0], leaves[2]
    data = bytearray(p.read_bytes())
    data[bad + 6 + rs] ^= 0xFF          # a record byte of the third leaf
    # the rows a leaf holds: each record is a (2, 1) chunk, two per row of chunks
    rows_per_leaf = n                   # n chunks of 2 rows over 2 columns: n rows
    with purehep.File(bytes(data)) as f:
        ds = f["x"]
        assert ds[0, 0] == values[0, 0]     # the first leaf: its batch reads the third too
        lo = 2 * rows_per_leaf + 4          # inside the third leaf's range, not a separator
        with pytest.raises(purehep.ChecksumError) as e:
            ds[lo, 0]
        assert (e.value.structure, e.value.offset) == ("v2 B-tree leaf node", bad)
        far = 5 * rows_per_leaf + 3
        assert ds[far, 1] == values[far, 1]


def test_siblings_skips_pointers_that_fail(tree_file):
    p, _ = tree_file

    class Pointers:
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, j):
            if self.items[j] is None:
                raise purehep.FormatError("bad pointer", "v2 B-tree internal node", 0)
            return self.items[j]

    assert _siblings(Pointers([(10, 5, 5), None, (30, 4, 4), (40, 5, 5)]), 5) == [10, 40]
