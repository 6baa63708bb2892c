#!/usr/bin/env bash
# Local multi-validator network on 127.0.0.1: N validators as separate
# inferenced processes plus a fleet of fake executors registered in genesis.
#
#   scripts/localnet.sh start    init (if needed) and start everything
#   scripts/localnet.sh stop     stop every process this network started
#   scripts/localnet.sh status   heights, epoch and participants
#   scripts/localnet.sh reset    stop and delete the network's home
#   scripts/localnet.sh ports    every port of the network (see Ports below)
#   scripts/localnet.sh join I   make (first time) and start full node I
#                                (FULL_NODES, JOIN_MODE below)
#
# Processes run in their own session (setsid), so a Ctrl-C in the terminal
# reaches only the caller, which then calls stop. A pid file in pids/ holds
# the process's pid, which is also its process group: stop signals the whole
# group (TERM, then KILL after 10 s), which under cosmovisor holds cosmovisor
# and the inferenced it runs, and for a plain node just the node.
#
# Settings (environment):
#   LOCALNET_HOME      where nodes, keys and logs live   (build/localnet)
#   NUM_VALIDATORS     validators                         (4)
#   NUM_EXECUTORS      fake executors                     (6)
#   AGENTS             registered transfer agents agent0..   (3)
#   AGENT_BOND         each genesis agent's bond (the genesis param
#                      transfer_agent_min_bond, i.e. types.DefaultParams)
#   AGENT_MISS_ALLOWANCE  transfer_agent_miss_allowance: charged misses an
#                      agent may make before its starts are refused (the
#                      chain's default)
#   PORT_OFFSET        added to every port, to run two networks at once (0)
#   BLOCK_TIME         CometBFT timeout_commit; ~1 s blocks (700ms)
#   EPOCH_LENGTH       blocks per epoch                   (200)
#   POC_PHASE_BLOCKS   PoC phase at the start of an epoch (0)
#   EXPIRATION_BLOCKS  blocks before an inference expires (4)
#   SIGNED_BLOCKS_WINDOW  x/slashing's signed_blocks_window: a validator
#                      missing more than half of it is jailed (the SDK's 100)
#   DOWNTIME_H_THRESHOLD SPRT threshold; higher = slower SPRT   (4)
#   VE_ENABLE_HEIGHT   height from which validators attest executor health
#                      in vote extensions; 0 runs on traffic samples alone (2)
#   CB_INITIAL_COOLDOWN  circuit-breaker first cooldown, blocks (10)
#   CB_MAX_COOLDOWN      circuit-breaker longest cooldown, blocks (80; < EPOCH_LENGTH)
#   CB_TRAFFIC_WINDOW, CB_TRAFFIC_MIN_SAMPLES, CB_TRAFFIC_THRESHOLD_PCT,
#   CB_TRAFFIC_CONSECUTIVE  the trip rule for traffic samples
#                      (health_cb_traffic_*); each unset one keeps the
#                      chain's default (types.DefaultParams)
#   FLEET              1: every executor in one fake-executor process (its
#                      bulk control: cmd/fake-executor/README.md); 0: one
#                      process per executor     (1 above 16 executors, else 0)
#   MONITOR_PROBE_INTERVAL, MONITOR_PROBE_TIMEOUT, MONITOR_VERDICT_TTL,
#   MONITOR_MAX_CONCURRENCY  [health-monitor] in app.toml (150ms, 250ms, 2s,
#                      the binary's default): probe several times per block
#                      at 6 executors; a large network needs its own sizing
#                      (monitor/README.md)
#   MONITOR_CANARY_ENABLED, _INTERVAL, _SUSPECT_INTERVAL, _TIMEOUT, _WINDOW,
#   _MIN_SAMPLES, _TTL, _MAX_CONCURRENCY, _BASELINE_PCT, _DEGRADED_PCT,
#   _ALARM             [health-monitor] canary-* keys (true, 1s, 200ms, 2s,
#                      16, 4, 20s, then the binary's; above 16 executors the
#                      binary's: localnet-init.sh says why)
#   TELEMETRY          1: CometBFT's Prometheus endpoint and the app's
#                      telemetry on (README.md, "Metrics"); 0: off   (1)
#   MODEL              model every executor serves        (llama-7b)
#   CHAIN_ID           chain id                           (inferenced-local)
#   MONITOR_OFF_NODES  validators (0-based, space-separated) whose health
#                      monitor is disabled: they abstain         (none)
#   PRUNING            app.toml pruning: default | nothing | everything | custom
#                      (unset: the binary's default, "default"; a node with
#                      "everything" refuses to start with SNAPSHOT_INTERVAL set)
#   PRUNING_KEEP_RECENT, PRUNING_INTERVAL  app.toml pruning-keep-recent and
#                      pruning-interval, read only when PRUNING=custom
#   MIN_RETAIN_BLOCKS  app.toml min-retain-blocks: let CometBFT prune blocks
#                      older than this (0 keeps all; bounded below by the
#                      genesis evidence max_age_num_blocks, README "Disk")
#   SNAPSHOT_INTERVAL, SNAPSHOT_KEEP_RECENT  app.toml [state-sync]: take a
#                      state sync snapshot every N blocks, keep the last K
#                      (unset: the binary's defaults, no snapshots)
#   TX_INDEXER         config.toml [tx_index] indexer: kv | null (null: no
#                      tx_index.db, but no tx lookup by hash)      (kv)
#   DISCARD_ABCI_RESPONSES  config.toml [storage] discard_abci_responses:
#                      true keeps no block results in state.db     (false)
#   FULL_NODES         nodes after the validators (node<NUM_VALIDATORS>..)
#                      that validate nothing, ports after theirs: `join`
#                      starts one (JOIN_MODE, TRUST_HEIGHT: localnet-join.sh) (0)
#   NODE<i>_BIN        binary of validator i (tests run a lying build) ($INFERENCED)
#   NODE<i>_ENV        VAR=value words in validator i's environment  (none)
#   COSMOVISOR         1: every validator runs under cosmovisor, in the
#                      operator layout (scripts/localnet-cosmovisor.sh);
#                      0: the binary itself                        (0)
#   COSMOVISOR_BIN     cosmovisor (build/tools/cosmovisor: make cosmovisor)
#   COSMOVISOR_SKIP_BACKUP  cosmovisor's UNSAFE_SKIP_BACKUP (false): by
#                      default cosmovisor copies data/ to <node home>/
#                      data-backup-<date> at the upgrade halt, before it
#                      switches binaries, as operators get it; that costs a
#                      full copy of data/ per node, in disk and in time at
#                      the halt. true skips it (no restore point)
#   UPGRADE_NAME, UPGRADE_BIN  with COSMOVISOR=1: an upgrade plan's name and
#                      the binary cosmovisor switches to at its height (none)
#
# Keys (test keyring in $LOCALNET_HOME/keys, made by build/localnet-keys in
# one process; "name address" lines in $LOCALNET_HOME/addresses), each
# funded with 1000000000000stake:
#   val<i>     validator i
#   exec<j>    executor j, a genesis participant
#   agent<k>   transfer agent k (k < AGENTS), registered in genesis with AGENT_BOND:
#              the load driver's agents
#   griefer    a registered transfer agent too, for the scenarios that attack
#   outsider   funded but not a transfer agent: its starts are refused
#
# Ports, for node i (0-based) and executor j (0-based), plus PORT_OFFSET:
#   RPC 26657+100*i, P2P 26656+100*i, ABCI proxy 26658+100*i,
#   Prometheus 26660+100*i (CometBFT's metrics and the app's, /metrics),
#   gRPC 9090+100*i, REST 1317+100*i, executor j 8080+j (at most 1010
#   executors, below the gRPC ports).
# These functions are the one definition: `scripts/localnet.sh ports` prints
# every port of the network as "<kind> <index> <port>" lines, which is how
# tests/internal/localnet learns them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
HOME_DIR=${LOCALNET_HOME:-$root/build/localnet}
BIN=${INFERENCED:-$root/build/inferenced}
EXEC_BIN=${FAKE_EXECUTOR:-$root/build/fake-executor}
KEYS_BIN=${LOCALNET_KEYS:-$root/build/localnet-keys}
NUM_VALIDATORS=${NUM_VALIDATORS:-4}
FULL_NODES=${FULL_NODES:-0}
NUM_EXECUTORS=${NUM_EXECUTORS:-6}
AGENTS=${AGENTS:-3}
AGENT_BOND=${AGENT_BOND:-}
AGENT_MISS_ALLOWANCE=${AGENT_MISS_ALLOWANCE:-}
PORT_OFFSET=${PORT_OFFSET:-0}
BLOCK_TIME=${BLOCK_TIME:-700ms}
EPOCH_LENGTH=${EPOCH_LENGTH:-200}
POC_PHASE_BLOCKS=${POC_PHASE_BLOCKS:-0}
EXPIRATION_BLOCKS=${EXPIRATION_BLOCKS:-4}
SIGNED_BLOCKS_WINDOW=${SIGNED_BLOCKS_WINDOW:-}
DOWNTIME_H_THRESHOLD=${DOWNTIME_H_THRESHOLD:-4}
VE_ENABLE_HEIGHT=${VE_ENABLE_HEIGHT:-2}
CB_INITIAL_COOLDOWN=${CB_INITIAL_COOLDOWN:-10}
CB_MAX_COOLDOWN=${CB_MAX_COOLDOWN:-80}
CB_TRAFFIC_WINDOW=${CB_TRAFFIC_WINDOW:-}
CB_TRAFFIC_MIN_SAMPLES=${CB_TRAFFIC_MIN_SAMPLES:-}
CB_TRAFFIC_THRESHOLD_PCT=${CB_TRAFFIC_THRESHOLD_PCT:-}
CB_TRAFFIC_CONSECUTIVE=${CB_TRAFFIC_CONSECUTIVE:-}
MODEL=${MODEL:-llama-7b}
FLEET=${FLEET:-$([ "$NUM_EXECUTORS" -gt 16 ] && echo 1 || echo 0)}
MONITOR_PROBE_INTERVAL=${MONITOR_PROBE_INTERVAL:-150ms}
MONITOR_PROBE_TIMEOUT=${MONITOR_PROBE_TIMEOUT:-250ms}
MONITOR_VERDICT_TTL=${MONITOR_VERDICT_TTL:-2s}
MONITOR_MAX_CONCURRENCY=${MONITOR_MAX_CONCURRENCY:-}
TELEMETRY=${TELEMETRY:-1}
MONITOR_OFF_NODES=${MONITOR_OFF_NODES:-}
PRUNING=${PRUNING:-}
PRUNING_KEEP_RECENT=${PRUNING_KEEP_RECENT:-}
PRUNING_INTERVAL=${PRUNING_INTERVAL:-}
MIN_RETAIN_BLOCKS=${MIN_RETAIN_BLOCKS:-}
SNAPSHOT_INTERVAL=${SNAPSHOT_INTERVAL:-}
SNAPSHOT_KEEP_RECENT=${SNAPSHOT_KEEP_RECENT:-}
TX_INDEXER=${TX_INDEXER:-}
DISCARD_ABCI_RESPONSES=${DISCARD_ABCI_RESPONSES:-}
CHAIN_ID=${CHAIN_ID:-inferenced-local}
COSMOVISOR=${COSMOVISOR:-0}
COSMOVISOR_BIN=${COSMOVISOR_BIN:-$root/build/tools/cosmovisor}
COSMOVISOR_SKIP_BACKUP=${COSMOVISOR_SKIP_BACKUP:-false}
UPGRADE_NAME=${UPGRADE_NAME:-}
UPGRADE_BIN=${UPGRADE_BIN:-}
KEYS="$HOME_DIR/keys"
KR=(--keyring-backend test --keyring-dir "$KEYS")

