"""What the engine scripts of the offline-analysis check share (run by
cli/tests/offline.rs; docs/offline-analysis.md is what they check): the
interner's id computed independently of the Rust code, the trace's events,
the doc's SQL for one engine, and the check of what that SQL returned.
"""

import re
import sys

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


assert get_id(b"a") == 933183196555764, "this SipHash is not the interner's"

# The trace's first event, in nanoseconds (an arbitrary instant in 2023).
FIRST_TIMESTAMP = 1_700_000_000_000_000_000


def load_events(path):
    """The trace: one event per line of PATH, as (timestamp, id, duration,
    name). A line is a name, whose id is computed here, or `name<TAB>id`
    for a caller-supplied id. Ids are unsigned 64-bit."""
    events = []
    with open(path, "rb") as f:
        for seq, line in enumerate(l for l in f.read().split(b"\n") if l):
            name, _, caller_id = line.partition(b"\t")
            id_ = int(caller_id) if caller_id else get_id(name)
            timestamp = FIRST_TIMESTAMP + 1_000 * seq
            events.append((timestamp, id_, seq % 97 + 1, name.decode()))
    return events


def as_signed(id_):
    """ID's 64 bits as a signed BIGINT, as a runtime without unsigned
    integers (a JVM's long) writes them."""
    return id_ - (1 << 64) if id_ >= 1 << 63 else id_


def doc_sql(doc, engine):
    """The statements of the first ```sql block under DOC's heading
    `## <n>. <engine>`, in order, comments kept."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    heading = re.search(rf"^## (\d+\. )?{re.escape(engine)}$", text, re.M)
    if heading is None:
        sys.exit(f"{doc}: no heading '## {engine}'")
    block = re.search(r"^```sql\n(.*?)^```$", text[heading.end() :], re.M | re.S)
    if block is None:
        sys.exit(f"{doc}: no ```sql block under '## {engine}'")
    statements = [s.strip() for s in re.split(r";\s*$", block.group(1), flags=re.M)]
    return [s for s in statements if s]


def is_query(statement):
    """Whether STATEMENT (comment lines aside) is a SELECT, which returns
    rows."""
    code = [l for l in statement.splitlines() if not l.lstrip().startswith("--")]
    return " ".join(code).lstrip().upper().startswith("SELECT")


def run_doc_sql(doc, engine, events, run):
    """Runs the statements of DOC's SQL block for ENGINE in order, each by
    RUN(statement), which returns the statement's rows, and checks the rows
    of its two queries, the join and the conflicts, with report()."""
    results = []
    for statement in doc_sql(doc, engine):
        rows = run(statement)
        if is_query(statement):
            results.append(rows)
    joined, conflicts = results
    report(events, joined, conflicts)


def report(events, joined, conflicts):
    """Checks the doc's two queries' rows against the trace, and prints
    `joined <n>` and one `conflict <id> <names>` line per conflicting id
    (ids unsigned, names sorted); exits non-zero if an event joined to a
    wrong name, to none, or to more than one.

    JOINED: (timestamp, name, duration) rows; CONFLICTS: (id, count, names)
    rows."""
    expected = sorted((t, name, d) for t, _, d, name in events)
    got = sorted((int(t), name, int(d)) for t, name, d in joined)
    if got != expected:
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        print(
            f"{len(got)} rows joined for {len(expected)} events; "
            f"missing {missing[:5]}, unexpected {extra[:5]}",
            file=sys.stderr,
        )
        sys.exit(1)
    print(f"joined {len(got)}")
    for id_, count, names in sorted((int(i) & MASK64, c, n) for i, c, n in conflicts):
        assert count == len(names), (id_, count, names)
        print(f"conflict {id_} {' | '.join(sorted(names))}")
