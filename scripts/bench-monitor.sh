#!/usr/bin/env bash
# The health monitor at scale, before and after the scheduler, in one run:
# monitor/scale_bench_test.go (exported API only) runs against the monitor
# of BASE (default efd442a, the tick-based one) in a temporary detached
# worktree, then against this checkout, one after the other, and prints
# both side by side.
#
#   scripts/bench-monitor.sh                      # 1,000 and 10,000 executors, 15 s each
#   MONITOR_BENCH_EXECUTORS=1000 MONITOR_BENCH_SECONDS=10 scripts/bench-monitor.sh
#
# The benchmark's knobs (MONITOR_BENCH_*) are described in the test file.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
base=${BASE:-efd442a}
bench=monitor/scale_bench_test.go
tmp=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/base" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

run() { # dir label
	(cd "$1" && go test ./monitor/ -run '^$' -bench '^BenchmarkMonitorScale$' -benchtime 1x -timeout 30m) |
		tee /dev/stderr | awk -v label="$2" '/^BenchmarkMonitorScale\// {
			n = $1; sub(/.*executors=/, "", n); sub(/-[0-9]+$/, "", n)
			for (i = 5; i < NF; i += 2) v[$(i + 1)] = $i
			printf "%s %s %s %s %s %s %s %s %s %s %s %s\n", label, n, v["concurrency"], v["interval_s"], v["fresh"], v["fresh_min"],
				v["healthy_ok"], v["hanging_miss"], v["probes/s"], v["cpu_cores"], v["fds"], v["snapshot_us"]
		}' >>"$tmp/results"
}

git -C "$root" worktree add --quiet --detach "$tmp/base" "$base"
cp "$root/$bench" "$tmp/base/$bench"
echo "== before: $base" >&2
run "$tmp/base" "before($base)"
echo "== after: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- monitor || echo '+changes')" >&2
run "$root" "after($(git -C "$root" rev-parse --short HEAD))"

echo
echo "30% of executors hang; a Snapshot read each second after a 5 s warm-up"
{
	echo "run executors concurrency interval_s fresh fresh_min healthy_ok hanging_miss probes/s cpu_cores fds snapshot_us"
	sort -k2,2n -k1,1r "$tmp/results"
} | column -t