# init_network and toml_set; the cosmovisor mode (its header is there).
# shellcheck source=scripts/localnet-init.sh
source "$root/scripts/localnet-init.sh"
# shellcheck source=scripts/localnet-cosmovisor.sh
source "$root/scripts/localnet-cosmovisor.sh"
# join: full nodes that join the running network (state sync or block sync).
# shellcheck source=scripts/localnet-join.sh
source "$root/scripts/localnet-join.sh"

rpc_port()  { echo $((26657 + 100 * $1 + PORT_OFFSET)); }
p2p_port()  { echo $((26656 + 100 * $1 + PORT_OFFSET)); }
abci_port() { echo $((26658 + 100 * $1 + PORT_OFFSET)); }
grpc_port() { echo $((9090 + 100 * $1 + PORT_OFFSET)); }
api_port()  { echo $((1317 + 100 * $1 + PORT_OFFSET)); }
prom_port() { echo $((26660 + 100 * $1 + PORT_OFFSET)); }
# Executor j listens on exec_port 0 + j: the fleet serves one contiguous
# range from its base (fake-executor -count).
exec_port() { echo $((8080 + $1 + PORT_OFFSET)); }
node_home() { echo "$HOME_DIR/node$1"; }
node_bin() { local v="NODE$1_BIN"; echo "${!v:-$BIN}"; }
# num_nodes counts the validators and the full nodes after them.
num_nodes() { echo $((NUM_VALIDATORS + FULL_NODES)); }

