#!/usr/bin/env bash
# The hit and miss matrix at 1, 2, 4, ... threads up to this host's CPU count
# (nproc), threads pinned, every subject: what a user with a 64- or 256-core
# host runs to check the scaling claims (docs/benchmarks.md, "Many cores").
# Writes perf/results/manycore-<cpus>/: contention.csv, summary.md and one
# chart per workload, vocabulary and placement.
#
# It asks the harness for the plan's cell count (`--plan`), then picks the
# runs per cell and the seconds per run so that the runs and an allowance for
# set-up and warming fit in BUDGET_S (default 420 s, 7 of the 8 minutes),
# and prints the estimate before it starts. The build comes before and is
# not counted.
#
#   perf/manycore.sh                          # the matrix
#   perf/manycore.sh --corpus target/corpus/symbols.txt   # options pass through
#   BUDGET_S=240 perf/manycore.sh             # a tighter budget
#   DURATION=0.01 REPS=1 perf/manycore.sh     # fixed settings (a smoke test)
set -euo pipefail
cd "$(dirname "$0")/.."

cpus=$(nproc)
threads=""
for ((t = 1; t < cpus; t *= 2)); do threads+="$t,"; done
threads+="$cpus"
out=perf/results/manycore-$cpus
budget=${BUDGET_S:-420}
# Seconds per cell run beyond its timed window: building the subject,
# warming it (up to 256 NCs of 10^4 names in own-nc), spawning the threads.
setup=${SETUP_S:-0.1}
miss_budget=${MISS_BUDGET:-1000000}

cargo build --release -p perf
harness=target/release/contention
common=(--threads "$threads" --pin --miss-budget "$miss_budget" --out "$out" "$@")

cells=$("$harness" "${common[@]}" --duration 1 --reps 1 --plan |
    sed -n 's/^plan: \([0-9]*\) cells.*/\1/p')
[ -n "$cells" ] || { echo "manycore.sh: the harness printed no plan" >&2; exit 1; }

if [ -n "${DURATION:-}" ]; then
    duration=$DURATION
    reps=${REPS:-1}
else
    # Three runs a cell (the median is reported) when each can still last
    # 0.1 s, else one; at most 0.25 s a run (the harness's default).
    read -r reps duration < <(awk -v c="$cells" -v b="$budget" -v s="$setup" 'BEGIN {
        for (r = 3; r >= 1; r -= 2) {
            d = b / (c * r) - s
            if (d > 0.25) d = 0.25
            if (d >= 0.1 || r == 1) { if (d < 0.02) d = 0.02; printf "%d %.3f\n", r, d; exit }
        }
    }')
fi
estimate=$(awk -v c="$cells" -v r="$reps" -v d="$duration" -v s="$setup" \
    'BEGIN { printf "%.0f", c * r * (d + s) }')
echo "manycore: $cpus CPUs, threads $threads, pinned; $cells cells × $reps run(s) × ($duration s + ~$setup s set-up) ≈ $estimate s ($(( (estimate + 59) / 60 )) min; budget $budget s); writing $out/"

start=$(date +%s)
"$harness" "${common[@]}" --duration "$duration" --reps "$reps"
echo "manycore: measured in $(( $(date +%s) - start )) s (estimated $estimate s)"
