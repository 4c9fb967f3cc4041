#!/usr/bin/env bash
# Long fuzzing runs, outside CI: each target for RUNS executions (default
# 10^7) from its committed corpus in fuzz/corpus/<target>, then the corpus
# minimized (`cargo fuzz cmin`) in place, so that it can be committed and
# CI replays it (.ci/fuzz.sh). Prints each target's executions and corpus
# size; a crash stops the script with the input under fuzz/artifacts/.
#
#   fuzz/long.sh                    # every target, 10^7 executions each
#   RUNS=1000000 fuzz/long.sh c_abi # one target, fewer
#   SANITIZER=none fuzz/long.sh     # no ASan: 2-4x the executions per second
#   CMIN=0 SEED=2 fuzz/long.sh ops_model  # a second process on one corpus:
#                                   # skip cmin, and a seed of its own
#   TRACE_COMPARES=0 fuzz/long.sh   # no comparison tracing: about 2x the
#                                   # executions of a comparison-heavy target
#   MAX_LEN=4096 fuzz/long.sh ops_model  # shorter inputs (default 65536)
#
# Uses the nightly CI pins (NIGHTLY, default isdb-nightly-2026-05-19).
set -euo pipefail
cd "$(dirname "$0")/.."
nightly="${NIGHTLY:-isdb-nightly-2026-05-19}"
runs="${RUNS:-10000000}"
sanitizer="${SANITIZER:-address}"
seed="${SEED:-0}"
max_len="${MAX_LEN:-65536}"
build=(-s "$sanitizer")
[ "${TRACE_COMPARES:-1}" = 1 ] || build+=(--no-trace-compares)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(c_abi ops_model snapshot_file)
mkdir -p target/fuzz-logs
for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    log="target/fuzz-logs/$target-$sanitizer-$seed.log"
    echo "== $target: $runs executions from $(ls "$corpus" | wc -l) inputs ($log)"
    cargo +"$nightly" fuzz run "${build[@]}" "$target" "$corpus" -- \
        -runs="$runs" -seed="$seed" -max_len="$max_len" -print_final_stats=1 >"$log" 2>&1 \
        || { tail -n 30 "$log"; exit 1; }
    grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$log"
    [ "${CMIN:-1}" = 1 ] || continue
    cargo +"$nightly" fuzz cmin "${build[@]}" "$target" "$corpus" -- -max_len="$max_len" \
        >"target/fuzz-logs/$target.cmin.log" 2>&1
    echo "$target corpus: $(ls "$corpus" | wc -l) inputs, $(du -sh "$corpus" | cut -f1)"
done
