"""``purehep inspect FILE [--at OFFSET] [--json]``: every structure of the file with its offset,
size, version, spec section and decoded fields, and the bytes no structure claims."""
import json

from .common import load_map


def register(sub):
    p = sub.add_parser("inspect", help="every structure with offset, size and fields")
    p.add_argument("file")
    p.add_argument("--at", type=lambda s: int(s, 0), metavar="OFFSET",
                   help="explain the structure covering one offset")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def _field_text(fields, limit=8):
    parts = []
    for k, v in list(fields.items())[:limit]:
        if v is None:
            v = "undef"
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        if len(text) > 40:
            text = text[:37] + "..."
        parts.append(f"{k}={text}")
    return " ".join(parts)


def _structure_line(s, depth):
    ver = f" v{s.version}" if s.version is not None else ""
    sec = f" [{s.section}]" if s.section else ""
    owner = f" ({s.owner})" if s.owner and depth == 0 else ""
    fields = _field_text(s.fields)
    return f"{'  ' * depth}{s.offset:>10} {s.size:>9}  {s.name}{ver}{sec}{owner}" + \
        (f"  {fields}" if fields else "")


def _gap_at(acc, offset):
    return next((g for g in acc["gaps"] if g["offset"] <= offset < g["offset"] + g["size"]),
                None)


def _at(args, out, fmap, acc):
    if not 0 <= args.at < fmap.size:
        raise ValueError(f"offset {args.at} lies outside the file ({fmap.size} bytes)")
    chain = fmap.at(args.at)
    if args.json:
        out(json.dumps({"offset": args.at, "structures": [
            {k: v for k, v in s.to_json().items() if k != "children"} for s in chain],
            "gap": _gap_at(acc, args.at)}, indent=1))
        return 0
    if not chain:
        gap = _gap_at(acc, args.at)
        if gap:
            out(f"offset {args.at} is unclaimed: {gap['size']} bytes at {gap['offset']} "
                f"belong to no structure ({gap['class']})")
        else:
            out(f"offset {args.at} belongs to no structure")
        return 0
    for depth, s in enumerate(chain):
        out(_structure_line(s, depth) + f"  (+{args.at - s.offset})")
    for k, v in chain[-1].fields.items():
        out(f"{'  ' * len(chain)}{k}: {v}")
    return 0


def run(args, out):
    from ..inspect.account import account, classify_gaps
    src, fmap = load_map(args.file, "inspect")
    acc = classify_gaps(fmap, account(fmap))
    if args.at is not None:
        return _at(args, out, fmap, acc)
    if args.json:
        doc = {"file": args.file, "size": fmap.size,
               "superblock_version": fmap.superblock.version,
               "structures": [s.to_json() for s in fmap.structures],
               "account": acc, "findings": [f.to_json() for f in fmap.findings],
               "notes": fmap.notes}
        out(json.dumps(doc, indent=1, default=str))
        return 0
    out(f"{args.file}: {fmap.size} bytes, superblock version {fmap.superblock.version}")
    out(f"{'offset':>10} {'size':>9}  structure")
    gaps = {g["offset"]: g for g in acc["gaps"]}
    items = [(s.offset, 0, s) for s in fmap.structures] + [(o, 1, g) for o, g in gaps.items()]
    for _o, kind, item in sorted(items, key=lambda t: (t[0], t[1])):
        if kind:
            out(f"{item['offset']:>10} {item['size']:>9}  (unclaimed: {item['class']})")
            continue
        for depth, s in item.walk():
            out(_structure_line(s, depth))
    out(f"account: metadata {acc['metadata']} + raw data {acc['raw']} + free {acc['free']} + "
        f"user block {acc['userblock']} + unclaimed {acc['unclaimed']} = {fmap.size} bytes")
    out(f"  unclaimed: {acc['unclaimed_zero_filled']} zero-filled (freed or aggregator slack, "
        f"not tracked in the file), {acc['unclaimed_stale_structures']} stale structures, "
        f"{acc['unclaimed_other']} other")
    out(f"  unused inside structures (NIL messages, header gaps, node and heap capacity, free "
        f"lists): {acc['unused_in_structures']}")
    if acc["overlapping"]:
        out(f"  overlapping: {acc['overlapping']} bytes claimed more than once")
    for f in fmap.findings:
        out(f"  finding: {f}")
    for n in fmap.notes:
        out(f"  note: {n}")
    return 0
