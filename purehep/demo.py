"""`make demo`: open the embedded sample with purehep alone and print what it holds."""
import os
import sys

import numpy as np

import purehep

SAMPLE = os.path.join(os.path.dirname(__file__), "samples", "sample.h5")


def describe(name, obj, out):
    depth = name.count("/")
    pad = "  " * depth
    leaf = name.rsplit("/", 1)[-1]
    if isinstance(obj, purehep.Dataset):
        layout = f"chunks {obj.chunks}" if obj.chunks else "contiguous"
        if obj.compression:
            layout += f", {obj.compression}({obj.compression_opts})"
        out.write(f"{pad}{leaf}: dataset {obj.shape} {obj.dtype} [{layout}]\n")
        with np.printoptions(precision=3, threshold=6, edgeitems=2):
            values = obj[()] if obj.ndim < 2 else obj[:2, :3]
            out.write(f"{pad}  values: {values!r}\n".replace("\n ", f"\n{pad} "))
    else:
        out.write(f"{pad}{leaf}/\n")
    for key, value in obj.attrs.items():
        out.write(f"{pad}  @{key} = {value!r}\n")


def main(path=SAMPLE, out=sys.stdout):
    with purehep.File(path) as f:
        out.write(f"{path}: HDF5 superblock v{f.superblock_version}, {len(f)} root members\n")
        for key, value in f.attrs.items():
            out.write(f"@{key} = {value!r}\n")
        f.visititems(lambda name, obj: describe(name, obj, out))
        link = f.get("latest", getlink=True)
        out.write(f"latest -> {link.path} ({len(f['latest'])} members)\n")


if __name__ == "__main__":
    main(*sys.argv[1:2])
