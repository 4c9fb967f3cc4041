#!/usr/bin/env bash
# Prints one SHA-256 of what the loom mutants verify: the contents and paths
# of every file under src/raw/ and loom-tests/ (tracked, or new and not
# ignored: the files loom-tests/mutants.sh copies), except
# loom-tests/verified.sha256, which holds this hash for the tree the mutants
# last passed on (loom-tests/verify.sh writes it; .ci/loom.sh compares).
set -euo pipefail
# One byte order for file names, whatever the host's locale: the hash
# must not depend on where it is computed.
export LC_ALL=C
cd "$(dirname "$0")/.."
git ls-files -z --cached --others --exclude-standard -- src/raw loom-tests \
    | sort -zu \
    | while IFS= read -r -d '' file; do
        # A tracked file deleted from the worktree is not part of the tree.
        [ "$file" = loom-tests/verified.sha256 ] || [ ! -f "$file" ] \
            || printf '%s  %s\n' "$(sha256sum <"$file" | cut -d' ' -f1)" "$file"
    done \
    | sha256sum | cut -d' ' -f1
