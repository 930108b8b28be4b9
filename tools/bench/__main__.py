"""python -m tools.bench [name ...]: run the side-by-side benchmarks (all by default)."""
import sys

from . import (chunked, core, dasks, index2005, lookup, remote, sparse, startup, table,
               versioned, write)

SUITES = {fn.__name__: fn for fn in core.ALL + chunked.ALL + write.ALL + table.ALL + lookup.ALL
          + startup.ALL + versioned.ALL + sparse.ALL + index2005.ALL + dasks.ALL + remote.ALL}


def main(names):
    for name in names or SUITES:
        SUITES[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
