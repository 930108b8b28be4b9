"""The README's command-line examples are real: each ``$ purehep ...`` line in the README's
"Command line" section is run on the file it names (built here by h5py as the README says) and
its output must equal the lines shown under it."""
import os
import re
import shlex

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_readme_file(path):
    """readme.h5: a scalar string attribute, a gzip-compressed chunked dataset ``energy``
    (1000 float64), a group ``run1`` with a contiguous dataset ``hits`` and a compound table
    ``events`` (h5py, default (earliest) format, no timestamps)."""
    with h5py.File(path, "w", track_order=False) as f:
        f.attrs["title"] = "sample"
        f.create_dataset("energy", data=np.linspace(0.0, 1.0, 1000), chunks=(100,),
                         compression="gzip", track_times=False)
        g = f.create_group("run1")
        g.create_dataset("hits", data=np.arange(12, dtype="i4").reshape(3, 4),
                         track_times=False)
        events = np.array([(i, 0.25 * i) for i in range(10)], dtype=[("ts", "i8"), ("e", "f8")])
        g.create_dataset("events", data=events, track_times=False)


def examples(text):
    """(command, expected output lines) of each example in the Command line section."""
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    found = []
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        lines = block.rstrip("\n").split("\n")
        current = None
        for line in lines:
            if line.startswith("$ purehep "):
                current = (line[2:], [])
                found.append(current)
            elif current is not None:
                current[1].append(line)
    return found


def test_readme_cli_examples(tmp_path, monkeypatch, capsys):
    from purehep.cli import main
    build_readme_file(str(tmp_path / "readme.h5"))
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        cases = examples(fh.read())
    assert len(cases) >= 10
    monkeypatch.chdir(tmp_path)
    for command, want in cases:
        main(shlex.split(command)[1:])
        assert capsys.readouterr().out.rstrip("\n").split("\n") == want, command
