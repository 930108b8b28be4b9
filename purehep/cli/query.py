"""``purehep query FILE/PATH "QUERY" [--limit N] [--json]``: the rows of a HEP001 table, a 2005
index table or any 1-D compound dataset that match a query string."""
import json

import numpy as np

from .common import open_file, split_target


def register(sub):
    p = sub.add_parser("query", help="rows of a HEP001 table, index table or compound "
                       "dataset matching a query string")
    p.add_argument("target", metavar="FILE/PATH")
    p.add_argument("expr", metavar="QUERY", help='e.g. "(A>3 AND A<7) AND B=10"')
    p.add_argument("--limit", type=int, default=20, help="rows to show (default 20)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def matching(obj, expr):
    """(row numbers, {field: values at those rows}) of a HEP001 table group, a 2005 index
    table or any compound dataset, for a parsed query."""
    from .. import Dataset
    from ..index import is_index, open_index
    from ..query import evaluate
    from ..table import is_table, open_table
    if is_table(obj):
        table = open_table(obj)
        rows = table.where(expr)
        return rows, table.read(None, rows)
    if not isinstance(obj, Dataset) or obj.dtype.names is None or obj.ndim != 1:
        raise ValueError(f"{obj.name} is not a HEP001 table, an index table or a 1-D "
                         "compound dataset")
    if is_index(obj):
        index = open_index(obj)
        rows = index.query(expr)
        records = index.records[rows]
        return rows, {n: records[n] for n in records.dtype.names if n != index.target_field}
    records = obj[()]
    rows = np.flatnonzero(evaluate(expr, {n: records[n] for n in records.dtype.names}))
    return rows, {n: records[n][rows] for n in records.dtype.names}


def _plain(x):
    if isinstance(x, bytes):
        return x.decode("utf-8", "surrogateescape")
    return x


def _text(x):
    x = _plain(x.item() if isinstance(x, np.generic) else x)
    return json.dumps(x, ensure_ascii=False) if isinstance(x, str) else str(x)


def run(args, out):
    from ..query import parse
    if args.limit < 0:
        raise ValueError("--limit must be 0 or more")
    path, name = split_target(args.target)
    expr = parse(args.expr)
    with open_file(path) as f:
        rows, columns = matching(f[name], expr)
    shown = rows[:args.limit]
    if args.json:
        out(json.dumps({"query": str(expr), "total": len(rows), "limit": args.limit,
                        "rows": shown.tolist(),
                        "columns": {k: [_plain(x) for x in np.asarray(v[:args.limit]).tolist()]
                                    for k, v in columns.items()}},
                       default=str, ensure_ascii=False))
        return 0
    names = list(columns)
    out(f"{len(rows)} {'row matches' if len(rows) == 1 else 'rows match'} {str(expr)!r}")
    for i, row in enumerate(shown):
        out(f"  {int(row)}: " + ", ".join(f"{k}={_text(columns[k][i])}" for k in names))
    if len(rows) > args.limit:
        out(f"  ... ({len(rows) - args.limit} more; --limit N)")
    return 0
