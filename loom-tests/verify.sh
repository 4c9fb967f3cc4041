#!/usr/bin/env bash
# Runs both sets of loom mutants (loom-tests/mutants.sh: the optimistic
# shard's orderings in src/raw/optimistic/, its table/ included, then the
# lock-free strategy's in src/raw/lock_free/*.rs) and, if every mutant is
# caught, records the tree they passed on in loom-tests/verified.sha256
# (loom-tests/tree-hash.sh), so that .ci/loom.sh skips them until src/raw or
# loom-tests change. Commit the rewritten file with the change it verifies.
set -euo pipefail
cd "$(dirname "$0")/.."
tree="$(loom-tests/tree-hash.sh)"
loom-tests/mutants.sh
loom-tests/mutants.sh lock_free
if [ "$(loom-tests/tree-hash.sh)" != "$tree" ]; then
    echo "src/raw or loom-tests changed while the mutants ran: nothing recorded" >&2
    exit 1
fi
echo "$tree" >loom-tests/verified.sha256
echo "every mutant caught on $tree: recorded in loom-tests/verified.sha256 (commit it)"
