"""The ``purehep`` command: ls, dump, inspect (a byte map of the file), check (spec
conformance), repack and query, one module per command. ``main(argv) -> exit status``.

Output goes through :class:`Output`: lines are buffered and written in blocks; a reader that
closes the pipe early (``purehep dump big.h5 | head``) ends the command quietly with status 0,
as ``h5dump | head`` does. Commands print nothing before the objects they name are resolved,
and close every block they open, so an error never leaves a half-printed block on stdout.

Only argparse and the command modules' small top-levels load with the command; numpy and the
reader load with ``purehep`` itself, and nothing imports numba, h5py or scipy here.
"""
import argparse
import os
import sys

from . import check, dump, inspect, ls, query, repack

UNREADABLE = 2
COMMANDS = (ls, dump, inspect, check, repack, query)


class Output:
    """``out(line)`` appends a line; lines reach stdout in blocks of about 64 KB. A closed
    pipe raises BrokenPipeError once, after which the command stops (see :func:`main`)."""

    LIMIT = 1 << 16

    def __init__(self, stream=None):
        self._stream = stream
        self._parts = []
        self._size = 0

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stdout

    def __call__(self, text):
        self._parts.append(text)
        self._size += len(text) + 1
        if self._size >= self.LIMIT:
            self.flush()

    def extend(self, lines):
        """Append many lines at once."""
        self._parts.extend(lines)
        self._size += sum(map(len, lines)) + len(lines)
        if self._size >= self.LIMIT:
            self.flush()

    def flush(self):
        if self._parts:
            data = "\n".join(self._parts) + "\n"
            self._parts.clear()
            self._size = 0
            self.stream.write(data)
        self.stream.flush()

    def discard(self):
        self._parts.clear()
        self._size = 0


def _silence_stdout():
    """After the reader has gone, point stdout at /dev/null so that the interpreter's own
    flush at exit does not report the broken pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (e.g. captured by a test): nothing will flush it


def parser():
    p = argparse.ArgumentParser(prog="purehep", description="HDF5 files without libhdf5: list, "
                                "dump, map every byte, check against the specification.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    return p


def main(argv=None):
    """Run the ``purehep`` command; return the exit status (check: 0 clean, 1 findings,
    2 unreadable)."""
    from ..errors import PurehepError
    args = parser().parse_args(argv)
    out = Output()
    try:
        status = args.run(args, out)
        out.flush()
    except BrokenPipeError:
        out.discard()
        _silence_stdout()
        return 0
    except (PurehepError, OSError, KeyError, ValueError) as exc:
        try:
            out.flush()
        except BrokenPipeError:
            _silence_stdout()
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        where = getattr(args, "file", None) or getattr(args, "target", None) or ""
        if isinstance(where, list):
            where = " ".join(where)
        print(f"purehep {args.command}: {where}: {msg}", file=sys.stderr)
        return UNREADABLE
    return status
