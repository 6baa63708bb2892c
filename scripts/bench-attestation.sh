#!/usr/bin/env bash
# One block's attestation work at 150 validators x {1,000; 10,000} executors,
# before and after, in one run: abci/preblock/attest_bench_test.go (exported
# API only) runs against the code of BASE (default 2d859e8, the tally and
# step before issue 25) in a temporary detached worktree, then against this
# checkout, and the two are printed side by side. Each run measures its own
# signature checks, so every ratio is taken within one run.
#
#   scripts/bench-attestation.sh                    # 100 blocks a case
#   BENCHTIME=10x scripts/bench-attestation.sh      # quicker, noisier
#   BASE=8a57ec8 scripts/bench-attestation.sh       # against another commit
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
base=${BASE:-2d859e8}
benchtime=${BENCHTIME:-100x}
bench=abci/preblock/attest_bench_test.go
tmp=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/base" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

run() { # dir label
	local out="$tmp/out"
	(cd "$1" && go test ./abci/preblock/ -run '^$' -bench '^BenchmarkAttestationBlock$' -benchtime "$benchtime" -timeout 60m) >"$out" 2>&1 ||
		{ cat "$out" >&2; echo "benchmark failed in $1" >&2; exit 1; }
	cat "$out" >&2
	awk -v label="$2" '/^BenchmarkAttestationBlock\// {
			name = $1; sub(/^BenchmarkAttestationBlock\/executors=/, "", name); sub(/-[0-9]+$/, "", name)
			split(name, part, "/")
			for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
			printf "%s %s %s %.3f %.3f %s %s %s %s %s %s\n", part[1], part[2], label, v["ratio"], v["ratio-with-keeper"],
				v["µs-signatures/op"], v["µs-verify+aggregate/op"], v["µs-keeper/op"], v["µs-keeper-first"],
				v["bundle-bytes"], v["allocs-verify"] "/" v["allocs-preblock"]
		}' "$out" >>"$tmp/results"
}

git -C "$root" worktree add --quiet --detach "$tmp/base" "$base"
cp "$root/$bench" "$tmp/base/$bench"
# The release-dependent calls (the bundle's constructor, the verdicts'
# reference): the base's own.
if grep -q VerdictReference "$tmp/base/abci/ve/"*.go; then
	cp "$root/abci/preblock/bench_bundle_test.go" "$tmp/base/abci/preblock/"
elif grep -q LayoutV3 "$tmp/base/abci/proposals/"*.go; then
	cp "$root/scripts/bench-bundle-v3.go.txt" "$tmp/base/abci/preblock/bench_bundle_test.go"
else
	cp "$root/scripts/bench-bundle-v2.go.txt" "$tmp/base/abci/preblock/bench_bundle_test.go"
fi
echo "== before: $base" >&2
run "$tmp/base" "before($base)"
after="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo '+changes')"
echo "== after: $after" >&2
run "$root" "after($after)"

echo
echo "150 validators, $benchtime a case; ratio = verify+aggregate / signatures; with keeper: + the breaker step (steady state)"
{
	echo "executors scenario run ratio ratio-with-keeper µs-signatures µs-verify+aggregate µs-keeper µs-keeper-first bundle-bytes allocs(verify/preblock)"
	sort -s -k1,1n -k2,2 "$tmp/results"
} | column -t
