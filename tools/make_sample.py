"""Write purehep/samples/sample.h5, the small file `make demo` reads (h5py is the writer here;
purehep's own writer will replace it once it exists)."""
import os
import sys

import h5py
import numpy as np


def main(path):
    rng = np.random.default_rng(42)
    with h5py.File(path, "w", libver="latest", track_order=True) as f:
        f.attrs["title"] = "purehep demo sample"
        f.attrs["created_by"] = "tools/make_sample.py"
        run = f.create_group("run1")
        run.attrs["temperature_K"] = np.float64(293.15)
        run["events"] = np.arange(1000, dtype="<i8")
        run.create_dataset("energy", data=rng.normal(100.0, 15.0, size=(64, 64)).astype("f4"),
                           chunks=(16, 16), compression="gzip", compression_opts=4, shuffle=True)
        run["labels"] = np.array(["muon", "electron", "photon"], dtype=h5py.string_dtype())
        run["hits"] = np.array([(1, 0.5, 3), (2, 1.5, 7)],
                               dtype=[("id", "<u4"), ("t", "<f8"), ("layer", "<u1")])
        cal = f.create_group("calibration")
        cal["gain"] = np.linspace(0.9, 1.1, 16)
        cal.attrs["units"] = "ADC/keV"
        f["latest"] = h5py.SoftLink("/run1")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(__file__), "..", "purehep", "samples", "sample.h5"))
