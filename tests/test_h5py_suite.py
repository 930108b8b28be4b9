"""h5py's own high-level test suite, run against purehep through the name shim of
tools/h5py_suite.py (the tests shipped in the installed h5py wheel; h5py is only the source of
the tests here, never imported by them). Fails when the number of passing tests drops below
the recorded floor: raise FLOOR as purehep passes more of them.

Measured 2026-11-24 (python -m tools.h5py_suite --oracle-json <h5py's outcomes>): h5py passes
883 of the 899 tests; purehep 770 (763 before per-dataset chunk caches, require_* on read-only
files, File.in_memory, h5py.filters.Gzip, the legacy gzip levels and unlimited virtual
mappings; 416 before issue 12's work),
584 of the 597 that h5py passes and that use neither h5py's low-level layer nor its private
internals (97.8 %). The floor leaves 8 for the tests whose outcome depends on timing
(processes racing for a lock, threads creating datasets at once). 20-40 s at load 2, about a
minute at load 6. 2026-11-24, file space options (fs_strategy, page buffer, meta_block_size):
794 passed (786 before). 2026-11-24, more of h5py's low-level layer (h5t predefined bitfield
and complex types, dcpl/dapl in h5d.create and virtual mappings, h5l, h5g, h5o, h5i, h5a,
point selections, DatasetID.read/write, h5f.open/create/open_file_image, ids' close):
843 passed (793 before; failures via the low-level layer 11, 59 before); the floor is 10
below. 2026-11-24, Group.copy(expand_refs=True), compounds with variable-length members laid
out as h5py's: 845 passed, 593 of the 597 high-level tests h5py passes. 2026-11-25: 846
passed; test_file_alignment (3,000 datasets, each followed by id.get_offset, a stage) took 22 s
and was cut by the 30 s test timeout on a busy machine, taking the tests after it in its worker
along (825 passed then), while every stage looked at every object; 4.8 s now. Later on
2026-11-25: test_concurrent_dataset_creation passes every time (it lost datasets in about
two runs of three: calls on a file open for writing from several threads were not
serialized; hl/serialize.py), 846 passed with TestFileObj's broken file objects (purehep
writes at flush) and timing-dependent lock races among the failures. Later on 2026-11-25:
853 passed (846 before): a file object's metadata is held until flush/close as libhdf5's
metadata cache holds it (io/objsink.py: TestFileObj's failing read and write), complex_names
settable, register_driver, the metadata cache hit rate and settings, custom float layouts
written (h5t set_fields, write/softfloat.py). Not passed by design: test_exception_writeonly
(purehep takes the vlen string libhdf5 refuses on a write-only object), get_mdc_size (no size
to report), TestDealloc (a File is its own FileID, kept by its objects),
test_append_permissions (h5py fails it too when run as root). The floor is 11 below.
"""
import pytest

pytest.importorskip("h5py")
pytest.importorskip("pytest_timeout")

from tools.h5py_suite import run_suite  # noqa: E402

FLOOR = 842


def test_h5py_suite_passes_floor():
    s = run_suite(jobs=2, timeout=600)
    assert not s["foreign_h5py_modules"], f"the real h5py was imported: {s['foreign_h5py_modules']}"
    assert not s["problems"], s["problems"]
    causes = "\n".join(f"{n:4d} {c}" for c, n in s["top_causes"][:15])
    assert s["passed"] >= FLOOR, (f"{s['passed']} of h5py's tests pass (floor {FLOOR}); "
                                  f"top causes:\n{causes}")
