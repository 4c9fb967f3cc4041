"""Interner and Cursor: interning from Python, snapshots, deltas, files."""

import pytest

import interned_string_db as isdb
from conftest import KNOWN, NOT_UTF8, NOT_UTF8_ID


def test_intern_returns_get_id_and_is_idempotent():
    interner = isdb.Interner(ncs=4)
    assert interner.ncs == 4
    assert interner.intern(3, "a") == KNOWN["a"]
    assert interner.intern(3, b"a") == KNOWN["a"]
    assert len(interner) == 1
    assert interner.intern(0, NOT_UTF8) == NOT_UTF8_ID
    assert interner.snapshot() == {KNOWN["a"]: "a", NOT_UTF8_ID: NOT_UTF8}


def test_intern_batch_returns_ids_in_order_across_chunks():
    interner = isdb.Interner(ncs=1)
    names = [f"tensor_{i}" for i in range(10_000)]
    ids = interner.intern_batch(0, names)
    assert ids == isdb.get_ids(names)
    assert interner.intern_batch(0, iter(names[:3])) == ids[:3]
    assert interner.snapshot() == dict(zip(ids, names))


def test_default_interner_has_256_ncs():
    assert isdb.Interner().ncs == 256


def test_delta_delivers_each_entry_once():
    interner = isdb.Interner(ncs=2)
    cursor = isdb.Cursor()
    interner.intern(0, "a")
    assert interner.delta(cursor) == {KNOWN["a"]: "a"}
    assert cursor.delivered == 1
    assert interner.delta(cursor) == {}
    interner.intern(1, "model")
    assert interner.delta(cursor) == {KNOWN["model"]: "model"}
    assert isdb.Cursor().delivered == 0
    assert "delivered=2" in repr(cursor)


def test_save_writes_a_file_a_dictionary_reads(tmp_path):
    interner = isdb.Interner(ncs=2)
    for name in KNOWN:
        interner.intern(0, name)
    interner.intern(1, NOT_UTF8)
    path = tmp_path / "saved.isdb"
    assert interner.save(path) == []
    d = isdb.Dictionary.open(path)
    d.verify()
    assert {id_: d.get_bytes(id_) for id_ in d} == {
        **{id_: name.encode() for name, id_ in KNOWN.items()},
        NOT_UTF8_ID: NOT_UTF8,
    }


@pytest.mark.parametrize("nc", [-1, 2, 1000])
def test_an_nc_out_of_range_is_a_value_error(nc):
    interner = isdb.Interner(ncs=2)
    with pytest.raises(ValueError, match="NC"):
        interner.intern(nc, "a")
    with pytest.raises(ValueError, match="NC"):
        interner.intern_batch(nc, ["a"])


def test_an_empty_name_is_a_value_error_and_a_batch_says_where():
    interner = isdb.Interner(ncs=1)
    with pytest.raises(ValueError, match="empty"):
        interner.intern(0, "")
    names = [f"n{i}" for i in range(5000)] + [""]
    with pytest.raises(ValueError, match="name 5000 of the batch"):
        interner.intern_batch(0, names)
    # The names before it are interned.
    assert len(interner) == 5000


def test_a_name_of_the_wrong_type_is_a_type_error():
    interner = isdb.Interner(ncs=1)
    with pytest.raises(TypeError, match="str or bytes"):
        interner.intern(0, 5)
    with pytest.raises(TypeError, match="str or bytes"):
        interner.intern_batch(0, ["a", None])
    with pytest.raises(TypeError):
        interner.intern("0", "a")


def test_the_byte_cap_refuses_with_a_value_error():
    interner = isdb.Interner(ncs=1, byte_cap=8)
    interner.intern(0, "abcd")
    with pytest.raises(ValueError, match="full: 4 of 8 bytes"):
        interner.intern(0, "efghijklmn")


def test_a_bad_configuration_is_a_value_error():
    with pytest.raises(ValueError):
        isdb.Interner(ncs=0)
    with pytest.raises(ValueError):
        isdb.Interner(ncs=1, initial_capacity=2**60)
    with pytest.raises(OverflowError):
        isdb.Interner(ncs=-1)


def test_save_refuses_a_path_that_is_not_a_regular_file(tmp_path):
    with pytest.raises(IsADirectoryError):
        isdb.Interner(ncs=1).save(tmp_path)
    with pytest.raises(FileNotFoundError):
        isdb.Interner(ncs=1).save(tmp_path / "no" / "such" / "dir.isdb")
