#!/usr/bin/env bash
# Proves the loom models have teeth: for every memory-ordering site in
# src/raw/*.rs, src/raw/optimistic/*.rs, its table/*.rs, its log/append.rs and its shard's reads.rs and write.rs (each `Ordering::Release`, `Acquire`, `AcqRel` or `SeqCst`),
# builds a copy of the tree with only that site weakened to `Relaxed`, runs
# the loom models on it, and reports whether a model failed (the mutant was
# caught). Exits non-zero if any mutant survives, or if the unmutated models
# fail.
#
#   loom-tests/mutants.sh                # CI's bounds: 2 preemptions
#   loom-tests/mutants.sh optimistic     # the same (the default)
#   loom-tests/mutants.sh lock_free      # src/raw/lock_free/*.rs against
#                                        # the models in tests/lock_free.rs
#   MUTANTS_DIR=/tmp/m loom-tests/mutants.sh
#
# The argument is a module of src/raw/ that a strategy's protocol lives in
# (`Strategy::RAW_MODULE`): verify.sh runs one set per such module, as
# `cargo run --example strategies -- --raw` lists them.
#
# The copy lives in $MUTANTS_DIR (default: a directory under $TMPDIR or
# /tmp); the worktree's files are never modified. Models run one at a time, cheapest
# first, and a mutant's run stops at its first failing model.
set -euo pipefail
# The sites (a glob under the repository) and the test target that models
# them, per module: the optimistic shard's by default. A strategy's new
# module of src/raw/ needs its line here, or verify.sh stops at it.
case "${1:-optimistic}" in
    optimistic) sites='src/raw/*.rs src/raw/optimistic/*.rs src/raw/optimistic/table/*.rs src/raw/optimistic/log/append.rs src/raw/optimistic/shard/reads.rs src/raw/optimistic/shard/write.rs' target=models ;;
    lock_free) sites='src/raw/lock_free/*.rs' target=lock_free ;;
    *) echo "usage: $0 [optimistic|lock_free]: no sites or models for module '$1'" >&2; exit 2 ;;
esac
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${MUTANTS_DIR:-${TMPDIR:-/tmp}/interned-string-db-loom-mutants}/$target"
tree="$work/tree"
# Beside run.sh's build, whose dependencies it reuses (the copy's own crates
# build apart: they live at another path).
export CARGO_TARGET_DIR="${MUTANTS_TARGET_DIR:-$repo/target/loom}"
export RUSTFLAGS="${RUSTFLAGS:-} --cfg interner_loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS-2}"
# Only the crate changes between mutants: rebuild it incrementally.
export CARGO_PROFILE_RELEASE_INCREMENTAL=true
started=$SECONDS

# A fresh copy of the worktree's files (tracked and new, not ignored),
# with fresh times: a build left by an earlier run must not look current.
rm -rf "$tree"
mkdir -p "$tree"
# One tar reads the whole list (xargs would split a long one over several
# tars, whose concatenated archives the extracting tar stops reading at the
# first end-of-archive).
(cd "$repo" && git ls-files -z --cached --others --exclude-standard \
    | tar --null -T - -cf -) | tar -C "$tree" -xmf -

build() {
    (cd "$tree" && cargo test --release -p loom-tests --test "$target" --no-run \
        --message-format=json 2>"$work/build.log") \
        | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
}

# Runs the models of the binary $1, each in its own process, until one
# fails; prints the failing model's name, or nothing.
first_failure() {
    local bin=$1 model
    for model in $models; do
        if ! "$bin" --exact "$model" --test-threads=1 >"$work/run.log" 2>&1; then
            echo "$model"
            return
        fi
    done
}

# Why the failing model failed: its first panic message, or its signal.
failure_message() {
    local message
    message="$(sed -n '/panicked at/{n;p;q}' "$work/run.log")"
    if [ -z "$message" ]; then
        message="$(grep -o 'signal: [0-9]*.*' "$work/run.log" | head -n 1)"
    fi
    echo "${message:-no message}"
}

bin="$(build)" || { cat "$work/build.log"; exit 1; }
[ -n "$bin" ] || { cat "$work/build.log"; exit 1; }
# The unmutated models must pass; timed, so that mutants run the cheapest
# first and a caught one stops early.
timed=""
for model in $("$bin" --list 2>/dev/null | sed -n 's/: test$//p'); do
    t0=$(date +%s%N)
    if ! "$bin" --exact "$model" --test-threads=1 >"$work/run.log" 2>&1; then
        cat "$work/run.log"
        echo "the unmutated model $model fails" >&2
        exit 1
    fi
    timed+="$(( ($(date +%s%N) - t0) / 1000000 )) $model"$'\n'
done
models="$(sort -n <<<"$timed" | awk 'NF { print $2 }')"
printf 'unmutated: every model passes (%d s with the build)\n\n' $((SECONDS - started))

printf '%-21s %-16s %-8s %-9s %s\n' site function ordering result "first failing model: why (time)"
survived=0
total=0
while IFS=: read -r file line _; do
    text="$(sed -n "${line}p" "$repo/$file")"
    for ordering in Release Acquire AcqRel SeqCst; do
        case "$text" in *"Ordering::$ordering"*) break ;; esac
    done
    if [ "$(grep -o 'Ordering::' <<<"$text" | wc -l)" -ne 1 ]; then
        echo "$file:$line holds more than one ordering; split it" >&2
        exit 1
    fi
    # The enclosing function: the last `fn` declared above the site.
    function="$(head -n "$line" "$repo/$file" | sed -n 's/.*\bfn \([a-z_0-9]*\).*/\1/p' | tail -n 1)"
    total=$((total + 1))
    t0=$SECONDS
    sed "${line}s/Ordering::$ordering/Ordering::Relaxed/" "$repo/$file" >"$tree/$file"
    if bin="$(build)" && [ -n "$bin" ]; then
        failed="$(first_failure "$bin")"
    else
        failed="(does not build)"
    fi
    cp "$repo/$file" "$tree/$file"
    if [ -n "$failed" ]; then
        result=caught
        why="$(failure_message)"
        failed="$failed: ${why:0:70}"
    else
        result=SURVIVED
        failed=-
        survived=$((survived + 1))
    fi
    printf '%-21s %-16s %-8s %-9s %s (%d s)\n' "${file#src/raw/}:$line" "$function" \
        "$ordering" "$result" "$failed" $((SECONDS - t0))
done < <(cd "$repo" && grep -n 'Ordering::\(Release\|Acquire\|AcqRel\|SeqCst\)' $sites)

printf '\n%d of %d mutants caught, in %d s\n' $((total - survived)) "$total" $((SECONDS - started))
[ "$survived" -eq 0 ]
