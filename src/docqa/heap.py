"""The C heap of a long-lived process (glibc's malloc): what it keeps after large work.

glibc keeps freed heap for reuse rather than giving it back, and after the first large free it
raises the size from which a block gets a mapping of its own (up to 32 MB), so later large
temporaries land in the heap and stay there as free holes.  For docqa that is memory a parser
process or the embedding process holds for nothing, and free heap that a forked parser refills
unseen by its memory cap (pool.cap_memory counts the data size it starts with).  Nothing is done
where the C library is not glibc.
"""

from __future__ import annotations

import functools


def keep_large_blocks_apart() -> None:
    """Large allocations (>= 128 KiB) get mappings of their own, given back when freed.  glibc
    otherwise raises that threshold after the first large free, and later large temporaries (numpy's
    while the keyword tables are built: ~25 MB; a closed model session's: ~45 MB) stay in the heap as
    free holes."""
    if _libc() is not None:
        _libc().mallopt(_M_MMAP_THRESHOLD, 128 * 1024)


def share_heap_arenas() -> None:
    """Threads started from now on share two malloc arenas instead of one each.  glibc gives every
    thread that allocates an arena of its own (up to 8 per core), and each keeps its freed pages: in
    an add the model-loading, hash-checking and embedding threads held 10-20 MB of the peak that way
    on top of the writer's heap (RESULTS.md, 2026-12-06, peak memory).  The model's own working memory is
    onnxruntime's arena, not malloc's, so the threads hardly contend for these."""
    if _libc() is not None:
        _libc().mallopt(_M_ARENA_MAX, _SHARED_ARENAS)


_M_MMAP_THRESHOLD = -3  # malloc.h
_M_ARENA_MAX = -8
_SHARED_ARENAS = 2


@functools.lru_cache(maxsize=1)
def _libc():
    """glibc (told apart by its malloc_trim), or None (macOS, musl)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (ImportError, OSError):
        return None
