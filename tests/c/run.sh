#!/usr/bin/env bash
# Builds the C library (the capi/ crate's libinterned_string_db_capi.a), then
# the C tests and the C example against it, and runs them.
#
#   tests/c/run.sh              # plain
#   tests/c/run.sh --valgrind   # under valgrind: any leak or error fails
#   tests/c/run.sh --asan       # built with AddressSanitizer (and LeakSanitizer)
set -euo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-plain}"
cargo build --release -p interned-string-db-capi --quiet
out=target/c
mkdir -p "$out"
flags=(-std=c11 -O1 -g -Wall -Wextra -Werror -Iinclude -Itests/c)
libs=(target/release/libinterned_string_db_capi.a -lpthread -ldl -lm)
runner=()
case "$mode" in
    plain) ;;
    --valgrind) runner=(valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible
                        --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 -q
                        --suppressions=tests/c/valgrind.supp) ;;
    # ASan aborts on an allocation it cannot serve unless told to return NULL,
    # as malloc does: the tests check that a refused allocation is an error.
    --asan) flags+=(-fsanitize=address -fno-omit-frame-pointer)
            export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
    *) echo "usage: $0 [--valgrind|--asan]" >&2; exit 2 ;;
esac
for program in tests/c/test_c_api.c tests/c/test_batch.c examples/c/example.c; do
    # Under target/ (ignored), so a run leaves `git status` clean.
    binary="$out/$(basename "$program" .c)-${mode#--}"
    gcc "${flags[@]}" "$program" "${libs[@]}" -o "$binary"
    echo "--- $program ($mode)"
    "${runner[@]}" "$binary"
done
