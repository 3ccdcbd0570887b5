"""Keep freed memory in the process instead of handing it back to the kernel after every large tensor.

Why: glibc's malloc serves every block over 32 MB (and, by its adaptive threshold, most over 128 kB) with
its own ``mmap`` and unmaps it on ``free``. A batched encoder forward pass allocates and frees such blocks
for every layer (the [B*T, 1536] FFN activations are 50 MB), so each layer faults its pages in again and
the kernel zeroes them: the WattBot attention pass spent 37 of its 355 CPU seconds in the kernel doing that.
With ``mmap`` off for ``malloc`` and no trimming of the heap top, freed blocks are reused from the heap.
The price is some fragmentation: the WattBot pass peaked at 2.1 GB resident instead of 1.5 GB (its rule
reserves 6 GB). Which memory a tensor lives in never changes what is computed: the outputs are bit-for-bit
the same.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_MAX = -4
NEVER_TRIM = 2**31 - 1  # mallopt takes an int: trim only above ~2 GB of free heap top


def retain_freed_memory() -> bool:
    """Ask glibc's malloc to serve large blocks from the heap and keep freed ones; False where it is not glibc."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:  # not glibc (macOS, musl): the default allocator stays, only slower
        log.debug("no glibc mallopt: freed memory goes back to the system as before")
        return False
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, NEVER_TRIM))
