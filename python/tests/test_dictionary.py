"""Dictionary: snapshot files read in place, those Rust wrote included."""

import os

import pytest

import interned_string_db as isdb
from conftest import CONFLICT, KNOWN, NOT_UTF8, NOT_UTF8_ID

ALL_IDS = sorted([*KNOWN.values(), NOT_UTF8_ID])


def test_a_file_written_by_rust_reads_back(rust_file):
    d = isdb.Dictionary.open(rust_file)
    assert len(d) == 6
    for name, id_ in KNOWN.items():
        assert d[id_] == name
        assert d.get(id_) == name
        assert d.get_bytes(id_) == name.encode()
        assert id_ in d
    assert d.version in (1, 2)
    assert d.conflicts() == [CONFLICT]
    assert d.conflicts_dropped == 0
    d.verify()


def test_iteration_and_ids_are_in_id_order(rust_file):
    d = isdb.Dictionary.open(rust_file)
    assert list(d) == ALL_IDS
    assert d.ids() == ALL_IDS
    assert [id_ for id_, _ in d.items(as_bytes=True)] == ALL_IDS


def test_a_name_that_is_not_utf8_is_read_as_bytes(rust_file):
    d = isdb.Dictionary.open(rust_file)
    assert d.get_bytes(NOT_UTF8_ID) == NOT_UTF8
    assert dict(d.items(as_bytes=True))[NOT_UTF8_ID] == NOT_UTF8
    for read in (lambda: d[NOT_UTF8_ID], lambda: d.get(NOT_UTF8_ID), d.items):
        with pytest.raises(UnicodeDecodeError, match=f"get_bytes\\({NOT_UTF8_ID}\\)"):
            read()


def test_absent_ids(rust_file):
    d = isdb.Dictionary.open(rust_file)
    for absent in (0, 1, isdb.MAX_ID, -1, 2**64, 2**70):
        assert absent not in d
        assert d.get(absent) is None
        assert d.get(absent, "fallback") == "fallback"
        assert d.get_bytes(absent, b"") == b""
        with pytest.raises(KeyError):
            d[absent]


def test_an_id_that_is_not_an_int_is_a_type_error(rust_file):
    d = isdb.Dictionary.open(rust_file)
    for bad in ("a", 1.0, None):
        with pytest.raises(TypeError):
            d[bad]
        with pytest.raises(TypeError):
            d.get(bad)
        with pytest.raises(TypeError):
            bad in d


def test_an_empty_snapshot(tmp_path):
    path = tmp_path / "empty.isdb"
    isdb.Interner(ncs=1).save(path)
    d = isdb.Dictionary.open(str(path))
    assert len(d) == 0 and list(d) == [] and d.items() == []
    d.verify()


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.isdb"):
        isdb.Dictionary.open(tmp_path / "nowhere.isdb")


def test_a_directory_is_an_os_error_and_nothing_is_mapped(tmp_path):
    with pytest.raises(OSError, match="regular file"):
        isdb.Dictionary.open(tmp_path)


def test_a_file_that_is_not_a_snapshot_is_a_value_error(tmp_path):
    path = tmp_path / "junk.isdb"
    path.write_bytes(b"not a snapshot file at all" * 10)
    with pytest.raises(ValueError, match="not a snapshot file"):
        isdb.Dictionary.open(path)


def test_a_truncated_file_is_a_value_error(tmp_path, rust_file):
    path = tmp_path / "short.isdb"
    path.write_bytes(rust_file.read_bytes()[:-10])
    with pytest.raises(ValueError, match="need at least"):
        isdb.Dictionary.open(path)


def test_a_corrupt_string_is_found_by_verify(tmp_path):
    data = bytearray(open(os.path.dirname(__file__) + "/data/rust_v2.isdb", "rb").read())
    strings_at = 64 + 16 * 6
    data[strings_at] ^= 0x01  # a byte of the first name: checksum mismatch
    path = tmp_path / "corrupt.isdb"
    path.write_bytes(bytes(data))
    d = isdb.Dictionary.open(path)  # the header is intact
    with pytest.raises(ValueError, match="entries section is corrupt"):
        d.verify()


def test_an_entry_record_out_of_range_is_a_value_error_on_lookup(tmp_path):
    data = bytearray(open(os.path.dirname(__file__) + "/data/rust_v2.isdb", "rb").read())
    # The first record's end offset (version 2) far past the strings.
    data[64 + 8 : 64 + 16] = (2**40).to_bytes(8, "little")
    path = tmp_path / "bad_record.isdb"
    path.write_bytes(bytes(data))
    d = isdb.Dictionary.open(path)
    with pytest.raises(ValueError, match="lengths"):
        d.get_bytes(ALL_IDS[0])
    with pytest.raises(ValueError):
        d.ids()


def test_repr_and_path(rust_file):
    d = isdb.Dictionary.open(rust_file)
    assert str(d.path) == str(rust_file)
    assert "6 entries" in repr(d)


def test_dictionary_has_no_constructor_but_open():
    with pytest.raises(TypeError):
        isdb.Dictionary()
