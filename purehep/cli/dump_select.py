"""``purehep dump -d PATH -s START -S STRIDE -c COUNT -k BLOCK`` (or ``-d "PATH[s;S;c;k]"``):
a hyperslab of a dataset, shown with the coordinates of each line's first element in the whole
dataset, as h5dump shows it; and the raw values of ``-b`` for ``-o FILE``."""
import numpy as np

_FIELDS = ("start", "stride", "count", "block")


def _ints(text):
    return [int(x) for x in text.replace(",", " ").split()] if text else None


class Subset:
    def __init__(self, start, stride, count, block):
        self.start, self.stride, self.count, self.block = start, stride, count, block

    @classmethod
    def parse(cls, args):
        lists = [_ints(getattr(args, name)) for name in _FIELDS]
        return cls(*lists)

    @classmethod
    def split_path(cls, path):
        """``("PATH", Subset)`` of ``PATH[start;stride;count;block]``, else ``(path, None)``."""
        if not path.endswith("]") or "[" not in path:
            return path, None
        head, _, spec = path[:-1].rpartition("[")
        parts = (spec.split(";") + ["", "", "", ""])[:4]
        return head, cls(*[_ints(p) for p in parts])

    def check(self, shape):
        """Fill in the defaults (start 0, stride, count and block 1) and check the selection
        lies in ``shape``."""
        rank = len(shape or ())
        if rank == 0:
            raise ValueError("a hyperslab needs a dataset of rank 1 or more")
        for name, default in zip(_FIELDS, (0, 1, 1, 1)):
            value = getattr(self, name)
            if value is None:
                value = [default] * rank
            if len(value) != rank:
                raise ValueError(f"{name} has {len(value)} values for a rank {rank} dataset")
            if name != "start" and min(value) < 1:
                raise ValueError(f"{name} values must be positive")
            setattr(self, name, value)
        for d in range(rank):
            last = self.start[d] + (self.count[d] - 1) * self.stride[d] + self.block[d]
            if self.start[d] < 0 or last > shape[d]:
                raise ValueError(f"the hyperslab ends at {last} in dimension {d} of extent "
                                 f"{shape[d]}")
        self.indices = [np.add.outer(s + np.arange(c) * st, np.arange(b)).reshape(-1)
                        for s, st, c, b in zip(self.start, self.stride, self.count, self.block)]
        self.shape = tuple(len(i) for i in self.indices)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.row = self.shape[-1]

    def header(self):
        return [f"{name.upper()} ( {', '.join(map(str, getattr(self, name)))} );"
                for name in _FIELDS]

    def position(self, k):
        at = np.unravel_index(k, self.shape)
        return tuple(int(self.indices[d][i]) for d, i in enumerate(at))

    def values(self, ds):
        box = tuple(slice(int(i[0]), int(i[-1]) + 1) for i in self.indices)
        data = ds[box]
        return data[np.ix_(*[i - i[0] for i in self.indices])]

    def blocks(self, ds, _elements):
        yield self.values(ds)


def binary_blocks(ds, subset, order, elements):
    """The raw bytes of the (selected) data: NATIVE/MEMORY in this machine's order, FILE in
    the file's, LE or BE as named."""
    values = subset.values(ds) if subset is not None else ds[()]
    values = np.ascontiguousarray(values)
    if values.dtype.hasobject:
        raise ValueError("binary output of variable-length or reference data is not defined")
    if order in ("LE", "BE") or (order == "FILE" and ds._type.order in "<>"):
        target = {"LE": "<", "BE": ">"}.get(order, ds._type.order)
        values = values.astype(values.dtype.newbyteorder(target)
                               if values.dtype.names is None else values.dtype)
    flat = values.reshape(-1)
    for start in range(0, flat.size, elements):
        yield flat[start:start + elements].tobytes()
