"""h5py's public warning classes (its ``h5py_warnings`` module), raised where purehep follows
h5py's deprecations (h5py 3.16: a dataset created without data or dtype)."""


class H5pyWarning(UserWarning):
    pass


class H5pyDeprecationWarning(H5pyWarning):
    pass
