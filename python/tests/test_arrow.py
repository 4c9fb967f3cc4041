"""Dictionary.to_arrow (skipped without pyarrow)."""

import pytest

import interned_string_db as isdb
from conftest import DATA, KNOWN, NOT_UTF8, NOT_UTF8_ID

pa = pytest.importorskip("pyarrow")


def test_to_arrow_has_the_schema_and_the_entries_in_id_order():
    d = isdb.Dictionary.open(DATA / "rust_v2.isdb")
    table = d.to_arrow(lossy=True)
    assert table.schema == pa.schema(
        [pa.field("id", pa.uint64(), nullable=False), pa.field("name", pa.string(), nullable=False)]
    )
    table.validate(full=True)
    rows = dict(zip(table["id"].to_pylist(), table["name"].to_pylist()))
    assert table["id"].to_pylist() == d.ids()
    for name, id_ in KNOWN.items():
        assert rows[id_] == name
    assert rows[NOT_UTF8_ID] == NOT_UTF8.decode("utf-8", errors="replace")


def test_to_arrow_refuses_a_name_that_is_not_utf8_unless_lossy():
    d = isdb.Dictionary.open(DATA / "rust_v1.isdb")
    with pytest.raises(UnicodeDecodeError, match=str(NOT_UTF8_ID)):
        d.to_arrow()


def test_to_arrow_of_many_and_of_none(tmp_path):
    interner = isdb.Interner(ncs=1)
    names = [f"model_{i % 7}/layer_{i}/tensor_{i * 31}" for i in range(50_000)]
    interner.intern_batch(0, names)
    interner.save(tmp_path / "many.isdb")
    table = isdb.Dictionary.open(tmp_path / "many.isdb").to_arrow()
    table.validate(full=True)
    assert table.num_rows == len(names)
    assert dict(zip(table["id"].to_pylist(), table["name"].to_pylist())) == dict(
        zip(isdb.get_ids(names), names)
    )
    isdb.Interner(ncs=1).save(tmp_path / "none.isdb")
    empty = isdb.Dictionary.open(tmp_path / "none.isdb").to_arrow()
    assert empty.num_rows == 0 and empty.column_names == ["id", "name"]