# ports prints every port of the network, one "<kind> <index> <port>" line
# each, and how the executors are served ("fleet 0 1": one process).
ports() {
  local i j
  for i in $(seq 0 $(($(num_nodes) - 1))); do
    printf 'rpc %d %d\np2p %d %d\nabci %d %d\nprometheus %d %d\ngrpc %d %d\nrest %d %d\n' \
      "$i" "$(rpc_port "$i")" "$i" "$(p2p_port "$i")" "$i" "$(abci_port "$i")" "$i" "$(prom_port "$i")" \
      "$i" "$(grpc_port "$i")" "$i" "$(api_port "$i")"
  done
  for j in $(seq 0 $((NUM_EXECUTORS - 1))); do printf 'exec %d %d\n' "$j" "$(exec_port "$j")"; done
  printf 'fleet 0 %d\n' "$FLEET"
}

# addresses holds "name address" for every key the network created.
ADDRESSES="$HOME_DIR/addresses"
declare -A ADDR=()
load_addresses() { local n a; while read -r n a; do ADDR[$n]=$a; done <"$ADDRESSES"; }
key_address() {
  [ -n "${ADDR[$1]:-}" ] || { log "no key $1 in $ADDRESSES"; return 1; }
  echo "${ADDR[$1]}"
}

# agent_keys lists the load driver's agent keys, agent0..agent{AGENTS-1}.
agent_keys() { for k in $(seq 0 $((AGENTS - 1))); do printf 'agent%d ' "$k"; done; }

