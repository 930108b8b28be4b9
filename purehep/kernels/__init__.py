"""numba kernels (hot loops). Importing this package does not import numba; each kernel module
does, on first use. With NUMBA_DISABLE_JIT=1, or without numba installed, the same functions
run as plain Python/numpy."""
