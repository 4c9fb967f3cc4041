#!/usr/bin/env bash
# CI job: commit subjects. Every commit after BASE (the tip of main when the
# rule came in; the history up to it keeps its long subjects) must have a
# subject of at most 72 characters, in the form `area: what changed`
# (figures go in the body). Merge commits, whose subject git writes, are
# held to the length only. CONTRIBUTING.md has the areas.
#
#   .ci/commits.sh                         # BASE..HEAD
#   .ci/commits.sh 1954312~5..1954312      # any `git log` range instead
source "$(dirname "$0")/common.sh"

BASE=1954312816674f1120f0abde7f8ad17373a96306
MAX=72

step "commit subjects: at most $MAX characters, 'area: what changed'"
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
# One line a commit: short hash, TAB, parents, TAB, subject (%s is one line).
log() { git -c i18n.logOutputEncoding=UTF-8 log --format='%h%x09%p%x09%s' "$@"; }
if [ $# -gt 0 ]; then
    echo "checking the commits of: $*"
    subjects() { log "$@"; }
elif git cat-file -e "$BASE^{commit}" 2>/dev/null; then
    echo "checking the commits after ${BASE:0:7} (BASE..HEAD)"
    subjects() { log "$BASE..HEAD"; }
else
    # A shallow clone that stops short of BASE: its commits after BASE are
    # not all here, and the ones before it must not be checked. Its cut hides
    # HEAD's parents from `git log`; HEAD's commit object still names them.
    echo "${BASE:0:7} is not in this clone's history (shallow: $(git rev-parse --is-shallow-repository)): checking HEAD's subject only"
    subjects() {
        printf '%s\t%s\t%s\n' "$(git rev-parse --short HEAD)" \
            "$(git cat-file commit HEAD | sed -n '/^$/q; s/^parent //p' | tr '\n' ' ')" \
            "$(git -c i18n.logOutputEncoding=UTF-8 log -1 --format=%s HEAD)"
    }
fi

# Characters, not bytes: Python counts the decoded subject's code points
# (awk's length() and wc -c count bytes under some locales).
check='
import sys
limit = int(sys.argv[1])
checked = failed = 0
for line in sys.stdin.buffer.read().decode("utf-8", "replace").split("\n"):
    if not line:
        continue
    commit, parents, subject = line.split("\t", 2)
    checked += 1
    problems = []
    if len(subject) > limit:
        problems.append(f"over {limit} characters")
    area, colon, what = subject.partition(": ")
    merge = len(parents.split()) > 1
    if not merge and not (colon and area.strip() and what.strip()):
        problems.append("not in the form \"area: what changed\"")
    if problems:
        failed += 1
        print(f"{commit}  {len(subject):4d} characters  {subject}")
        print("         " + "; ".join(problems))
if failed:
    print(f"{failed} of {checked} commits break the rule: a subject of at most {limit} "
          "characters, \"area: what changed\", figures in the body (CONTRIBUTING.md); "
          "reword them (git rebase -i, reword)")
    sys.exit(1)
if checked:
    plural = "s" if checked != 1 else ""
    print(f"{checked} commit{plural} checked: every subject fits")
else:
    print("no commits to check")
'
subjects "$@" | python3 -c "$check" "$MAX"
