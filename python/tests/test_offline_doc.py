"""The "From Python" block of docs/offline-analysis.md, run as it stands."""

import pathlib
import re

import pytest

import interned_string_db as isdb
from conftest import DATA

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas")
pytest.importorskip("duckdb")

DOC = pathlib.Path(__file__).parents[2] / "docs" / "offline-analysis.md"


def doc_block():
    """The ```python block under the doc's "From Python" heading."""
    section = DOC.read_text().split("## 5. From Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_python_block_joins_every_event_to_its_name(tmp_path, monkeypatch):
    host1 = [f"model_3/layer_{i}/tensor_{i * 7}" for i in range(100)]
    host2 = ["model_3/layer_41/tensor_1207", *host1[:50]]
    for path, hosts_names in (("host1.isdb", host1), ("host2.isdb", host2)):
        interner = isdb.Interner(ncs=1)
        interner.intern_batch(0, hosts_names)
        interner.save(tmp_path / path)
    events_names = host2 + host1[50:]
    (tmp_path / "trace").mkdir()
    pq.write_table(
        pa.table(
            {
                "timestamp": pa.array(range(len(events_names)), pa.int64()),
                "id": pa.array(isdb.get_ids(events_names), pa.uint64()),
                "duration": pa.array([3] * len(events_names), pa.int64()),
            }
        ),
        tmp_path / "trace" / "events.parquet",
    )
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(doc_block(), str(DOC), "exec"), scope)
    assert scope["conflicts"] == []
    assert len(scope["fleet"]) == 101
    for joined in (scope["joined"], scope["joined_sql"]):
        assert list(joined["name"]) == events_names
        assert list(joined["timestamp"]) == list(range(len(events_names)))


def test_a_conflict_and_a_name_that_is_not_utf8_reach_python(tmp_path):
    out = tmp_path / "fleet.isdb"
    conflicts = isdb.merge([DATA / "rust_v2.isdb"], out)
    assert len(conflicts) == 1
    with pytest.raises(UnicodeDecodeError):
        isdb.Dictionary.open(out).to_arrow()
    assert isdb.Dictionary.open(out).to_arrow(lossy=True).num_rows == 6
