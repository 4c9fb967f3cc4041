"""Deterministic 50-bit string ids and snapshot dictionaries of interned-string-db.

An id is ``(SipHash-1-3(key 0, bytes ++ [0xFF]) & (2**50 - 1)) + 1``: a pure
function of a name's bytes (a ``str`` by its UTF-8 encoding), the same in every
process and in the Rust crate. Snapshot files map ids back to names.
"""

import array
import os
import pathlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Literal, TypeVar, overload

if TYPE_CHECKING:
    import pyarrow

_T = TypeVar("_T")
Name = str | bytes
StrPath = str | os.PathLike[str]
Conflict = tuple[int, bytes, bytes]
"""``(id, kept, rejected)``: two names under one id; the first is kept."""

INVALID_ID: int
"""``0``: no name's id."""
MAX_ID: int
"""``2**50``: the largest id."""

def get_id(name: Name, /) -> int:
    """The id of ``name``, bit for bit the crate's ``get_id``.

    Raises ``TypeError`` for anything but ``str`` or ``bytes``, and
    ``UnicodeEncodeError`` (a ``ValueError``) for a ``str`` with a lone surrogate.
    """

def get_ids(names: Iterable[Name], /) -> list[int]:
    """The ids of ``names``, in order, in one call (hashed with the GIL released)."""

def get_ids_array(names: Iterable[Name], /) -> array.array[int]:
    """As ``get_ids``, in an ``array.array('Q')``: no ``int`` object per id.

    ``numpy.frombuffer(a, dtype=numpy.uint64)`` reads it without a copy.
    """

def merge(paths: Iterable[StrPath], out: StrPath) -> list[Conflict]:
    """Merges the snapshot files ``paths`` into ``out`` (as ``stringdb merge``).

    The union of their entries, written atomically; ``out`` must be absent or a
    regular file. Returns the merged snapshot's conflicts. Raises ``ValueError``
    for no input or an invalid file, ``OSError`` for a file that cannot be read
    or written.
    """

class Dictionary:
    """A snapshot file mapped into memory and read in place.

    Names are ``str``; a name that is not UTF-8 raises ``UnicodeDecodeError``
    where a ``str`` is asked for, and ``get_bytes`` returns it as ``bytes``.
    The file must not be truncated or written in place while open.
    """

    @staticmethod
    def open(path: StrPath) -> Dictionary:
        """Maps the snapshot file at ``path`` and checks its header.

        Raises ``OSError`` (``FileNotFoundError``, ...) when it cannot be
        opened or is not a regular file, ``ValueError`` when it is not a valid
        snapshot file.
        """
    @property
    def path(self) -> pathlib.Path:
        """The path it was opened from."""
    @property
    def version(self) -> int:
        """The file's format version (1 or 2)."""
    @property
    def conflicts_dropped(self) -> int:
        """Conflicts the file counts but does not store."""
    def __len__(self) -> int: ...
    def __contains__(self, id: int, /) -> bool: ...
    def __getitem__(self, id: int, /) -> str:
        """The name of ``id``; ``KeyError`` if the file does not hold it."""
    def __iter__(self) -> Iterator[int]:
        """The ids in increasing order."""
    @overload
    def get(self, id: int, default: None = None) -> str | None: ...
    @overload
    def get(self, id: int, default: _T) -> str | _T: ...
    @overload
    def get_bytes(self, id: int, default: None = None) -> bytes | None: ...
    @overload
    def get_bytes(self, id: int, default: _T) -> bytes | _T: ...
    def ids(self) -> list[int]:
        """The ids in increasing order."""
    @overload
    def items(self, *, as_bytes: Literal[False] = False) -> list[tuple[int, str]]: ...
    @overload
    def items(self, *, as_bytes: Literal[True]) -> list[tuple[int, bytes]]: ...
    def conflicts(self) -> list[Conflict]:
        """The stored conflicts."""
    def verify(self) -> None:
        """Checks the whole file (records, checksums, conflicts); ``ValueError`` if bad."""
    def to_arrow(self, *, lossy: bool = False) -> pyarrow.Table:
        """A table ``id: uint64``, ``name: string`` in id order (imports pyarrow).

        A name that is not UTF-8 raises ``UnicodeDecodeError`` unless
        ``lossy=True``, which replaces its invalid bytes with U+FFFD.
        """

class Cursor:
    """Where a series of ``Interner.delta`` calls stands."""

    def __init__(self) -> None: ...
    @property
    def delivered(self) -> int:
        """How many entries its deltas have delivered."""

class Interner:
    """A concurrent interner with one shard per NeuronCore (NC)."""

    def __init__(
        self,
        ncs: int = 256,
        *,
        byte_cap: int | None = None,
        initial_capacity: int | None = None,
        conflict_budget: int | None = None,
    ) -> None:
        """``ValueError`` for zero NCs or a configuration the machine cannot hold."""
    @property
    def ncs(self) -> int: ...
    def __len__(self) -> int:
        """Entries across the shards (an id in two NCs counts twice)."""
    def intern(self, nc: int, name: Name) -> int:
        """Interns ``name`` in NC ``nc``; returns ``get_id(name)``.

        ``ValueError`` for an empty name, an NC out of range or closed, or a
        full shard; ``TypeError`` for a name that is not ``str`` or ``bytes``.
        """
    def intern_batch(self, nc: int, names: Iterable[Name]) -> list[int]:
        """Interns ``names`` in NC ``nc``; their ids in order.

        A refused name raises ``ValueError`` naming its position; the names
        before it are interned.
        """
    def snapshot(self) -> dict[int, str | bytes]:
        """Every open NC's entries: a name is ``str`` if UTF-8, else ``bytes``."""
    def delta(self, cursor: Cursor) -> dict[int, str | bytes]:
        """The entries no earlier delta of ``cursor`` delivered; advances it."""
    def conflicts(self) -> list[Conflict]: ...
    def save(self, path: StrPath) -> list[Conflict]:
        """Writes a snapshot file atomically (``Dictionary.open`` reads it)."""
