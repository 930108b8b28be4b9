"""``purehep repack SRC DST``: rewrite a file compactly (its free space dropped)."""
import os


def register(sub):
    p = sub.add_parser("repack", help="rewrite a file compactly (drops free space)")
    p.add_argument("file", metavar="SRC")
    p.add_argument("dst", metavar="DST")
    p.set_defaults(run=run)


def run(args, out):
    from ..hl.repack import repack
    before = os.path.getsize(args.file)
    repack(args.file, args.dst)
    out(f"{args.file} ({before} bytes) -> {args.dst} ({os.path.getsize(args.dst)} bytes)")
    return 0
