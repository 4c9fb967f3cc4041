"""Fixtures shared by the tests: the snapshot files the Rust side wrote."""

import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data"

# The reference's known ids (tests/get_id.rs), all in the Rust-written files.
KNOWN = {
    "a": 933183196555764,
    "model": 402710577667408,
    "tensor_0": 635820126496557,
    "Invalid interned string": 162418631006079,
    "héllo": 588180410841216,
}
# A name that is not UTF-8, in the files too.
NOT_UTF8 = b"bad\xff\xfeutf8"
NOT_UTF8_ID = 424730486554831
# The files' one conflict: b"not a" refused under the id of "a".
CONFLICT = (933183196555764, b"a", b"not a")


@pytest.fixture(params=["rust_v1.isdb", "rust_v2.isdb"])
def rust_file(request):
    """Each snapshot file written by Rust (format versions 1 and 2)."""
    return DATA / request.param
