#!/usr/bin/env bash
# kase against GenMC through issue 17's reference figures (BENCHMARKS.md,
# "Against GenMC").
#
# GenMC cannot be installed here (no package in Debian's or PyPI's
# registries, no network fetch), so it is not run. Issue 17 gives, for six
# programs, the time of kase without peeking as a multiple of GenMC 0.10.3's
# (both measured on one machine) for the kase of the day, commit `BASE`
# below (main when the issue was filed; the first change made for it
# followed). This script builds that commit next to the current one and
# times both, interleaved, on this machine: GenMC's time here is then about
# kase-then's time divided by the issue's multiple, and kase-now against it
# is the multiple divided by the speed-up. For mpat(6), which kase-then
# could not finish, the issue gives GenMC's time (11.8 s) and how far
# kase-then got in 120 s on that machine (~11 000 executions); the script
# prints how far it gets here in as long, which scales GenMC's figure to
# this host.
#
# Usage (from the repository root; needs the git history and ~2 GiB in
# $WORK for a second target directory; about 10 minutes on 2 cores):
#   bash kase-bench/genmc-reference.sh [ROUNDS]
# It leaves the base commit's worktree in $WORK/base for the next run;
# `git worktree remove $WORK/base` lets it go.
set -euo pipefail

BASE=ad4ada7
ROUNDS=${1:-5}
WORK=${WORK:-${TMPDIR:-/tmp}/kase-genmc-reference}
cd "$(dirname "$0")/.."

mkdir -p "$WORK"
if [ ! -d "$WORK/base" ]; then
    git worktree add --detach "$WORK/base" "$BASE" >/dev/null
fi
echo "building kase at $BASE and at $(git rev-parse --short HEAD) (release)" >&2
(cd "$WORK/base" && CARGO_TARGET_DIR="$WORK/target" cargo build -q --release -p kase-bench --bin compare)
cargo build -q --release -p kase-bench --bin compare
THEN="$WORK/target/release/compare"
NOW="$(cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')/release/compare"

secs() { # BINARY --cell TOOL PROGRAM PARAMS... -> the exploration's seconds
    local s
    s=$("$@" 2>/dev/null | sed -n 's/^RESULT .*secs=\([0-9.]*\).*/\1/p')
    if [ -z "$s" ]; then
        echo "genmc-reference: no result from: $*" >&2
        return 1
    fi
    echo "$s"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

# program, parameters, kase / GenMC in issue 17
ROWS=(
    "lastzero|10|2.2"
    "disp|5 4|1.6"
    "mutex_counter|4 2|0.9"
    "pi|8|1.2"
    "pol|7 3|1.2"
)
printf '| program | issue 17: kase / GenMC | kase at %s | kase now | speed-up | kase now / GenMC |\n' "$BASE"
printf '|---|---:|---:|---:|---:|---:|\n'
for row in "${ROWS[@]}"; do
    IFS='|' read -r program params ratio <<<"$row"
    then_best="" now_best=""
    for _ in $(seq "$ROUNDS"); do
        # shellcheck disable=SC2086 # the parameters are separate arguments
        t=$(secs "$THEN" --cell kase "$program" $params)
        # shellcheck disable=SC2086
        n=$(secs "$NOW" --cell kase "$program" $params)
        then_best=$(min "$t" "$then_best")
        now_best=$(min "$n" "$now_best")
    done
    awk -v p="$program($params)" -v r="$ratio" -v t="$then_best" -v n="$now_best" 'BEGIN {
        s = t / n
        gsub(" ", ", ", p)
        printf "| %s | %.1f× | %.3f s | %.3f s | %.2f× | %.2f× |\n", p, r, t, n, s, r / s
    }'
done

# mpat(6): kase-then's executions in 120 s here, against ~11 000 there.
got=$(timeout 120 "$THEN" --cell kase mpat 6 2>&1 >/dev/null |
    sed -n 's/^kase: \([0-9,]*\) executions.*/\1/p' | tail -1 | tr -d ,) || true
if [ -z "$got" ]; then
    echo "genmc-reference: kase at $BASE printed no progress on mpat(6) in 120 s" >&2
    exit 1
fi
now=""
for _ in $(seq "$ROUNDS"); do
    n=$(secs "$NOW" --cell kase mpat 6)
    now=$(min "$n" "$now")
done
awk -v got="$got" -v n="$now" 'BEGIN {
    scale = got / 11000
    printf "\nmpat(6): kase at the base ran %d executions in 120 s here (~11 000 on the issue'"'"'s host: this host is %.2f× as fast);\n", got, scale
    printf "GenMC 11.8 s there is about %.1f s here; kase now %.2f s: %.2f× GenMC (%.2f× unscaled).\n", 11.8 / scale, n, n * scale / 11.8, n / 11.8
}'
