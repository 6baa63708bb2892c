#!/usr/bin/env bash
# The circuit breaker in one minute, for a newcomer: on a running localnet
# with its load driver (scripts/localnet-run.sh runs this first), one
# executor goes dark, the validators' attestations exclude it, it comes
# back, is probed and is HEALTHY again. One line per block: each
# executor's breaker state and the requests routed to it in that block.
#
# On its own (no network running on PORT_OFFSET), it starts a localnet and
# the load driver, runs the demo and stops everything.
#
#   scripts/demo.sh          settings are those of scripts/localnet.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export LOCALNET_HOME=${LOCALNET_HOME:-$root/build/localnet}
PORT_OFFSET=${PORT_OFFSET:-0}
rpc="http://127.0.0.1:$((26657 + PORT_OFFSET))"
api="http://127.0.0.1:$((1317 + PORT_OFFSET))/inferenced/inference/v1"
events=${DEMO_EVENTS:-$LOCALNET_HOME/logs/loadgen-events.jsonl}
KR=(--keyring-backend test --keyring-dir "$LOCALNET_HOME/keys")
BIN=${INFERENCED:-$root/build/inferenced}

height() { curl -fsS --max-time 2 "$rpc/status" 2>/dev/null | jq -r '.result.sync_info.latest_block_height' 2>/dev/null || echo 0; }

own=""
if [ "$(height)" = 0 ]; then
  own=1
  trap '[ -n "${lg:-}" ] && kill "$lg" 2>/dev/null; bash "$root/scripts/localnet.sh" stop' EXIT
  bash "$root/scripts/localnet.sh" reset
  bash "$root/scripts/localnet.sh" start
  "${LOADGEN:-$root/build/loadgen}" -grpc "127.0.0.1:$((9090 + PORT_OFFSET))" -keyring-dir "$LOCALNET_HOME/keys" -rate 3 \
    -quiet -events "$events" >"$LOCALNET_HOME/logs/loadgen.log" 2>&1 &
  lg=$!
fi

mapfile -t names < <(ls "$LOCALNET_HOME/keys/keyring-test" | sed -n 's/^\(exec[0-9]*\)\.info$/\1/p' | sort -V)
declare -A addr
for n in "${names[@]}"; do addr[$n]=$("$BIN" keys show "$n" -a "${KR[@]}"); done
victim=exec1
victim_url="http://127.0.0.1:$((8080 + PORT_OFFSET + 1))"

# line H: one block: each executor's state after block H (H healthy, X
# excluded, P probe) and the requests the load driver drew from that
# state (routed to blocks after H), a * marking a probe. Both are read at
# height H, whatever the chain has reached since: a draw from state H only
# reaches an X executor through the all-excluded fallback.
line() {
  local h=$1 states out=""
  states=$(curl -fsS --max-time 2 -H "x-cosmos-block-height: $h" "$api/excluded_executors?pagination.limit=1000" |
    jq -r '.executors[] | "\(.address) \(.state)"' 2>/dev/null || true)
  for n in "${names[@]}"; do
    local s=H req=0 probes=0 mark=" "
    case "$(grep "^${addr[$n]} " <<<"$states" | cut -d' ' -f2)" in
      HEALTH_STATE_EXCLUDED) s=X ;;
      HEALTH_STATE_PROBE) s=P ;;
    esac
    if [ -f "$events" ]; then
      req=$(jq -r --arg a "${addr[$n]}" --argjson h "$h" \
        'select(.executor == $a and .height == $h) | .inference_id' "$events" 2>/dev/null | wc -l)
      probes=$(jq -r --arg a "${addr[$n]}" --argjson h "$h" \
        'select(.executor == $a and .height == $h and .probe == true) | .inference_id' "$events" 2>/dev/null | wc -l)
    fi
    [ "$probes" -gt 0 ] && mark="*"
    out+=$(printf '  %s %s %2d%s' "$n" "$s" "$req" "$mark")
  done
  printf '%6d %s  %s\n' "$h" "$out" "${2:-}"
}

# follow prints one line per block after $last until the victim's state is
# $1, and marks that block with $2. A block's line is printed once the next
# one is committed: the load driver draws from a block's state while the
# next one is being made, so its requests are all known by then.
follow() {
  local want=$1 reached=$2 h st
  while :; do
    h=$(height)
    while [ $((last + 1)) -lt "$h" ]; do
      last=$((last + 1))
      st=$(curl -fsS --max-time 2 -H "x-cosmos-block-height: $last" "$api/executor_health/${addr[$victim]}" |
        jq -r '.health.state' 2>/dev/null || echo "")
      if [ "$st" = "$want" ]; then
        line "$last" "$reached"
        return 0
      fi
      line "$last"
    done
    sleep 0.2
  done
}

cat <<INFO

  Circuit breaker demo: $victim goes dark, is excluded, comes back, is restored.
  Each line is a block H: executor, its state after H (H healthy, X excluded,
  P probe) and the requests the load driver drew from that state (* a probe).

INFO
start=$(height)
while [ "$(height)" -lt $((start + 3)) ]; do sleep 0.2; done
curl -fsS -X POST "$victim_url/control/dark?mode=refuse" >/dev/null
dark=$(height)
last=$dark
echo "  -- $victim goes dark after block $dark"
follow HEALTH_STATE_EXCLUDED "<- $victim excluded"
curl -fsS -X POST "$victim_url/control/up" >/dev/null
echo "  -- $victim back up; it stays out until its cooldown ends"
follow HEALTH_STATE_HEALTHY "<- HEALTHY again"
health=$(curl -fsS --max-time 2 "$api/executor_health/${addr[$victim]}")
echo
echo "  $victim went dark after block $dark, was excluded and was restored at $(jq -r '.health.since_height' <<<"$health")"
echo "  by $(jq -r '.health.reason' <<<"$health"): promoted to PROBE when the cooldown ended and restored by the"
echo "  validators' next attested ok in the same block (a probe inference is needed only after traffic misses)."
echo "  inferenced q inference executor-health ${addr[$victim]} --home $LOCALNET_HOME/node0"
echo
