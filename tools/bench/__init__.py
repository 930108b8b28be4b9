"""Side-by-side benchmarks: purehep against h5py (and pyfive), in one run, as ratios."""
