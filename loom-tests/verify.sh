#!/usr/bin/env bash
# Runs one set of loom mutants (loom-tests/mutants.sh) per module of
# src/raw/ that a strategy's protocol lives in (`Strategy::RAW_MODULE`, as
# the crate's one list gives them: `cargo run --example strategies -- --raw`;
# today the optimistic shard's orderings in src/raw/optimistic/, its table/
# and the shared src/raw/*.rs included, then the lock-free strategy's in
# src/raw/lock_free/*.rs) and, if every mutant is caught, records the tree
# they passed on in loom-tests/verified.sha256 (loom-tests/tree-hash.sh), so
# that .ci/loom.sh skips them until src/raw or loom-tests change. Commit the
# rewritten file with the change it verifies.
set -euo pipefail
cd "$(dirname "$0")/.."
tree="$(loom-tests/tree-hash.sh)"
modules="$(cargo run -q --example strategies -- --raw | cut -f2 | awk '!seen[$0]++')"
[ -n "$modules" ] || { echo "no strategy has a module of src/raw/" >&2; exit 1; }
for module in $modules; do
    loom-tests/mutants.sh "$module"
done
if [ "$(loom-tests/tree-hash.sh)" != "$tree" ]; then
    echo "src/raw or loom-tests changed while the mutants ran: nothing recorded" >&2
    exit 1
fi
echo "$tree" >loom-tests/verified.sha256
echo "every mutant caught on $tree: recorded in loom-tests/verified.sha256 (commit it)"
