"""Writer process of the crash-point sweep: ``steps`` flushed steps of random changes (the
crash test's operations) on a base file in 'a' mode, then one more step whose commit stops
the process after its ``k``-th write to the file (``k`` = -1: the commit runs to the end and
the number of its writes is printed).

Before the last commit the state it will leave is written to ``pending.json``, the state of
the last completed commit to ``committed.json``.
"""
import json
import os
import random
import sys

import purehep
from purehep.io import sink
from modify_crash_worker import save, step_ops


def stop_after(k):
    """Make the k+1-th write to any file being written end the process before it happens."""
    done = [0]
    write = sink.FileSink.write

    def counted(self, offset, data):
        if k >= 0 and done[0] >= k:
            os._exit(0)
        done[0] += 1
        return write(self, offset, data)

    sink.FileSink.write = counted
    return done


def main(path, folder, seed, steps, k):
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
    done = stop_after(k)
    f.flush()
    print(done[0])
    os._exit(0)            # no close: the commit alone is under test


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
