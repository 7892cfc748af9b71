"""The C heap policy (docqa.heap): threads share two malloc arenas once share_heap_arenas ran."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docqa.heap import _libc

# Four threads allocate at once (blocks past pymalloc's 512 bytes go to malloc) and hold their
# blocks until all have; then glibc's malloc_info lists the arenas (one <heap> each).
_COUNT_ARENAS = r"""
import ctypes, os, sys, tempfile, threading
from docqa.heap import _libc, share_heap_arenas
if sys.argv[1] == "1":
    share_heap_arenas()
barrier, held = threading.Barrier(4), []
def work():
    held.append([bytearray(4096) for _ in range(64)])
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
libc = _libc()
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = tempfile.mktemp()
stream = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, stream)
libc.fclose(stream)
print(open(path).read().count("<heap nr="))
os.remove(path)
"""


def _arenas(shared: bool) -> int:
    out = subprocess.run([sys.executable, "-c", _COUNT_ARENAS, "1" if shared else "0"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(_libc() is None, reason="the C library is not glibc: there is no arena limit to set")
def test_threads_started_after_share_heap_arenas_use_at_most_two_arenas():
    assert _arenas(shared=False) > 2  # each allocating thread gets an arena of its own by default
    assert _arenas(shared=True) <= 2
