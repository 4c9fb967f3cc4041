# Sourced by every job script in .ci/: strict mode, the repository root as
# the working directory, the step banner and the pinned nightly's name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL=0
# Nightly, pinned by date, for Miri, fuzzing and TSan (installed or linked
# under this name by .ci/install.sh).
NIGHTLY_DATE=2026-05-19
NIGHTLY=isdb-nightly-$NIGHTLY_DATE

step() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
