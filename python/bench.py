"""Figures for docs/benchmarks.md: the Python bindings beside the same work in Rust.

Run from a release build (``pip install ./python``): ``python3 python/bench.py``.
Each figure is the best of a few runs; nothing is asserted.
"""

import os
import sys
import tempfile
import time
import timeit

import interned_string_db as isdb
from interned_string_db import interned_string_db as native

N = 1_000_000
RUNS = 3
NAME = "model_3/layer_41/tensor_1207"


def best(f):
    """The fastest of RUNS calls of f, in seconds."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    names = [f"model_{i % 16}/layer_{i % 97}/tensor_{i}" for i in range(N)]
    mean_len = sum(map(len, names)) / N
    print(f"{N} names of {mean_len:.1f} bytes on average; Python {sys.version.split()[0]}")

    python = best(lambda: isdb.get_ids(names))
    array = best(lambda: isdb.get_ids_array(names))
    rust = min(native._rust_get_ids_seconds(names) for _ in range(RUNS))
    print(f"get_ids(names):               {python * 1e3:7.1f} ms ({python / N * 1e9:5.1f} ns/name)")
    print(f"the same loop in Rust:        {rust * 1e3:7.1f} ms ({rust / N * 1e9:5.1f} ns/name)"
          f"  -> {python / rust:.2f}x")
    print(f"get_ids_array(names):         {array * 1e3:7.1f} ms ({array / N * 1e9:5.1f} ns/name)"
          f"  -> {array / rust:.2f}x")
    ints = best(lambda: list(range(2**49, 2**49 + N)))
    print(f"list(range(2**49, +{N})):  {ints * 1e3:7.1f} ms (the ints of a list[int] alone)")

    calls = 1_000_000
    get_id = min(timeit.repeat("get_id(s)", globals={"get_id": isdb.get_id, "s": NAME},
                               number=calls, repeat=RUNS)) / calls
    empty = min(timeit.repeat("len(s)", globals={"s": NAME}, number=calls, repeat=RUNS)) / calls
    print(f"get_id(name) per call:        {get_id * 1e9:7.1f} ns")
    print(f"len(name) per call (a no-op): {empty * 1e9:7.1f} ns")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.isdb")
        interner = isdb.Interner(ncs=1)
        interner.intern_batch(0, names)
        interner.save(path)
        size = os.path.getsize(path)
        d = isdb.Dictionary.open(path)
        arrow = best(lambda: isdb.Dictionary.open(path).to_arrow())
        load = min(native._rust_load_seconds(path) for _ in range(RUNS))
        print(f"Dictionary.open + to_arrow(): {arrow * 1e3:7.1f} ms ({len(d)} entries, "
              f"{size / 2**20:.1f} MiB file)")
        print(f"Snapshot::load in Rust:       {load * 1e3:7.1f} ms  -> {arrow / load:.2f}x")


if __name__ == "__main__":
    main()
