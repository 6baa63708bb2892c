#!/usr/bin/env bash
# Two builds of inferenced side by side on the same localnet config, one run
# each, one after the other: each binary's size and the network's mean block
# interval over BLOCKS blocks after WARMUP_BLOCKS, with the load driver at
# LOAD_RATE inferences per block. Everything but the node binary (keys, fake
# executors, load driver, scripts) is this checkout's, so the node is the
# only difference. Run it under the lock:
#   flock /tmp/inferenced-net.lock scripts/localnet-compare.sh OLD_BIN NEW_BIN
#
#   binary  size_bytes  blocks  first..last  mean_interval_ms
#
# Settings (environment), besides scripts/localnet.sh's:
#   BLOCKS         blocks measured                        (60)
#   WARMUP_BLOCKS  blocks before the measured window      (10)
#   LOAD_RATE      load driver's inferences per block     (2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export FAKE_EXECUTOR=${FAKE_EXECUTOR:-$BUILD_DIR/fake-executor}
export LOCALNET_KEYS=${LOCALNET_KEYS:-$BUILD_DIR/localnet-keys}
LOADGEN=${LOADGEN:-$BUILD_DIR/loadgen}
export LOCALNET_HOME=${LOCALNET_HOME:-$root/build/localnet-compare}
BLOCKS=${BLOCKS:-60}
WARMUP_BLOCKS=${WARMUP_BLOCKS:-10}
LOAD_RATE=${LOAD_RATE:-2}
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
net() { bash "$root/scripts/localnet.sh" "$@"; }
port() { net ports | awk -v k="$1" -v i="$2" '$1 == k && $2 == i { print $3 }'; }
log() { printf '[compare] %s\n' "$*" >&2; }

loadgen_pid=""
cleanup() {
  set +e
  if [ -n "$loadgen_pid" ]; then kill "$loadgen_pid" 2>/dev/null && wait "$loadgen_pid" 2>/dev/null; fi
  loadgen_pid=""
  net stop >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

height() { curl -fsS "$1/status" 2>/dev/null | jq -r '.result.sync_info.latest_block_height // 0'; }
block_ms() { curl -fsS "$1/block?height=$2" | jq -r '.result.block.header.time' | python3 -c '
import sys, datetime
t = sys.stdin.read().strip()
head, frac = (t.rstrip("Z").split(".") + ["0"])[:2]
d = datetime.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
print(int(d.timestamp()) * 1000 + int((frac + "000")[:3]))'; }

measure() {
  local bin=$1
  export INFERENCED=$bin
  net reset >/dev/null 2>&1 || true
  net start >/dev/null
  local rpc grpc
  rpc="http://127.0.0.1:$(port rpc 0)"
  grpc="127.0.0.1:$(port grpc 0)"
  "$LOADGEN" -grpc "$grpc" -keyring-dir "$LOCALNET_HOME/keys" -rate "$LOAD_RATE" -quiet \
    >"$LOCALNET_HOME/logs/loadgen.log" 2>&1 &
  loadgen_pid=$!
  local first=$((WARMUP_BLOCKS + 1)) last=$((WARMUP_BLOCKS + 1 + BLOCKS)) deadline=$((SECONDS + 600))
  until [ "$(height "$rpc")" -gt "$last" ]; do
    [ $SECONDS -lt $deadline ] || { log "$bin: height $last not reached in 600 s"; exit 1; }
    sleep 1
  done
  local t0 t1
  t0=$(block_ms "$rpc" "$first")
  t1=$(block_ms "$rpc" "$last")
  printf '%s  %s  %d  %d..%d  %d\n' "$bin" "$(stat -c %s "$bin")" "$BLOCKS" "$first" "$last" $(((t1 - t0) / BLOCKS))
  cleanup
}

printf 'binary  size_bytes  blocks  first..last  mean_interval_ms\n'
measure "$1"
measure "$2"
net reset >/dev/null 2>&1 || true
