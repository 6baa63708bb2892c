#!/usr/bin/env bash
# `make localnet`: a fresh localnet in the foreground. Starts the validators
# and executors, runs the load driver, shows the circuit breaker taking a
# dark executor out and back (scripts/demo.sh; DEMO=0 skips it), then prints
# one line per block, and stops everything on Ctrl-C. Settings are those of
# scripts/localnet.sh, plus the binaries: BUILD_DIR (build/), or each of
# INFERENCED, FAKE_EXECUTOR and LOADGEN (and COSMOVISOR_BIN with
# COSMOVISOR=1, which `make localnet COSMOVISOR=1` builds first).
#
# Stopping never depends on stdout: with `make localnet 2>&1 | tee run.log`,
# Ctrl-C kills tee too, and a write to its closed pipe must not kill this
# script before it has stopped the network (tests/localnet/cleanup_test.go).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export INFERENCED=${INFERENCED:-$BUILD_DIR/inferenced}
export FAKE_EXECUTOR=${FAKE_EXECUTOR:-$BUILD_DIR/fake-executor}
export LOADGEN=${LOADGEN:-$BUILD_DIR/loadgen}
export LOCALNET_HOME=${LOCALNET_HOME:-$root/build/localnet}
export COSMOVISOR_BIN=${COSMOVISOR_BIN:-$BUILD_DIR/tools/cosmovisor}
if [ "${COSMOVISOR:-0}" = 1 ] && [ ! -x "$COSMOVISOR_BIN" ]; then
  echo "[localnet] missing $COSMOVISOR_BIN: run 'make cosmovisor' first" >&2
  exit 1
fi
LOAD_RATE=${LOAD_RATE:-2}
# port KIND INDEX: the network's port, from localnet.sh's one definition.
port() { bash "$root/scripts/localnet.sh" ports | awk -v k="$1" -v i="$2" '$1 == k && $2 == i { print $3 }'; }
rpc="http://127.0.0.1:$(port rpc 0)"
rest="http://127.0.0.1:$(port rest 0)"
api="$rest/inferenced/inference/v1"
grpc="127.0.0.1:$(port grpc 0)"
prometheus="http://127.0.0.1:$(port prometheus 0)"
exec0="http://127.0.0.1:$(port exec 0)"

# A write to a closed stdout fails (EPIPE) instead of killing the script
# (SIGPIPE), so that the script, whatever it was doing, leaves through the
# EXIT trap (set -e) and stops the network.
trap '' PIPE
loadgen_pid=""
# cleanup stops everything first and prints last, to stderr, ignoring a
# failed print; a second Ctrl-C does not interrupt it.
cleanup() {
  trap - EXIT
  trap '' INT TERM
  set +e
  if [ -n "$loadgen_pid" ]; then
    kill "$loadgen_pid" 2>/dev/null && wait "$loadgen_pid" 2>/dev/null
  fi
  bash "$root/scripts/localnet.sh" stop
  printf '\n[localnet] load driver summary: %s\n' "$LOCALNET_HOME/logs/loadgen.log" >&2 || true
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap cleanup EXIT

bash "$root/scripts/localnet.sh" reset
bash "$root/scripts/localnet.sh" start

cat <<INFO

  validators  ${NUM_VALIDATORS:-4}     home $LOCALNET_HOME (logs in logs/)
  RPC         $rpc
  gRPC        $grpc
  REST        $api/...
  executors   $exec0 ... (GET /health, POST /control/dark?mode=refuse|hang, POST /control/up)
              take one dark and watch "breaker: excluded 1", then bring it back for its probe
  metrics     curl -s $prometheus/metrics (CometBFT's cometbft_* and the app's inference_*;
              docs/prometheus/ has a Prometheus config and the alert rules)
  CLI         ${INFERENCED#"$root"/} q inference participants --home $LOCALNET_HOME/node0
  load        ${LOADGEN#"$root"/} at $LOAD_RATE inferences per block

INFO

"$LOADGEN" -grpc "$grpc" -keyring-dir "$LOCALNET_HOME/keys" -rate "$LOAD_RATE" -quiet \
  -events "$LOCALNET_HOME/logs/loadgen-events.jsonl" >"$LOCALNET_HOME/logs/loadgen.log" 2>&1 &
loadgen_pid=$!

# First the circuit breaker at work (DEMO=0 skips it), then one line per block.
if [ "${DEMO:-1}" != 0 ]; then
  bash "$root/scripts/demo.sh"
fi

last=0
while true; do
  h=$(curl -fsS --max-time 2 "$rpc/status" | jq -r '.result.sync_info.latest_block_height' 2>/dev/null || echo 0)
  if [ "$h" -gt "$last" ]; then
    last=$h
    epoch=$(curl -fsS --max-time 2 "$api/epoch" | jq -r '"\(.epoch.index)\(if .in_poc_phase then " (PoC)" else "" end)"' 2>/dev/null || echo "?")
    breaker=$(curl -fsS --max-time 2 "$api/excluded_executors?pagination.limit=1000" |
      jq -r '[.executors[].state] | "excluded \(map(select(. == "HEALTH_STATE_EXCLUDED")) | length)  probing \(map(select(. == "HEALTH_STATE_PROBE")) | length)"' 2>/dev/null || echo "?")
    curl -fsS --max-time 2 "$api/participants?pagination.limit=1000" 2>/dev/null | jq -r --arg h "$h" --arg e "$epoch" --arg b "$breaker" '
      .participants as $p
      | [$p[] | select(.status == "PARTICIPANT_STATUS_ACTIVE")] | length as $active
      | ([$p[] | (.current_epoch_stats.inference_count // "0" | tonumber)] | add // 0) as $ok
      | ([$p[] | (.current_epoch_stats.missed_requests // "0" | tonumber)] | add // 0) as $missed
      | "height \($h)  epoch \($e)  participants \($p | length) (active \($active))  finished \($ok)  missed \($missed)  breaker: \($b)"' ||
      echo "height $h"
  fi
  sleep 0.3
done
