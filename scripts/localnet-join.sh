# Sourced by scripts/localnet.sh: `join I` makes full node I (after the
# validators, FULL_NODES) as an operator joining a running network would,
# and starts it: node 0's genesis, the validators as persistent peers, no
# health monitor unless JOIN_MONITOR says so (a full node votes on
# nothing), and JOIN_MODE's way to its state (README.md, "Joining a
# running network").
#   JOIN_MODE     block-sync: replay every block from genesis; state-sync:
#                 restore a validator's latest snapshot (SNAPSHOT_INTERVAL),
#                 then block-sync from there                  (block-sync)
#   TRUST_HEIGHT  state sync's trusted height, its hash read from node 0
#                 (node 0's latest height)
#   JOIN_MONITOR  on: keep the health monitor, configured as a validator's,
#                 for a node that is to sign for a validator (a consensus
#                 key rotation to its key); it starts on the node's first
#                 vote extension (monitor.Lazy), which abstains, and
#                 attests from the next; off: no monitor           (off)
JOIN_MODE=${JOIN_MODE:-block-sync}
TRUST_HEIGHT=${TRUST_HEIGHT:-}
JOIN_MONITOR=${JOIN_MONITOR:-off}

# join I makes full node I's home the first time (node 0's genesis, the
# validators as peers, the health monitor as JOIN_MONITOR says, and
# JOIN_MODE's sync) and starts it.
join() {
  local i=${1:-}
  [[ "$i" =~ ^[0-9]+$ ]] && [ "$i" -ge "$NUM_VALIDATORS" ] && [ "$i" -lt "$(num_nodes)" ] ||
    die "join '$i': full nodes are $NUM_VALIDATORS..$(($(num_nodes) - 1)) (FULL_NODES=$FULL_NODES)"
  need
  check_home
  [ -f "$(node_home "$i")/config/config.toml" ] || init_full_node "$i"
  start_node "$i"
  log "node$i started ($JOIN_MODE): RPC http://127.0.0.1:$(rpc_port "$i"), log $HOME_DIR/logs/node$i.log"
}

init_full_node() {
  local i=$1 h; h=$(node_home "$i")
  case $JOIN_MODE in block-sync | state-sync) ;; *) die "JOIN_MODE=$JOIN_MODE: block-sync or state-sync" ;; esac
  case $JOIN_MONITOR in on | off) ;; *) die "JOIN_MONITOR=$JOIN_MONITOR: on or off" ;; esac
  "$BIN" init "node$i" --chain-id "$CHAIN_ID" --home "$h" >/dev/null 2>&1 || die "init node$i failed"
  cp "$(node_home 0)/config/genesis.json" "$h/config/genesis.json"
  configure_node "$i" "$(validator_peers)"
  [ "$JOIN_MONITOR" = on ] || toml_set "$h/config/app.toml" health-monitor enabled false
  [ "$JOIN_MODE" = state-sync ] && state_sync_config "$i"
  return 0
}

# state_sync_config I: restore from a snapshot served by the validators,
# verified by a light client that trusts node 0's header at TRUST_HEIGHT.
state_sync_config() {
  local cfg th hash
  cfg="$(node_home "$1")/config/config.toml"
  th=${TRUST_HEIGHT:-$(height 0)}
  hash=$(curl -fsS --max-time 5 "http://127.0.0.1:$(rpc_port 0)/block?height=$th" | jq -r '.result.block_id.hash // empty')
  [ -n "$hash" ] || die "state sync: no block $th on node 0 to trust"
  toml_set "$cfg" statesync enable true
  toml_set "$cfg" statesync rpc_servers "\"http://127.0.0.1:$(rpc_port 0),http://127.0.0.1:$(rpc_port 1)\""
  toml_set "$cfg" statesync trust_height "$th"
  toml_set "$cfg" statesync trust_hash "\"$hash\""
  toml_set "$cfg" statesync trust_period "\"168h0m0s\""
  toml_set "$cfg" statesync discovery_time "\"5s\""
  log "node$1: state sync trusting height $th ($hash)"
}
