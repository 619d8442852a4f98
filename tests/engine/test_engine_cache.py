"""The chunk cache: atomic checksummed entries, corruption detected and removed."""

import os
import warnings

import numpy as np
import pytest

from leakaudit.engine import CacheWarning, ChunkCache
from leakaudit.engine._cache import payload_checksum
from leakaudit.exceptions import UnsupportedError

KEY = "ab" + "0" * 62


def test_roundtrip_exact(tmp_path):
    cache = ChunkCache(tmp_path)
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7
    b = np.array([1, 2, 3], dtype=np.int32)
    path = cache.write(KEY, {"outputs": a, "other": b})
    assert path == tmp_path / "v1" / "ab" / f"{KEY}.npz"
    payload, corrupt = cache.read(KEY)
    assert not corrupt
    assert set(payload) == {"outputs", "other"}
    np.testing.assert_array_equal(payload["outputs"], a)
    assert payload["outputs"].dtype == a.dtype and payload["other"].dtype == b.dtype
    # No temporary file is left behind.
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_missing_entry_is_a_plain_miss(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ChunkCache(tmp_path).read(KEY) == (None, False)


def _entry(tmp_path):
    cache = ChunkCache(tmp_path)
    path = cache.write(KEY, {"outputs": np.linspace(0, 1, 1000)})
    return cache, path


def test_truncated_entry_detected_and_deleted(tmp_path):
    cache, path = _entry(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.warns(CacheWarning, match="corrupt"):
        payload, corrupt = cache.read(KEY)
    assert payload is None and corrupt
    assert not path.exists()


@pytest.mark.parametrize("where", [0.3, 0.5, 0.9])
def test_flipped_bytes_detected(tmp_path, where):
    cache, path = _entry(tmp_path)
    data = bytearray(path.read_bytes())
    i = int(len(data) * where)
    data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning):
        payload, corrupt = cache.read(KEY)
    assert payload is None and corrupt and not path.exists()


def test_checksum_mismatch_detected_even_if_zip_is_valid(tmp_path):
    # A well-formed npz whose payload does not match its checksum (CRCs are fine).
    cache, path = _entry(tmp_path)
    bad = {"p__outputs": np.linspace(0, 1, 1000) + 1e-12, "__key__": np.array(KEY),
           "__checksum__": np.array(payload_checksum(KEY, {"outputs": np.linspace(0, 1, 1000)}))}
    with open(path, "wb") as f:
        np.savez(f, **bad)
    with pytest.warns(CacheWarning, match="checksum"):
        assert cache.read(KEY) == (None, True)


def test_entry_under_wrong_key_detected(tmp_path):
    cache, path = _entry(tmp_path)
    other = "ab" + "1" * 62
    os.replace(path, cache.path(other))
    with pytest.warns(CacheWarning, match="holds key"):
        assert cache.read(other) == (None, True)


def test_object_arrays_refused(tmp_path):
    with pytest.raises(UnsupportedError, match="Python objects"):
        ChunkCache(tmp_path).write(KEY, {"x": np.array([{"a": 1}], dtype=object)})


def test_checksum_depends_on_names_dtypes_and_values():
    a = np.zeros(3)
    base = payload_checksum(KEY, {"a": a})
    assert payload_checksum(KEY, {"b": a}) != base
    assert payload_checksum(KEY, {"a": a.astype(np.float32)}) != base
    assert payload_checksum(KEY, {"a": a.reshape(1, 3)}) != base
    assert payload_checksum(KEY, {"a": a + 1}) != base
    assert payload_checksum(KEY, {"a": a.copy()}) == base


def test_stale_temp_files_removed(tmp_path):
    cache, path = _entry(tmp_path)
    tmp = path.parent / ".abcdef.123.tmp"
    tmp.write_bytes(b"partial")
    assert cache.remove_stale_temp(older_than=3600) == 0
    os.utime(tmp, (0, 0))
    assert cache.remove_stale_temp(older_than=3600) == 1
    assert not tmp.exists() and path.exists()


def test_concurrent_writers_and_reader_never_see_a_partial_entry(tmp_path):
    import threading

    cache = ChunkCache(tmp_path)
    payloads = [{"outputs": np.full(20_000, float(i))} for i in range(4)]
    errors, seen = [], set()

    def writer(i):
        for _ in range(30):
            cache.write(KEY, payloads[i])

    def reader():
        for _ in range(150):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    payload, corrupt = cache.read(KEY)
                except CacheWarning as w:
                    errors.append(str(w))
                    continue
            if payload is not None:
                vals = np.unique(payload["outputs"])
                if vals.size != 1:
                    errors.append(f"mixed entry {vals}")
                seen.add(float(vals[0]))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert seen <= {0.0, 1.0, 2.0, 3.0}
    assert not list(tmp_path.glob("v1/*/*.tmp"))
    payload, corrupt = cache.read(KEY)
    assert not corrupt and np.unique(payload["outputs"]).size == 1


def test_ctrl_c_inside_the_archive_stays_a_ctrl_c(tmp_path, monkeypatch):
    """Ctrl-C as numpy starts closing the archive leaves its zip file unclosed; when that was the entry's own file
    object, the zip file's later close met a closed file ("seek of closed file", a traceback instead of the one line
    of an interrupted command). The archive is built in memory now: the interrupt stays a KeyboardInterrupt, nothing
    is raised later, and no partial or temporary entry is left."""
    import gc
    import sys
    import zipfile

    cache = ChunkCache(tmp_path)
    unraised = []
    monkeypatch.setattr(sys, "unraisablehook", unraised.append)
    real_close, calls = zipfile.ZipFile.close, []

    def close(self):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C as numpy's own `finally: zipf.close()` begins
        return real_close(self)

    monkeypatch.setattr(zipfile.ZipFile, "close", close)
    with pytest.raises(KeyboardInterrupt) as info:
        cache.write(KEY, {"outputs": np.ones((4, 3)), "other": np.zeros(2)})
    del info  # its traceback holds the unclosed zip file
    gc.collect()  # the zip file's finaliser closes it here
    assert len(calls) >= 2 and not unraised, [u.exc_value for u in unraised]
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    payload, corrupt = cache.read(KEY)
    assert payload is None and not corrupt
