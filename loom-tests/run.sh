#!/usr/bin/env bash
# Runs the loom models of interned-string-db.
#
#   loom-tests/run.sh                       # CI's bounds: 2 preemptions
#   LOOM_MAX_PREEMPTIONS=3 loom-tests/run.sh  # deeper (minutes to hours)
#   LOOM_MAX_PREEMPTIONS=  loom-tests/run.sh  # unbounded: exhaustive, very slow
#   loom-tests/run.sh optimistic_hit        # the models whose name has this
#
# On a failure, rerun the one model (its whole name as the filter) with
# LOOM_CHECKPOINT_FILE=f.json LOOM_LOG=trace to reproduce it.
#
# Each model runs as a process of its own, one more at a time than the
# machine has CPUs (LOOM_JOBS to choose), each printing its seconds: loom
# maps and unmaps a stack for each thread of each iteration, and two test
# threads of one process wait on each other's unmaps (two models side by
# side took 341 s as one process's two threads, 155 and 162 s as two
# processes: the 2-CPU AMD EPYC VM, 2026-12-07; docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -le 1 ] || { echo "usage: $0 [part of a model's name]" >&2; exit 2; }
filter="${1:-}"
jobs="${LOOM_JOBS:-$(($(nproc) + 1))}"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "LOOM_JOBS must be a positive number" >&2; exit 2; }
export RUSTFLAGS="${RUSTFLAGS:-} --cfg interner_loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS-2}"
[ -n "$LOOM_MAX_PREEMPTIONS" ] || unset LOOM_MAX_PREEMPTIONS
# A separate target dir, so the loom build does not evict the normal one.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
logs="$CARGO_TARGET_DIR/models"
rm -rf "$logs" && mkdir -p "$logs"

build=(cargo test --release -p loom-tests --test models --test lock_free --no-run)
"${build[@]}"
mapfile -t binaries < <("${build[@]}" --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
[ "${#binaries[@]}" = 2 ] || { echo "expected the two loom test binaries" >&2; exit 1; }

# Every binary's models, each as `binary<TAB>model`; a binary that lists
# none fails the run.
models=()
for binary in "${binaries[@]}"; do
    listed="$("$binary" --list --format=terse)"
    names="$(sed -n 's/: test$//p' <<<"$listed")"
    [ -n "$names" ] || { echo "$binary lists no model" >&2; exit 1; }
    while IFS= read -r model; do
        if [[ "$model" == *"$filter"* ]]; then
            models+=("$binary"$'\t'"$model")
        fi
    done <<<"$names"
done
[ "${#models[@]}" -gt 0 ] || { echo "no model's name has '$filter'" >&2; exit 1; }

# Interrupted, the running models stop too (each runs in its own process
# group: `set -m`).
set -m
trap 'jobs -p | while read -r group; do kill -- "-$group" 2>/dev/null || true; done' EXIT
trap 'exit 130' INT TERM

# One model: its output kept in its log, printed if it fails.
run_model() {
    local binary="$1" model="$2" start=$SECONDS
    local log="$logs/$(basename "$binary" | cut -d- -f1)-${model//::/-}.log"
    if "$binary" --exact "$model" --test-threads=1 >"$log" 2>&1; then
        printf 'ok      %4d s  %s\n' $((SECONDS - start)) "$model"
    else
        printf 'FAILED  %4d s  %s\n' $((SECONDS - start)) "$model"
        cat "$log"
        return 1
    fi
}

status=0
running=0
start=$SECONDS
for entry in "${models[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || status=1
        running=$((running - 1))
    fi
    run_model "${entry%%$'\t'*}" "${entry#*$'\t'}" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || status=1
    running=$((running - 1))
done
if [ "$status" = 0 ]; then
    echo "${#models[@]} models passed in $((SECONDS - start)) s ($jobs at a time)"
else
    echo "a model failed (above; ${#models[@]} run)" >&2
fi
exit "$status"
