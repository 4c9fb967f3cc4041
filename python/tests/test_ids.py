"""get_id and get_ids: the crate's ids, bit for bit."""

import pytest

import interned_string_db as isdb
from conftest import KNOWN, NOT_UTF8, NOT_UTF8_ID


def test_get_id_matches_the_reference_known_values():
    for name, id_ in KNOWN.items():
        assert isdb.get_id(name) == id_
        assert isdb.get_id(name.encode()) == id_
    assert isdb.get_id("") == 121655548788208


def test_get_id_of_bytes_that_are_not_utf8():
    assert isdb.get_id(NOT_UTF8) == NOT_UTF8_ID


def test_ids_are_50_bit_and_never_invalid():
    ids = isdb.get_ids(f"name_{i}" for i in range(10_000))
    assert all(isdb.INVALID_ID < i <= isdb.MAX_ID for i in ids)
    assert isdb.MAX_ID == 2**50


def test_get_ids_matches_get_id_in_order_across_chunks():
    # More than one chunk of the binding (4096 names), str and bytes mixed.
    names = [f"span/{i}" if i % 3 else f"span/{i}".encode() for i in range(10_000)]
    assert isdb.get_ids(names) == [isdb.get_id(n) for n in names]


def test_get_ids_array_holds_the_same_ids():
    names = [f"span/{i}" for i in range(10_000)]
    ids = isdb.get_ids_array(names)
    assert ids.typecode == "Q"
    assert list(ids) == isdb.get_ids(names)
    assert len(isdb.get_ids_array([])) == 0
    with pytest.raises(TypeError, match="str or bytes"):
        isdb.get_ids_array([1])


def test_get_ids_array_of_any_iterable_holds_what_it_yielded():
    # The array is made at the length the input reports and filled in place:
    # an input that yields more (appended), fewer (cut), or has no length.
    names = [f"span/{i}" for i in range(10_000)]
    expected = isdb.get_ids(names)

    class Claims:
        def __init__(self, claimed):
            self.claimed = claimed

        def __len__(self):
            return self.claimed

        def __iter__(self):
            return iter(names)

    for claimed in (0, 1, 4096, 5000, 10_000, 20_000):
        assert list(isdb.get_ids_array(Claims(claimed))) == expected
    assert list(isdb.get_ids_array(iter(names))) == expected
    assert list(isdb.get_ids_array(n for n in names)) == expected
    assert list(isdb.get_ids_array(tuple(names))) == expected


def test_get_ids_array_stops_at_an_error_midway():
    names = [f"span/{i}" for i in range(5000)] + [7]
    with pytest.raises(TypeError, match="str or bytes"):
        isdb.get_ids_array(names)


def test_get_ids_takes_any_iterable():
    assert isdb.get_ids(iter(["a"])) == [KNOWN["a"]]
    assert isdb.get_ids(("a", b"model")) == [KNOWN["a"], KNOWN["model"]]
    assert isdb.get_ids(n for n in ["a"]) == [KNOWN["a"]]
    assert isdb.get_ids([]) == []


@pytest.mark.parametrize("bad", [1, None, 1.5, bytearray(b"a"), ["a"]])
def test_a_name_that_is_not_str_or_bytes_is_a_type_error(bad):
    with pytest.raises(TypeError, match="str or bytes"):
        isdb.get_id(bad)
    with pytest.raises(TypeError, match="str or bytes"):
        isdb.get_ids(["a", bad])


def test_get_ids_of_a_non_iterable_is_a_type_error():
    with pytest.raises(TypeError):
        isdb.get_ids(5)


def test_a_lone_surrogate_has_no_utf8_and_is_a_value_error():
    with pytest.raises(ValueError):
        isdb.get_id("\udcff")
    with pytest.raises(ValueError):
        isdb.get_ids(["a", "\udcff"])


def test_an_iterable_that_raises_propagates_its_error():
    def names():
        yield "a"
        raise RuntimeError("emitter broke")

    with pytest.raises(RuntimeError, match="emitter broke"):
        isdb.get_ids(names())


def test_an_iterable_whose_len_lies_is_read_for_what_it_holds():
    class Liar:
        def __len__(self):
            return 2**62

        def __iter__(self):
            return iter(["a", "model"])

    assert isdb.get_ids(Liar()) == [KNOWN["a"], KNOWN["model"]]
    assert list(isdb.get_ids_array(Liar())) == [KNOWN["a"], KNOWN["model"]]
    assert isdb.Interner(ncs=1).intern_batch(0, Liar()) == [KNOWN["a"], KNOWN["model"]]
