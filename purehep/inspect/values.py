"""JSON forms of dtypes and values that round-trip (``purehep dump --json``).

A value is ``{"dtype": spec, "shape": [...] | null, "data": nested lists}``. Specs: numpy's
type string for atomic types (``"<f8"``, ``"|S4"``), ``{"vlen": "str" | "bytes" | spec}``,
``{"enum": base, "values": {...}}``, ``{"fields": [[name, spec, offset], ...], "itemsize": n}``,
``{"subarray": spec, "shape": [...]}`` and ``{"ref": "object" | "region"}``. Floats that JSON
cannot hold are the strings "nan", "inf" and "-inf"; bytes are base64; complex numbers are
[real, imag]; references are the object header address (null for a null reference).
"""
import base64

import numpy as np


def dtype_spec(dt):
    meta = dt.metadata or {}
    if "vlen" in meta:
        v = meta["vlen"]
        if v is str:
            return {"vlen": "str"}
        if v is bytes:
            return {"vlen": "bytes"}
        return {"vlen": dtype_spec(np.dtype(v))}
    if "enum" in meta:
        return {"enum": dt.str, "values": {k: int(x) for k, x in meta["enum"].items()}}
    if "ref" in meta:
        name = getattr(meta["ref"], "__name__", str(meta["ref"])).lower()
        return {"ref": "region" if "region" in name else "object"}
    if dt.names:
        return {"fields": [[n, dtype_spec(dt.fields[n][0]), dt.fields[n][1]] for n in dt.names],
                "itemsize": dt.itemsize}
    if dt.subdtype is not None:
        return {"subarray": dtype_spec(dt.subdtype[0]), "shape": list(dt.subdtype[1])}
    return dt.str


def spec_dtype(spec):
    if isinstance(spec, str):
        return np.dtype(spec)
    if "vlen" in spec:
        return np.dtype(object)
    if "enum" in spec:
        return np.dtype(spec["enum"])
    if "ref" in spec:
        return np.dtype(object)
    if "fields" in spec:
        return np.dtype({"names": [f[0] for f in spec["fields"]],
                         "formats": [spec_dtype(f[1]) for f in spec["fields"]],
                         "offsets": [f[2] for f in spec["fields"]], "itemsize": spec["itemsize"]})
    if "subarray" in spec:
        return np.dtype((spec_dtype(spec["subarray"]), tuple(spec["shape"])))
    raise ValueError(f"unknown dtype spec {spec!r}")


def _float(x):
    x = float(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def _enc(x, spec):
    if isinstance(spec, dict):
        if "vlen" in spec:
            v = spec["vlen"]
            if v == "str":
                return x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else str(x)
            if v == "bytes":
                return base64.b64encode(x if isinstance(x, bytes) else str(x).encode()).decode()
            return [_enc(e, v) for e in np.asarray(x).reshape(-1)]
        if "enum" in spec:
            return int(x)
        if "ref" in spec:
            addr = getattr(x, "address", None)
            return None if not x else addr
        if "fields" in spec:
            return [_enc(x[f[0]], f[1]) for f in spec["fields"]]
        if "subarray" in spec:
            return _nested(np.asarray(x), spec["subarray"])
    kind = np.dtype(spec).kind
    if kind in "SV":
        return base64.b64encode(bytes(x)).decode()
    if kind == "U":
        return str(x)
    if kind == "c":
        return [_float(x.real), _float(x.imag)]
    if kind == "f":
        return _float(x)
    if kind == "b":
        return bool(x)
    if kind in "iu":
        return int(x)
    return str(x)


def _nested(arr, spec):
    if arr.ndim == 0:
        return _enc(arr[()], spec)
    return [_nested(a, spec) for a in arr] if arr.ndim > 1 else [_enc(a, spec) for a in arr]


def encode(value, dtype):
    """The JSON form of a value (numpy array/scalar, str, or an Empty) of ``dtype``."""
    spec = dtype_spec(dtype)
    if getattr(value, "__class__", None).__name__ == "Empty":
        return {"dtype": spec, "shape": None, "data": None}
    if isinstance(value, (str, bytes)) and isinstance(spec, dict) and "vlen" in spec:
        return {"dtype": spec, "shape": [], "data": _enc(value, spec)}
    arr = np.asarray(value, dtype=dtype if not isinstance(spec, dict) or "fields" in spec
                     or "enum" in spec or "subarray" in spec else object)
    if arr.dtype.subdtype is not None and arr.shape[-len(arr.dtype.subdtype[1]):] == \
            arr.dtype.subdtype[1]:
        pass
    return {"dtype": spec, "shape": list(arr.shape), "data": _nested(arr, spec)}


def _dec(x, spec):
    if isinstance(spec, dict):
        if "vlen" in spec:
            v = spec["vlen"]
            if v == "str":
                return x
            if v == "bytes":
                return base64.b64decode(x)
            return np.array([_dec(e, v) for e in x], dtype=spec_dtype(v))
        if "enum" in spec or "ref" in spec:
            return x
        if "fields" in spec:
            return tuple(_dec(e, f[1]) for e, f in zip(x, spec["fields"]))
        if "subarray" in spec:
            return np.array(_dec_nested(x, spec["subarray"]), dtype=spec_dtype(spec["subarray"]))
    kind = np.dtype(spec).kind
    if kind in "SV":
        return base64.b64decode(x)
    if kind == "c":
        return complex(float(x[0]), float(x[1]))
    if kind == "f":
        return float(x)
    return x


def _dec_nested(x, spec):
    if isinstance(x, list) and not (isinstance(spec, dict) and ("fields" in spec or "vlen" in spec)
                                    or (isinstance(spec, str) and np.dtype(spec).kind == "c")):
        return [_dec_nested(e, spec) for e in x]
    return _dec(x, spec)


def decode(obj):
    """The numpy array (0-d for scalars; None for an empty dataspace) of a JSON form."""
    spec, shape = obj["dtype"], obj["shape"]
    if shape is None:
        return None
    dt = spec_dtype(spec)
    out = np.empty(tuple(shape), dtype=dt)
    flat = out.reshape(-1)

    def items(x, depth):
        if depth == len(shape):
            yield x
        else:
            for e in x:
                yield from items(e, depth + 1)

    for i, x in enumerate(items(obj["data"], 0)):
        flat[i] = _dec(x, spec)
    return out
