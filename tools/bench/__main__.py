"""python -m tools.bench [name ...]: run the side-by-side benchmarks (all by default)."""
import sys

from . import chunked, core, index2005, lookup, startup, table, versioned, write

SUITES = {fn.__name__: fn for fn in core.ALL + chunked.ALL + write.ALL + table.ALL + lookup.ALL
          + startup.ALL + versioned.ALL + index2005.ALL}


def main(names):
    for name in names or SUITES:
        SUITES[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
