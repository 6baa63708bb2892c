#!/usr/bin/env bash
# Disk growth of a localnet node under load (README.md, "Disk: state and
# block-store size"): a fresh localnet (scripts/localnet.sh, its settings
# apply: PRUNING*, MIN_RETAIN_BLOCKS, SNAPSHOT_* ...), the load driver at
# LOAD_RATE inferences per block as `make localnet` runs it, and every
# SAMPLE_BLOCKS blocks one line of node0's data/ directories in KiB:
#
#   height base application.db blockstore.db state.db tx_index.db cs.wal snapshots total
#
# base is CometBFT's earliest stored block (it rises once blocks are pruned).
# At the end: each directory's growth per 1,000 blocks between the first
# sample at or after WARMUP_BLOCKS and the last, and the snapshots taken.
# The network is stopped on exit, whatever happens. Run it under the lock:
#   flock /tmp/inferenced-net.lock scripts/localnet-disk.sh
#
# Settings (environment), besides scripts/localnet.sh's:
#   BLOCKS         blocks to run                                  (600)
#   SAMPLE_BLOCKS  blocks between samples                         (100)
#   WARMUP_BLOCKS  first height the growth rate counts from       (100)
#   LOAD_RATE      load driver's inferences per block             (2)
#   EVIDENCE_MAX_AGE_BLOCKS  genesis consensus evidence max_age_num_blocks;
#                  the SDK keeps at least this many blocks whatever
#                  min-retain-blocks says, so a short run that shows block
#                  pruning needs it small (unset: the genesis default, 100000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export INFERENCED=${INFERENCED:-$BUILD_DIR/inferenced}
export FAKE_EXECUTOR=${FAKE_EXECUTOR:-$BUILD_DIR/fake-executor}
export LOCALNET_KEYS=${LOCALNET_KEYS:-$BUILD_DIR/localnet-keys}
LOADGEN=${LOADGEN:-$BUILD_DIR/loadgen}
export LOCALNET_HOME=${LOCALNET_HOME:-$root/build/localnet}
BLOCKS=${BLOCKS:-600}
SAMPLE_BLOCKS=${SAMPLE_BLOCKS:-100}
WARMUP_BLOCKS=${WARMUP_BLOCKS:-100}
LOAD_RATE=${LOAD_RATE:-2}
EVIDENCE_MAX_AGE_BLOCKS=${EVIDENCE_MAX_AGE_BLOCKS:-}
net() { bash "$root/scripts/localnet.sh" "$@"; }
port() { net ports | awk -v k="$1" -v i="$2" '$1 == k && $2 == i { print $3 }'; }
rpc="http://127.0.0.1:$(port rpc 0)"
grpc="127.0.0.1:$(port grpc 0)"
data="$LOCALNET_HOME/node0/data"
log() { printf '[disk] %s\n' "$*" >&2; }

loadgen_pid=""
cleanup() {
  trap - EXIT
  set +e
  if [ -n "$loadgen_pid" ]; then kill "$loadgen_pid" 2>/dev/null && wait "$loadgen_pid" 2>/dev/null; fi
  net stop
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

net reset
net init
if [ -n "$EVIDENCE_MAX_AGE_BLOCKS" ]; then
  # Every validator holds the same genesis; patch each copy alike. The
  # duration bound is lowered too: evidence expires only once both are past.
  for g in "$LOCALNET_HOME"/node*/config/genesis.json; do
    jq --arg n "$EVIDENCE_MAX_AGE_BLOCKS" \
      '.consensus.params.evidence.max_age_num_blocks = $n | .consensus.params.evidence.max_age_duration = "60000000000"' \
      "$g" >"$g.tmp" && mv "$g.tmp" "$g"
  done
fi
net start
"$LOADGEN" -grpc "$grpc" -keyring-dir "$LOCALNET_HOME/keys" -rate "$LOAD_RATE" -quiet \
  >"$LOCALNET_HOME/logs/loadgen.log" 2>&1 &
loadgen_pid=$!

status() { curl -fsS --max-time 2 "$rpc/status" | jq -r ".result.sync_info.$1" 2>/dev/null || echo 0; }
kib() { if [ -e "$1" ]; then du -sk "$1" | cut -f1; else echo 0; fi; }

printf 'height base application.db blockstore.db state.db tx_index.db cs.wal snapshots total\n'
first="" last="" next=$SAMPLE_BLOCKS started=$(date +%s)
while :; do
  h=$(status latest_block_height)
  if [ "$h" -ge "$next" ]; then
    line="$h $(status earliest_block_height) $(kib "$data/application.db") $(kib "$data/blockstore.db") $(kib "$data/state.db") $(kib "$data/tx_index.db") $(kib "$data/cs.wal") $(kib "$data/snapshots") $(kib "$data")"
    printf '%s\n' "$line"
    [ -z "$first" ] && [ "$h" -ge "$WARMUP_BLOCKS" ] && first=$line
    last=$line
    next=$((next + SAMPLE_BLOCKS))
    [ "$h" -ge "$BLOCKS" ] && break
  fi
  kill -0 "$loadgen_pid" 2>/dev/null || { log "the load driver exited; see $LOCALNET_HOME/logs/loadgen.log"; exit 1; }
  sleep 0.5
done
elapsed=$(($(date +%s) - started))

# Growth per 1,000 blocks, first counted sample to last (KiB).
read -r h0 _ a0 b0 s0 x0 w0 n0 t0 <<<"$first"
read -r h1 _ a1 b1 s1 x1 w1 n1 t1 <<<"$last"
per() { echo $(((($2) - ($1)) * 1000 / (h1 - h0))); }
printf 'growth per 1000 blocks (KiB), heights %d-%d: application.db %d  blockstore.db %d  state.db %d  tx_index.db %d  cs.wal %d  snapshots %d  total %d\n' \
  "$h0" "$h1" "$(per "$a0" "$a1")" "$(per "$b0" "$b1")" "$(per "$s0" "$s1")" "$(per "$x0" "$x1")" "$(per "$w0" "$w1")" "$(per "$n0" "$n1")" "$(per "$t0" "$t1")"
printf 'blocks %d in %d s (%d ms a block), load %s inferences per block\n' "$h1" "$elapsed" "$((elapsed * 1000 / h1))" "$LOAD_RATE"
# The load driver's summary (printed when it stops): its starts and their fate.
{ kill "$loadgen_pid" && wait "$loadgen_pid"; } 2>/dev/null || true
loadgen_pid=""
sed -n '/^agent /,$p' "$LOCALNET_HOME/logs/loadgen.log"
if [ -d "$data/snapshots" ]; then
  for d in "$data"/snapshots/*/; do
    case "$(basename "$d")" in metadata.db) continue ;; esac
    printf 'snapshot at height %s: %s KiB\n' "$(basename "$d")" "$(kib "$d")"
  done
fi
