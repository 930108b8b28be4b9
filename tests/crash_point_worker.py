"""Writer process of the crash-point sweep: ``steps`` flushed steps of random changes (the
crash test's operations) on a base file in 'a' mode, then one more step whose commit stops
the process after its ``k``-th write to the file (``k`` = -1: the commit runs to the end and
the number of its writes is printed). With ``torn``, the process stops inside its k+1-th
write instead, at the first system page boundary the write crosses (what a SIGKILL during
the write can leave: Linux applies a write page by page), or exits with status 3 when that
write lies in one page.

Before the last commit the state it will leave is written to ``pending.json``, the state of
the last completed commit to ``committed.json``.
"""
import json
import os
import random
import sys

import purehep
from purehep.io import sink
from purehep.write.allocator import SYSTEM_PAGE
from modify_crash_worker import save, step_ops


def stop_after(k, torn=False):
    """Make the k+1-th write to any file being written end the process before it happens
    (``torn``: once its part before the first system page boundary is written)."""
    done = [0]
    write = sink.FileSink.write

    def counted(self, offset, data):
        if k >= 0 and done[0] >= k:
            if torn:
                view = memoryview(data).cast("B")
                cut = -(-(offset + 1) // SYSTEM_PAGE) * SYSTEM_PAGE - offset
                if cut >= len(view):
                    os._exit(3)
                write(self, offset, view[:cut])
            os._exit(0)
        done[0] += 1
        return write(self, offset, data)

    sink.FileSink.write = counted
    return done


def main(path, folder, seed, steps, k, torn=False):
    rng = random.Random(seed)
    with open(os.path.join(folder, "committed.json")) as fh:
        state = json.load(fh)
    f = purehep.File(path, "a")
    for step in range(1, steps + 1):
        state = step_ops(f, rng, state, step)
        f.flush()
    save(folder, "committed.json", state)
    pending = step_ops(f, rng, state, steps + 1)
    save(folder, "pending.json", pending)
    done = stop_after(k, torn)
    f.flush()
    print(done[0])
    os._exit(0)            # no close: the commit alone is under test


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
         sys.argv[6:] == ["torn"])
