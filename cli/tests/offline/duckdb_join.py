"""The offline-analysis check (docs/offline-analysis.md), run by
cli/tests/duckdb.rs: trace events whose ids are computed here, independently
of the Rust code, join in DuckDB to the names in Parquet dictionaries exported
from several hosts, and cross-host conflicts are found with GROUP BY.

Usage: duckdb_join.py EVENT_NAMES_FILE DICTIONARY_GLOB
Prints `joined <n>` and one `conflict <id> <names>` line per conflicting id;
exits non-zero if any event joins to a wrong name or to none.
"""

import sys

import duckdb

MASK64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK64


def siphash13(data, k0=0, k1=0):
    """SipHash-1-3, as std's DefaultHasher computes it, from the paper."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def sip_round(v0, v1, v2, v3):
        v0 = (v0 + v1) & MASK64
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & MASK64
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & MASK64
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & MASK64
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    whole = len(data) // 8 * 8
    for at in range(0, whole, 8):
        m = int.from_bytes(data[at : at + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
        v0 ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(3):
        v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def get_id(name):
    """The interner's id: SipHash-1-3 of the bytes and a 0xFF terminator,
    50 bits, plus one."""
    return (siphash13(name + b"\xff") & ((1 << 50) - 1)) + 1


def main():
    events_file, dictionaries = sys.argv[1], sys.argv[2]
    assert get_id(b"a") == 933183196555764, "this SipHash is not the interner's"
    with open(events_file, "rb") as f:
        names = [line.rstrip(b"\n") for line in f if line.strip()]
    db = duckdb.connect()
    # The trace: events that carry only ids.
    db.execute("CREATE TABLE events (seq BIGINT, id UBIGINT, expected VARCHAR)")
    db.executemany(
        "INSERT INTO events VALUES (?, ?, ?)",
        [(seq, get_id(n), n.decode()) for seq, n in enumerate(names)],
    )
    db.execute(
        f"CREATE VIEW dictionary AS SELECT * FROM read_parquet('{dictionaries}')"
    )
    # Every event resolves to its own name, through dictionaries from any host.
    rows = db.execute(
        """
        SELECT e.seq, e.expected, d.name
        FROM events e LEFT JOIN (SELECT DISTINCT id, name FROM dictionary) d USING (id)
        ORDER BY e.seq
        """
    ).fetchall()
    wrong = [r for r in rows if r[2] != r[1]]
    if wrong:
        # A missing name, or a conflicting id joining to a second name.
        print(f"events that do not join to their name: {wrong[:5]}", file=sys.stderr)
        sys.exit(1)
    print(f"joined {len(rows)}")
    # Cross-host conflicts: one id, several names.
    for id_, names_ in db.execute(
        """
        SELECT id, list(DISTINCT name ORDER BY name)
        FROM dictionary GROUP BY id HAVING count(DISTINCT name) > 1 ORDER BY id
        """
    ).fetchall():
        print(f"conflict {id_} {' | '.join(names_)}")


if __name__ == "__main__":
    main()
