"""Mutation fuzzing in child processes: damage sample files (bit flips, address and length
fields, truncations; checksums recomputed over the damage in some cases so that the decoders
behind them are reached), read each damaged file fully in a worker process under memory and
time limits, and classify what happened.

The parent sends the worker (sample paths, [(sample index, seed)]); the worker rebuilds every
case from its seed, writes one JSON line per case, and the parent restarts it after a crash or
a hang, recording the case it died on. A case is *bad* when reading raised anything but a
purehep error, a FormatError carried no offset, the worker died, or it ran out of time or
memory (``MemoryError`` under the address-space limit).

Run by hand: ``python tests/fuzzing.py N [SEED]`` fuzzes the built-in samples and the corpus
with N cases and prints the outcome counts and every bad case.
"""
import json
import os
import random
import select
import signal
import struct
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "files")

MEMORY_LIMIT = 3 << 30       # address space of a worker
CASE_SECONDS = 20            # one case's time limit (SIGALRM inside the worker)
STALL_SECONDS = 120          # no output from the worker for this long: killed as a hang
FULL_READ = 64 << 20         # datasets up to this many bytes are read whole
HOPELESS = 1 << 40           # declared sizes beyond memory: a whole read must fail cleanly


# -- reading everything -----------------------------------------------------------------------
def read_all(f):
    """Walk every object and link of an open purehep File, read every attribute and dataset
    (whole when small, a corner and a middle box when large, a whole read expected to fail
    cleanly when the declared size is beyond any memory), dereference references, read
    sparse, virtual and chunk metadata."""
    import numpy as np
    import purehep

    def dataset(name, ds):
        ds.shape, ds.maxshape, ds.chunks, ds.compression, ds.fillvalue
        ds.dtype
        shape = ds.shape
        nbytes = ds.nbytes if shape is not None else 0
        if shape is None or nbytes <= FULL_READ or nbytes >= HOPELESS:
            values = ds[()]
        else:
            values = ds[tuple(slice(0, 2) for _ in shape)]
        if shape and ds.size:
            ds[tuple(n - 1 for n in shape)]
            ds[tuple(slice(n // 2, n // 2 + 3) for n in shape)]
            if ds.is_sparse:
                list(ds.struct_chunk_iter())
                if nbytes <= FULL_READ:
                    ds.read_sparse()
            elif ds.is_virtual:
                ds.virtual_sources()
            elif ds.chunks is not None:
                ds.id.chunk_iter(lambda info: None)
            for dim in ds.dims:
                dim.label
                list(dim.keys())
        follow_refs(ds.dtype, values)

    def follow_refs(dtype, values):
        kind = purehep.check_ref_dtype(dtype) if dtype.kind == "O" else None
        if kind is None:
            return
        for ref in np.asarray(values).reshape(-1)[:50]:
            if ref:
                target = f[ref]
                if isinstance(ref, purehep.RegionReference) and isinstance(target, purehep.Dataset):
                    target[ref]

    def attrs(obj):
        for key in obj.attrs:
            value = obj.attrs[key]
            dtype = obj.attrs.get_dtype(key)
            follow_refs(dtype, value)

    def visit(name, obj):
        attrs(obj)
        if isinstance(obj, purehep.Dataset):
            dataset(name, obj)
        elif isinstance(obj, purehep.Datatype):
            obj.dtype

    attrs(f)
    f.visititems(visit)

    def link(name, lnk):
        if isinstance(lnk, (purehep.SoftLink, purehep.ExternalLink)):
            try:
                f[name]
            except KeyError:
                pass  # a dangling soft or external link (or a name holding "/"): h5py's answer
    f.visititems_links(link)


# -- damage -------------------------------------------------------------------------------------
class Sample:
    """A sample file's bytes and the map of its structures (from ``purehep.inspect``)."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as fh:
            self.data = fh.read()
        self.meta = None

    def ensure_map(self):
        """Map the structures on first use (explicit bit flips need no map)."""
        if self.meta is not None:
            return
        self.meta, self.checksummed, self.addresses, self.sizeof_offsets = [], [], [], 8
        self.boundaries, self.targets = set(), []
        try:
            self._map()
        except Exception:  # noqa: BLE001 - a damaged corpus file still fuzzes, unmapped
            pass
        if not self.meta:
            self.meta = [(0, len(self.data))]

    def _map(self):
        from purehep.inspect import walk
        from purehep.io import open_source
        fmap = walk(open_source(self.data))
        if fmap.superblock is not None:
            self.sizeof_offsets = fmap.superblock.sizeof_offsets
        offsets = set()
        for top in fmap.structures:
            for _, s in top.walk():
                if s.size <= 0:
                    continue
                self.boundaries.update((s.offset, s.end))
                if s.kind == "metadata":
                    self.meta.append((s.offset, s.size))
                    offsets.add(s.offset)
                if s.checksum is not None:
                    self.checksummed.append(s.checksum)
        base = fmap.superblock.base_address if fmap.superblock is not None else 0
        so = self.sizeof_offsets
        targets = {o - base for o in offsets if o >= base}
        data = self.data
        for start, size in self.meta:      # where a metadata structure stores an address
            for pos in range(start, min(start + size, len(data)) - so + 1):
                if int.from_bytes(data[pos:pos + so], "little") in targets:
                    self.addresses.append(pos)
        self.targets = sorted(targets)

    def fix_checksums(self, buf, touched):
        """Recompute the lookup3 checksum of every structure a mutation touched."""
        from purehep.format.checksum import lookup3
        for start, end, at, zeroed in self.checksummed:
            if at + 4 > len(buf) or not any(start <= p < max(end, at + 4) for p in touched):
                continue
            body = bytearray(buf[start:end])
            if zeroed:
                body[at - start:at - start + 4] = b"\0\0\0\0"
            buf[at:at + 4] = struct.pack("<I", lookup3(bytes(body)))


def _hostile(rng, sample, width):
    n = len(sample.data)
    top = (1 << (8 * width)) - 1
    choices = [0, 1, 2, top, top - 1, n, n - 1, n + 1, rng.randrange(max(n, 1)),
               1 << (8 * width - 1), rng.randrange(top + 1), 0x7FFFFFFF, 0xFFFFFFFF, 1 << 32,
               rng.choice([7, 8, 16, 255, 256, 4096, 65535, 1 << 20, 1 << 23])]
    if sample.targets:
        choices.append(rng.choice(sample.targets))        # another structure: type confusion
    return rng.choice(choices) & top


def mutate(sample, seed):
    """A damaged copy of ``sample`` and a description, both determined by ``seed``."""
    sample.ensure_map()
    rng = random.Random(seed)
    buf = bytearray(sample.data)
    n = len(buf)
    touched = []
    kind = rng.choices(["flip", "bytes", "field", "address", "truncate", "mixed"],
                       [25, 10, 25, 20, 10, 10])[0]
    desc = [kind]

    def meta_pos():
        start, size = rng.choice(sample.meta)
        return min(start + rng.randrange(max(size, 1)), n - 1)

    def flip():
        pos = meta_pos() if rng.random() < 0.85 else rng.randrange(n)
        bit = rng.randrange(8)
        buf[pos] ^= 1 << bit
        touched.append(pos)
        desc.append(f"flip {pos}.{bit}")

    def field(pos=None, width=None):
        width = width or rng.choice([1, 2, 4, 8, sample.sizeof_offsets])
        pos = meta_pos() if pos is None else pos
        pos = min(pos, n - width)
        value = _hostile(rng, sample, width)
        buf[pos:pos + width] = value.to_bytes(width, "little")
        touched.extend(range(pos, pos + width))
        desc.append(f"set {pos}:{width}={value:#x}")

    if kind == "flip":
        for _ in range(rng.choice([1, 1, 1, 2, 3, 8])):
            flip()
    elif kind == "bytes":
        for _ in range(rng.randint(1, 8)):
            pos = meta_pos()
            buf[pos] = rng.randrange(256)
            touched.append(pos)
            desc.append(f"byte {pos}={buf[pos]}")
    elif kind == "field":
        for _ in range(rng.choice([1, 1, 2])):
            field()
    elif kind == "address":
        if sample.addresses:
            for _ in range(rng.choice([1, 1, 2])):
                field(rng.choice(sample.addresses), sample.sizeof_offsets)
        else:
            field()
    elif kind == "mixed":
        for _ in range(rng.randint(1, 4)):
            rng.choice([flip, field])()
    if touched and rng.random() < 0.5 and sample.checksummed:
        sample.fix_checksums(buf, touched)
        desc.append("checksums fixed")
    if kind == "truncate" or (kind == "mixed" and rng.random() < 0.3):
        if sample.boundaries and rng.random() < 0.6:
            cut = rng.choice(sorted(sample.boundaries)) + rng.choice([-1, 0, 0, 1])
        else:
            cut = rng.randrange(n)
        cut = max(0, min(cut, n))
        del buf[cut:]
        desc.append(f"cut {cut}")
    return bytes(buf), " ".join(desc)


# -- the worker --------------------------------------------------------------------------------
class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _where(exc):
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return " < ".join(f"{os.path.relpath(fr.filename, ROOT)}:{fr.lineno} {fr.name}"
                      for fr in reversed(frames))


def run_case(data, verify=True):
    """(outcome, problem): outcome names what reading ended with; problem is None unless the
    case is bad."""
    import purehep
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        with purehep.File(data, verify_checksums=verify) as f:
            read_all(f)
        return "ok", None
    except _Timeout:
        return "timeout", f"no answer within {CASE_SECONDS} s"
    except purehep.PurehepError as exc:
        if isinstance(exc, purehep.FormatError) and (exc.offset is None or not exc.structure):
            return "no-offset", f"{type(exc).__name__} without structure/offset: {exc} [{_where(exc)}]"
        return type(exc).__name__, None
    except MemoryError as exc:
        return "MemoryError", f"MemoryError: {exc} [{_where(exc)}]"
    except Exception as exc:  # noqa: BLE001 - what the fuzzer is looking for
        return type(exc).__name__, f"{type(exc).__name__}: {exc} [{_where(exc)}]"
    finally:
        signal.alarm(0)


def worker_main():
    """Read {"samples": [...], "cases": [[sample, seed], ...]} from stdin; one JSON line out
    per case, a "start" line before each so that the parent knows which case killed us."""
    import resource
    import warnings
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    warnings.simplefilter("ignore")
    job = json.loads(sys.stdin.readline())
    out = sys.stdout
    samples = {}
    warm = False
    for i, (index, seed) in enumerate(job["cases"]):
        flip = None
        if isinstance(seed, list):        # an explicit bit flip: (position, bit)
            flip, seed = seed, 0
        sample = samples.get(index)
        if sample is None:
            sample = samples[index] = Sample(job["samples"][index])
        if not warm:       # compile/load the kernels before anything is timed
            run_case(sample.data)
            from purehep.kernels import checksum
            checksum._lookup3_from.compiled()
            checksum._lookup3_bytes.compiled()
            warm = True
        out.write(json.dumps({"start": i}) + "\n")
        out.flush()
        if flip is None:
            data, desc = mutate(sample, seed)
            verify = random.Random(seed ^ 0x5EED).random() < 0.9
        else:
            buf = bytearray(sample.data)
            buf[flip[0]] ^= 1 << flip[1]
            data, desc, verify = bytes(buf), f"flip {flip[0]}.{flip[1]}", True
        t = time.monotonic()
        outcome, problem = run_case(data, verify)
        out.write(json.dumps({"case": i, "outcome": outcome, "problem": problem, "desc": desc,
                              "verify": verify, "seconds": round(time.monotonic() - t, 3)})
                  + "\n")
        out.flush()


# -- the parent ---------------------------------------------------------------------------------
def run(samples, cases, nice=5):
    """Run ``cases`` [(sample index, seed or [position, bit])] over ``samples`` (paths) in
    worker processes; return one result dict per case (outcome, problem, desc, sample,
    seed)."""
    results = [None] * len(cases)
    todo = list(range(len(cases)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]), PYTHONHASHSEED="0")
    while todo:
        batch = [cases[i] for i in todo]
        proc = subprocess.Popen([sys.executable, "-c", "import fuzzing; fuzzing.worker_main()"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=ROOT, env=env,
                                preexec_fn=(lambda: os.nice(nice)) if nice else None)
        proc.stdin.write((json.dumps({"samples": samples, "cases": batch}) + "\n").encode())
        proc.stdin.close()
        current, done = None, 0
        last = time.monotonic()
        buf = b""
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 5)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                buf += chunk
                last = time.monotonic()
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    msg = json.loads(line)
                    if "start" in msg:
                        current = msg["start"]
                    else:
                        k = todo[msg["case"]]
                        results[k] = dict(msg, sample=samples[cases[k][0]], seed=cases[k][1])
                        done = msg["case"] + 1
                        current = None
            elif time.monotonic() - last > STALL_SECONDS:
                proc.kill()
                break
        code = proc.wait()
        if current is not None:       # the case in flight killed the worker or hung
            k = todo[current]
            what = "hang" if code == -signal.SIGKILL else "crash"
            results[k] = {"outcome": what, "problem": f"worker {what} (exit {code})",
                          "desc": "", "sample": samples[cases[k][0]], "seed": cases[k][1]}
            done = current + 1
        elif done < len(batch):
            raise RuntimeError(f"fuzz worker exited ({code}) before its first case")
        todo = todo[done:]
    return results


def summary(results):
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    bad = [r for r in results if r["problem"]]
    return counts, bad


def corpus_files(max_size, limit=None, seed=0):
    """Corpus files (paths) up to ``max_size`` bytes holding an HDF5 signature, a random
    selection of ``limit`` of them when given; [] when the corpus is absent."""
    if not os.path.isdir(CORPUS):
        return []
    paths = []
    for dirpath, _, names in os.walk(CORPUS):
        for name in sorted(names):
            p = os.path.join(dirpath, name)
            if os.path.getsize(p) <= max_size:
                with open(p, "rb") as fh:
                    head = fh.read(1 << 16)
                if b"\x89HDF\r\n\x1a\n" in head:
                    paths.append(p)
    paths.sort()
    if limit is not None and limit < len(paths):
        paths = sorted(random.Random(seed).sample(paths, limit))
    return paths


def make_cases(nsamples, n, seed):
    rng = random.Random(seed)
    return [(i % nsamples, rng.getrandbits(48)) for i in range(n)]


if __name__ == "__main__":
    import tempfile
    import fuzzfiles
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    tmp = tempfile.mkdtemp()
    paths = [fuzzfiles.build(name, os.path.join(tmp, f"{name}.h5")) for name in fuzzfiles.SAMPLES]
    paths += corpus_files(1 << 20)
    t = time.monotonic()
    res = run(paths, make_cases(len(paths), n, seed))
    counts, bad = summary(res)
    print(f"{n} cases over {len(paths)} files in {time.monotonic() - t:.0f} s: {counts}")
    for r in bad:
        print(f"BAD {os.path.basename(r['sample'])} seed={r['seed']} {r['outcome']}: "
              f"{r['problem']} ({r['desc']})")
