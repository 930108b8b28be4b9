"""``purehep check FILE... [--json]``: verify each file against the specification; one line
per file, a summary when there are several, and the worst status as the exit status (0 clean,
1 findings, 2 unreadable). Files are checked in one process, so a corpus is checked much faster
than by one call per file."""
import json

from .common import load_map

CLEAN, FINDINGS, UNREADABLE = 0, 1, 2
STATUS = {CLEAN: "clean", FINDINGS: "findings", UNREADABLE: "unreadable"}


def register(sub):
    p = sub.add_parser("check", help="verify files against the specification")
    p.add_argument("file", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON document for all files")
    p.set_defaults(run=run)


def check_one(path):
    """(status, findings, notes, error message) of one file."""
    from ..errors import PurehepError
    from ..inspect.check import check_map
    try:
        _src, fmap = load_map(path, f"check {path}")
        findings = check_map(fmap, fmap.read)
    except (PurehepError, OSError, ValueError) as exc:
        return UNREADABLE, [], [], str(exc)
    except (RecursionError, MemoryError, KeyError, IndexError, TypeError) as exc:
        # a defect of purehep, not of the file; reported, and the other files still checked
        return UNREADABLE, [], [], f"internal error {type(exc).__name__}: {exc}"
    return (FINDINGS if findings else CLEAN), findings, fmap.notes, None


def _plural(n, word):
    return f"{n} {word}{'s' if n != 1 else ''}"


def run(args, out):
    results = []
    for path in args.file:
        status, findings, notes, error = check_one(path)
        results.append((path, status, findings, notes, error))
        if args.json:
            continue
        for f in findings:
            out(str(f))
        for n in notes:
            out(f"note: {n}")
        if error is not None:
            out(f"{path}: unreadable: {error}")
        else:
            out(f"{path}: {_plural(len(findings), 'finding')}")
    counts = {s: sum(r[1] == s for r in results) for s in STATUS}
    worst = max(r[1] for r in results)
    if args.json:
        out(json.dumps({"files": [
            {"file": p, "status": STATUS[s], "findings": [f.to_json() for f in fs],
             "notes": ns, "error": e} for p, s, fs, ns, e in results],
            "summary": {STATUS[s]: n for s, n in counts.items()} | {"files": len(results)}},
            indent=1))
    elif len(results) > 1:
        out(f"{_plural(len(results), 'file')}: {counts[CLEAN]} clean, {counts[FINDINGS]} with "
            f"findings, {counts[UNREADABLE]} unreadable")
    return worst
