#!/usr/bin/env bash
# The canary frontier (docs/simulation.md, "Canaries"): each candidate
# schedule and policy of the validators' canaries under chain+canary, on
# the scenarios that decide S1 (speed), S2 (false exclusions on service)
# and S6 (load). Seeded: the same figures on any machine. About 3 minutes
# per candidate on 2 cores.
#
#   scripts/canary-frontier.sh                 # every candidate below
#   scripts/canary-frontier.sh -canary-every 10 -canary-policy cusum   # one
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/sim
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/sim

scenarios=degraded-28,degraded-28-1-agent,degraded-28-idle,degraded-40-idle,honest-3.25,honest-5,rise,flapping

one() {
	"$bin" -scenarios "$scenarios" -strategies chain+canary -honest-epochs 10 -epochs 2 "$@" |
		awk -v args="$*" 'BEGIN { printf "| %s", args }
			/^## / { sc = $2 }
			/^\| chain\+canary/ {
				split($0, a, "|"); for (i in a) gsub(/ /, "", a[i])
				if (sc ~ /idle/) printf " | %s: %s blocks", sc, a[4]
				else if (sc ~ /honest|rise|flap/) printf " | %s: %s on service, %s canaries/executor/block", sc, a[11], a[15]
				else printf " | %s: %s blocks from the first client miss", sc, a[6]
			}
			END { print " |" }'
}

if [ $# -gt 0 ]; then
	one "$@"
	exit
fi
for args in \
	"-canary-policy burst -canary-every 10 -canary-window 32 -canary-min-samples 16 -service-excess 20" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 4000" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 4000 -canary-held-trigger" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 4000 -canary-flag-trigger" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 6000 -canary-flag-trigger" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 8000 -canary-flag-trigger" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 8000 -canary-flag-trigger -canary-flag-cooldown 200" \
	"-canary-policy cusum -canary-every 10 -canary-window 16 -canary-min-samples 8 -service-excess 15 -canary-h 6000 -canary-flag-trigger -canary-flag-max-rated 5"; do
	# shellcheck disable=SC2086
	one $args
done
