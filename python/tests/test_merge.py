"""merge: snapshot files merged into one, as `stringdb merge` does."""

import pytest

import interned_string_db as isdb
from conftest import CONFLICT, DATA, KNOWN


def save(path, nc_names):
    interner = isdb.Interner(ncs=1)
    interner.intern_batch(0, nc_names)
    interner.save(path)
    return path


def test_merge_is_the_union_and_reports_the_conflicts(tmp_path):
    host_a = save(tmp_path / "a.isdb", ["a", "shared"])
    host_b = save(tmp_path / "b.isdb", ["model", "shared"])
    out = tmp_path / "merged.isdb"
    conflicts = isdb.merge([host_a, host_b, DATA / "rust_v2.isdb"], out)
    # The Rust file's own conflict is reported, as `stringdb merge` does.
    assert conflicts == [CONFLICT]
    d = isdb.Dictionary.open(out)
    d.verify()
    assert d[isdb.get_id("shared")] == "shared"
    assert d[KNOWN["model"]] == "model"
    assert len(d) == 6 + 1


def test_merge_of_the_same_snapshot_in_both_versions_is_that_snapshot(tmp_path):
    out = tmp_path / "merged.isdb"
    conflicts = isdb.merge([str(DATA / "rust_v1.isdb"), str(DATA / "rust_v2.isdb")], str(out))
    assert conflicts == [CONFLICT]
    assert isdb.Dictionary.open(out).ids() == isdb.Dictionary.open(DATA / "rust_v2.isdb").ids()


def test_merge_of_nothing_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="at least one"):
        isdb.merge([], tmp_path / "out.isdb")


def test_merge_of_a_missing_or_bad_input_writes_nothing(tmp_path):
    out = tmp_path / "out.isdb"
    with pytest.raises(FileNotFoundError, match="missing.isdb"):
        isdb.merge([DATA / "rust_v2.isdb", tmp_path / "missing.isdb"], out)
    junk = tmp_path / "junk.isdb"
    junk.write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.isdb"):
        isdb.merge([junk], out)
    assert not out.exists()


def test_merge_never_replaces_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        isdb.merge([DATA / "rust_v2.isdb"], tmp_path)


def test_merge_paths_of_the_wrong_type_are_a_type_error(tmp_path):
    with pytest.raises(TypeError):
        isdb.merge([1], tmp_path / "out.isdb")