log() { printf '[localnet] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# need checks what start needs; init also needs the keys tool (need_init).
need() {
  local f i
  for f in "$BIN" "$EXEC_BIN"; do
    [ -x "$f" ] || die "missing $f: run 'make build' first"
  done
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    [ -x "$(node_bin "$i")" ] || die "missing NODE${i}_BIN $(node_bin "$i")"
  done
  need_cosmovisor
  command -v jq >/dev/null || { log "jq is required (apt-get install -y jq)"; exit 1; }
  # The last executor port stays below the first gRPC port, and the last
  # validator's REST port below the first executor's.
  if [ "$(exec_port $((NUM_EXECUTORS - 1)))" -ge "$(grpc_port 0)" ]; then
    log "NUM_EXECUTORS=$NUM_EXECUTORS: executor ports would reach the gRPC port $(grpc_port 0) (at most 1010)"
    exit 1
  fi
  if [ "$(api_port $(($(num_nodes) - 1)))" -ge "$(exec_port 0)" ]; then
    log "NUM_VALIDATORS=$NUM_VALIDATORS, FULL_NODES=$FULL_NODES: REST ports would reach the executor ports from $(exec_port 0) (at most 68 nodes)"
    exit 1
  fi
}
need_init() { [ -x "$KEYS_BIN" ] || die "missing $KEYS_BIN: run 'make build' first"; }

# check_home: what start reads of an initialised home. Any release's init
# writes it; the addresses file is this release's (for the test harness).
check_home() {
  local i f
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    for f in config.toml app.toml genesis.json; do
      [ -f "$(node_home "$i")/config/$f" ] ||
        die "no $(node_home "$i")/config/$f: $HOME_DIR was initialised for fewer than NUM_VALIDATORS=$NUM_VALIDATORS validators, or not by localnet.sh ('reset' starts over)"
    done
  done
  mkdir -p "$HOME_DIR/logs" "$HOME_DIR/pids"
}

# running: the process group is alive (any member: under cosmovisor also an
# inferenced whose cosmovisor was killed, which still holds the ports). The
# pid in the file is the group's: setsid, started from this shell (no job
# control, so not a group leader), makes the new session in place, no fork.
running() { [ -s "$1" ] && kill -0 -- "-$(cat "$1")" 2>/dev/null; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# check_ports refuses to start over another network: a leftover process on
# one of our ports would otherwise answer for this one.
check_ports() {
  local p busy=()
  for i in $(seq 0 $(($(num_nodes) - 1))); do
    running "$HOME_DIR/pids/node$i.pid" && continue
    for p in $(rpc_port "$i") $(p2p_port "$i") $(abci_port "$i") $(prom_port "$i") $(grpc_port "$i") $(api_port "$i"); do
      port_in_use "$p" && busy+=("$p")
    done
  done
  if ! { [ "$FLEET" = 1 ] && running "$HOME_DIR/pids/executors.pid"; }; then
    for j in $(seq 0 $((NUM_EXECUTORS - 1))); do
      running "$HOME_DIR/pids/exec$j.pid" && continue
      p=$(exec_port "$j")
      port_in_use "$p" && busy+=("$p")
    done
  fi
  if [ ${#busy[@]} -gt 0 ]; then
    log "ports already in use: ${busy[*]} (another localnet? try PORT_OFFSET or 'scripts/localnet.sh stop')"
    return 1
  fi
}

start() {
  need
  [ -f "$HOME_DIR/chain-id" ] || { need_init; init_network; }
  check_home
  if [ "$COSMOVISOR" = 1 ]; then
    for i in $(seq 0 $((NUM_VALIDATORS - 1))); do cosmovisor_layout "$i"; done
  fi
  check_ports
  if [ "$FLEET" = 1 ]; then
    start_fleet
  else
    for j in $(seq 0 $((NUM_EXECUTORS - 1))); do
      local pid="$HOME_DIR/pids/exec$j.pid"
      running "$pid" && continue
      setsid "$EXEC_BIN" -listen "127.0.0.1:$(exec_port "$j")" -name "exec$j" -model "$MODEL" \
        >>"$HOME_DIR/logs/exec$j.log" 2>&1 &
      echo $! >"$pid"
    done
  fi
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do start_node "$i"; done
  # Full nodes joined before (`join`) come back with the network.
  for i in $(seq "$NUM_VALIDATORS" $(($(num_nodes) - 1))); do
    [ -f "$(node_home "$i")/config/config.toml" ] && start_node "$i"
  done
  if ! wait_for_height 2 60; then
    stop
    exit 1
  fi
  log "running: RPC http://127.0.0.1:$(rpc_port 0)  gRPC 127.0.0.1:$(grpc_port 0)  REST http://127.0.0.1:$(api_port 0)"
}

# start_node starts node I unless it runs; a validator under cosmovisor
# with COSMOVISOR=1, a full node always as the binary itself.
start_node() {
  local i=$1 pid="$HOME_DIR/pids/node$1.pid" env_var="NODE$1_ENV" h
  running "$pid" && return 0
  h=$(node_home "$i")
  # NODE<i>_ENV is a list of VAR=value words, split on purpose (and last,
  # so that it may override cosmovisor's settings).
  # shellcheck disable=SC2086
  if [ "$COSMOVISOR" = 1 ] && [ "$i" -lt "$NUM_VALIDATORS" ]; then
    start_cosmovisor "$i" ${!env_var:-}
  else
    setsid env ${!env_var:-} "$(node_bin "$i")" start --home "$h" --log_level warn --log_no_color \
      >>"$HOME_DIR/logs/node$i.log" 2>&1 &
  fi
  echo $! >"$pid"
}

# start_fleet serves every executor from one process and waits until its
# last port answers, so that no validator's first probes miss.
start_fleet() {
  local pid="$HOME_DIR/pids/executors.pid" last
  running "$pid" && return 0
  setsid "$EXEC_BIN" -listen "127.0.0.1:$(exec_port 0)" -count "$NUM_EXECUTORS" -name exec -model "$MODEL" \
    >>"$HOME_DIR/logs/executors.log" 2>&1 &
  echo $! >"$pid"
  last="http://127.0.0.1:$(exec_port $((NUM_EXECUTORS - 1)))/control/state"
  for _ in $(seq 1 100); do
    curl -fsS --max-time 1 "$last" >/dev/null 2>&1 && return 0
    running "$pid" || break
    sleep 0.1
  done
  log "the executor fleet did not come up; see $HOME_DIR/logs/executors.log"
  stop
  exit 1
}

height() {
  curl -fsS --max-time 2 "http://127.0.0.1:$(rpc_port "${1:-0}")/status" 2>/dev/null |
    jq -r '.result.sync_info.latest_block_height' 2>/dev/null || echo 0
}

wait_for_height() {
  local target=$1 timeout=$2 waited=0
  while [ "$(height)" -lt "$target" ]; do
    sleep 1
    waited=$((waited + 1))
    if [ "$waited" -ge "$timeout" ]; then
      log "no block $target after ${timeout}s; see $HOME_DIR/logs"
      return 1
    fi
  done
}

# stop signals every process group of the network (see running), so that
# cosmovisor and its inferenced stop together: TERM (cosmovisor forwards it
# too), then KILL to whatever is left after 10 s.
stop() {
  [ -d "$HOME_DIR/pids" ] || return 0
  local groups=() f g alive
  for f in "$HOME_DIR"/pids/*.pid; do
    [ -f "$f" ] || continue
    running "$f" && groups+=("-$(cat "$f")")
    rm -f "$f"
  done
  [ ${#groups[@]} = 0 ] && return 0
  kill -TERM -- "${groups[@]}" 2>/dev/null || true
  for _ in $(seq 1 20); do
    alive=0
    for g in "${groups[@]}"; do kill -0 -- "$g" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
  done
  kill -KILL -- "${groups[@]}" 2>/dev/null || true
  log "stopped ${#groups[@]} process groups"
}

status() {
  for i in $(seq 0 $(($(num_nodes) - 1))); do
    printf 'node%d  rpc :%d  height %s\n' "$i" "$(rpc_port "$i")" "$(height "$i")"
  done
  local api="http://127.0.0.1:$(api_port 0)/inferenced/inference/v1"
  curl -fsS --max-time 2 "$api/epoch" | jq -c '{epoch: .epoch.index, start: .epoch.start_height, next: .next_epoch_height, poc: .in_poc_phase}' || true
  curl -fsS --max-time 2 "$api/participants" |
    jq -r '.participants[] | "\(.address)  \(.status)  w=\(.weight)  ok=\(.current_epoch_stats.inference_count // 0)  missed=\(.current_epoch_stats.missed_requests // 0)  \(.inference_url)"' || true
  curl -fsS --max-time 2 "$api/excluded_executors" |
    jq -r '.executors[] | "breaker: \(.address)  \(.state)  \(.reason)  cooldown=\(.cooldown_blocks)  eligible=\(.eligible_height // 0)"' || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  reset) stop; rm -rf "$HOME_DIR"; log "removed $HOME_DIR" ;;
  init) need; need_init; init_network ;;
  ports) ports ;;
  join) join "${2:-}" ;;
  *) echo "usage: $0 start|stop|status|reset|init|ports|join I" >&2; exit 2 ;;
esac
