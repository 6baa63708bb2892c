# Sourced by scripts/localnet.sh: init_network writes a fresh network home
# (keys, genesis with its participants, agents and params, each node's
# config), from localnet.sh's settings.

# toml_set FILE SECTION KEY VALUE: set KEY in [SECTION] ("" = top level).
toml_set() {
  local file=$1 section=$2 key=$3 value=$4 tmp
  tmp=$(mktemp)
  awk -v section="$section" -v key="$key" -v value="$value" '
    /^\[/ { current = substr($0, 2, length($0) - 2) }
    current == section && $0 ~ "^" key " *=" { print key " = " value; next }
    { print }
  ' "$file" >"$tmp" && mv "$tmp" "$file"
}

# canary_config APP writes the canary keys of [health-monitor] that are set
# (localnet.sh's MONITOR_CANARY_*); an unset one keeps the binary's default.
#
# The binary's defaults (monitor/config.go: a canary a minute or so per
# executor, minutes of TTL) are sized for gonka's ~6 s blocks, thousands of
# executors and a real executor's baseline of failures; on the localnet's
# 0.5-0.7 s blocks they would take many minutes to say anything. For up
# to 16 executors localnet.sh defaults to:
#   canary-interval 1s (2 blocks): each validator canaries each executor
#     about once per two blocks, so a validator meets a fault's first
#     failed canary within a few blocks; 4 validators x 6 executors is 24
#     canaries/s in all, a fraction of a core;
#   canary-suspect-interval 200ms: after a miss (the validator's CUSUM
#     above 0) or in a burst while the chain holds the executor, canaries
#     come 5 a second, so a 28% executor reaches the alarm (3 net misses)
#     within a few seconds of its first failed canary and shows in the
#     attested rate within a few blocks of the fault, and a fixed
#     executor's sum is back at 0 (34 oks at most) within its cooldown;
#   canary-timeout 2s: 40 times the fake executor's 50 ms, so a busy 2-core
#     machine makes no false misses;
#   canary-window 16, canary-min-samples 4: a fake executor fails nothing
#     unless told, so a short window is no noise, and 16 outcomes put a
#     28% executor 3 misses (19%) or more above the 15-point floor
#     (abci/ve ServiceFloor) at ~87% of validators at any time: the lower
#     median of 4 is a service miss in about 9 blocks of 10;
#   canary-ttl 20s: a full window at the background rate (16 x 1s plus
#     jitter), above the floor Validate sets (4 x 1s + 2s), so a healthy
#     executor's report is always known and the service ok that marks it
#     serving comes every block.
# A fleet (above 16 executors) keeps the binary's defaults: 4 validators
# canarying 1,000 executors every second would be 4,000 inferences/s.
canary_config() {
  local app=$1 key var value small=""
  [ "$NUM_EXECUTORS" -gt 16 ] || small=1
  declare -A def=([interval]=1s [suspect-interval]=200ms [timeout]=2s [window]=16 [min-samples]=4 [ttl]=20s)
  for key in enabled interval suspect-interval timeout window min-samples ttl max-concurrency baseline-pct degraded-pct alarm; do
    var="MONITOR_CANARY_$(tr 'a-z-' 'A-Z_' <<<"$key")"
    value=${!var:-${small:+${def[$key]:-}}}
    [ -n "$value" ] || continue
    case $key in
      *interval | timeout | ttl) toml_set "$app" health-monitor "canary-$key" "\"$value\"" ;;
      *) toml_set "$app" health-monitor "canary-$key" "$value" ;;
    esac
  done
}

# quiet runs a command with its output hidden, unless it fails: then the
# script stops and says why, with the command's "Error:" lines or else its
# last line (the SDK prints its usage, then the error). Without it a
# genesis the binary refuses (EPOCH_LENGTH not above CB_MAX_COOLDOWN) ended
# `start` after "initialising" with no reason.
quiet() {
  local out why
  if out=$("$@" 2>&1); then return 0; fi
  why=$(grep '^Error:' <<<"$out" || awk 'NF { last = $0 } END { print last }' <<<"$out")
  die "$(basename "$1") ${2:-} ${3:-} failed: $why"
}

init_network() {
  log "initialising $NUM_VALIDATORS validators and $NUM_EXECUTORS executors in $HOME_DIR"
  rm -rf "$HOME_DIR"
  mkdir -p "$HOME_DIR/logs" "$HOME_DIR/pids" "$KEYS"
  local genesis="$(node_home 0)/config/genesis.json"

  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    quiet "$BIN" init "node$i" --chain-id "$CHAIN_ID" --home "$(node_home "$i")"
  done
  # Every key in one process (one `keys add` each would take minutes at
  # 1,000 executors).
  local names=() i j
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do names+=("val$i"); done
  for name in $(agent_keys) griefer outsider; do names+=("$name"); done
  for j in $(seq 0 $((NUM_EXECUTORS - 1))); do names+=("exec$j"); done
  "$KEYS_BIN" -keyring-dir "$KEYS" "${names[@]}" >"$ADDRESSES"
  load_addresses

  local n0; n0=$(node_home 0)
  awk '{ print $2 }' "$ADDRESSES" | jq -R '{address: ., coins: [{denom: "stake", amount: "1000000000000"}]}' |
    jq -s . >"$HOME_DIR/accounts.json"
  "$BIN" genesis bulk-add-genesis-account "$HOME_DIR/accounts.json" --home "$n0" >/dev/null
  # exec0 through the binary, which writes (and checks) a participant and
  # adds its bond to the inference module account; the others are copies
  # of its record with their own address, URL, weight, PoC flag and bond
  # (weight x participant_bond_per_weight, which the minimum bond never
  # exceeds at weight >= 100), added in one edit that also adds their bonds
  # to the module balance (genesis validate and InitGenesis check them all).
  participant_weight() { echo $((100 + 10 * $1)); }
  participant_poc() { [ $(($1 % 2)) = 0 ] && echo true || echo false; }
  "$BIN" genesis add-genesis-participant "$(key_address exec0)" "http://127.0.0.1:$(exec_port 0)" "$MODEL" \
    --weight "$(participant_weight 0)" --poc-available="$(participant_poc 0)" --home "$n0" >/dev/null
  if [ "$NUM_EXECUTORS" -gt 1 ]; then
    for j in $(seq 1 $((NUM_EXECUTORS - 1))); do
      printf '%s http://127.0.0.1:%d %d %s\n' "$(key_address "exec$j")" "$(exec_port "$j")" \
        "$(participant_weight "$j")" "$(participant_poc "$j")"
    done | jq -R 'split(" ") | {address: .[0], inference_url: .[1], weight: .[2], poc_available: (.[3] == "true")}' |
      jq -s . >"$HOME_DIR/participants.json"
    # The module account is the one balance not funded from accounts.json;
    # a written-out supply grows by the same bonds.
    jq --slurpfile more "$HOME_DIR/participants.json" --slurpfile accts "$HOME_DIR/accounts.json" '
      .app_state.inference.participants[0] as $t
      | (.app_state.inference.params.participant_bond_per_weight | tonumber) as $per
      | [$more[0][] | $t + . + {bond: {denom: $t.bond.denom, amount: ((.weight | tonumber) * $per | tostring)}}] as $new
      | ([$new[].bond.amount | tonumber] | add) as $sum
      | ([$accts[0][].address]) as $funded
      | .app_state.inference.participants += $new
      | .app_state.bank.balances |= map(
          if (.address as $a | $funded | index($a)) == null
          then .coins |= map(if .denom == $t.bond.denom then .amount = ((.amount | tonumber) + $sum | tostring) else . end)
          else . end)
      | .app_state.bank.supply |= map(if .denom == $t.bond.denom then .amount = ((.amount | tonumber) + $sum | tostring) else . end)
    ' "$genesis" >"$genesis.tmp" && mv "$genesis.tmp" "$genesis"
  fi

  # The bond defaults to the genesis minimum, which the binary wrote from
  # its default params: the script does not spell the amount again.
  local bond=$AGENT_BOND
  [ -n "$bond" ] || bond=$(jq -r '.app_state.inference.params.transfer_agent_min_bond | "\(.amount)\(.denom)"' "$genesis")
  for name in $(agent_keys) griefer; do
    "$BIN" genesis add-genesis-transfer-agent "$(key_address "$name")" "$bond" --home "$n0" >/dev/null
  done

  jq --arg el "$EPOCH_LENGTH" --arg poc "$POC_PHASE_BLOCKS" --arg exp "$EXPIRATION_BLOCKS" \
    --arg cbi "$CB_INITIAL_COOLDOWN" --arg cbm "$CB_MAX_COOLDOWN" --arg dh "$DOWNTIME_H_THRESHOLD" \
    --arg veh "$VE_ENABLE_HEIGHT" \
    --arg tw "$CB_TRAFFIC_WINDOW" --arg tm "$CB_TRAFFIC_MIN_SAMPLES" \
    --arg tp "$CB_TRAFFIC_THRESHOLD_PCT" --arg tc "$CB_TRAFFIC_CONSECUTIVE" \
    --arg ma "$AGENT_MISS_ALLOWANCE" --arg sbw "$SIGNED_BLOCKS_WINDOW" '
    def set_if($key; $v): if $v == "" then . else .app_state.inference.params[$key] = $v end;
    .app_state.inference.params.epoch_length = $el
    | .app_state.inference.params.poc_phase_blocks = $poc
    | .app_state.inference.params.expiration_blocks = $exp
    | .app_state.inference.params.health_cb_initial_cooldown_blocks = $cbi
    | .app_state.inference.params.health_cb_max_cooldown_blocks = $cbm
    | .app_state.inference.params.downtime_h_threshold = $dh
    | set_if("health_cb_traffic_window_samples"; $tw)
    | set_if("health_cb_traffic_min_samples"; $tm)
    | set_if("health_cb_traffic_miss_threshold_pct"; $tp)
    | set_if("health_cb_traffic_consecutive_misses"; $tc)
    | set_if("transfer_agent_miss_allowance"; $ma)
    | if $sbw == "" then . else .app_state.slashing.params.signed_blocks_window = $sbw end
    | .app_state.gov.params.voting_period = "20s"
    | .app_state.gov.params.expedited_voting_period = "10s"
    | .app_state.gov.params.min_deposit[0].amount = "1000"
    | .consensus.params.block.max_gas = "100000000"
    | .consensus.params.abci.vote_extensions_enable_height = $veh
  ' "$genesis" >"$genesis.tmp" && mv "$genesis.tmp" "$genesis"

  mkdir -p "$n0/config/gentx"
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    local h; h=$(node_home "$i")
    [ "$i" = 0 ] || cp "$genesis" "$h/config/genesis.json"
    quiet "$BIN" genesis gentx "val$i" 100000000stake --chain-id "$CHAIN_ID" "${KR[@]}" --home "$h" \
      --output-document "$n0/config/gentx/val$i.json"
  done
  quiet "$BIN" genesis collect-gentxs --home "$n0"
  "$BIN" genesis validate "$genesis" --home "$n0" >/dev/null

  local peers; peers=$(validator_peers)
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    [ "$i" = 0 ] || cp "$genesis" "$(node_home "$i")/config/genesis.json"
    configure_node "$i" "$peers"
  done
  if [ "$COSMOVISOR" = 1 ]; then
    for i in $(seq 0 $((NUM_VALIDATORS - 1))); do cosmovisor_layout "$i"; done
  fi
  printf '%s\n' "$CHAIN_ID" >"$HOME_DIR/chain-id"
}

# validator_peers is every validator's node id@address, comma-separated.
validator_peers() {
  local i id peers=""
  for i in $(seq 0 $((NUM_VALIDATORS - 1))); do
    id=$("$BIN" comet show-node-id --home "$(node_home "$i")")
    peers="${peers:+$peers,}$id@127.0.0.1:$(p2p_port "$i")"
  done
  echo "$peers"
}

# configure_node I PEERS writes node I's config.toml and app.toml: its
# ports, the validators as persistent peers, and localnet.sh's settings.
configure_node() {
  local i=$1 peers=$2 h cfg app
  h=$(node_home "$i"); cfg="$h/config/config.toml"; app="$h/config/app.toml"
  toml_set "$cfg" "" proxy_app "\"tcp://127.0.0.1:$(abci_port "$i")\""
  toml_set "$cfg" rpc laddr "\"tcp://127.0.0.1:$(rpc_port "$i")\""
  toml_set "$cfg" p2p laddr "\"tcp://127.0.0.1:$(p2p_port "$i")\""
  toml_set "$cfg" p2p persistent_peers "\"$peers\""
  toml_set "$cfg" p2p addr_book_strict false
  toml_set "$cfg" p2p allow_duplicate_ip true
  toml_set "$cfg" rpc pprof_laddr '""'
  toml_set "$cfg" consensus timeout_commit "\"$BLOCK_TIME\""
  toml_set "$app" "" minimum-gas-prices '"0stake"'
  toml_set "$app" api enable true
  toml_set "$app" api address "\"tcp://127.0.0.1:$(api_port "$i")\""
  toml_set "$app" grpc address "\"127.0.0.1:$(grpc_port "$i")\""
  toml_set "$app" grpc-web enable false
  # The fake executors listen on loopback. Probe several times per block,
  # so that an outage usually shows in the very next vote extension.
  toml_set "$app" health-monitor allow-private true
  toml_set "$app" health-monitor probe-interval "\"$MONITOR_PROBE_INTERVAL\""
  toml_set "$app" health-monitor probe-timeout "\"$MONITOR_PROBE_TIMEOUT\""
  toml_set "$app" health-monitor verdict-ttl "\"$MONITOR_VERDICT_TTL\""
  if [ -n "$MONITOR_MAX_CONCURRENCY" ]; then
    toml_set "$app" health-monitor max-concurrency "$MONITOR_MAX_CONCURRENCY"
  fi
  canary_config "$app"
  if [ "$TELEMETRY" = 1 ]; then
    # One endpoint per node serves every series, CometBFT's and the
    # app's inference_* (docs/metrics.md); the app's need telemetry on.
    toml_set "$cfg" instrumentation prometheus true
    toml_set "$cfg" instrumentation prometheus_listen_addr "\"127.0.0.1:$(prom_port "$i")\""
    toml_set "$app" telemetry enabled true
    toml_set "$app" telemetry prometheus-retention-time 60
  fi
  if [[ " $MONITOR_OFF_NODES " == *" $i "* ]]; then
    toml_set "$app" health-monitor enabled false
  fi
  # State and block-store size (README.md, "Disk"): each unset knob
  # keeps the binary's default.
  [ -z "$PRUNING" ] || toml_set "$app" "" pruning "\"$PRUNING\""
  [ -z "$PRUNING_KEEP_RECENT" ] || toml_set "$app" "" pruning-keep-recent "\"$PRUNING_KEEP_RECENT\""
  [ -z "$PRUNING_INTERVAL" ] || toml_set "$app" "" pruning-interval "\"$PRUNING_INTERVAL\""
  [ -z "$MIN_RETAIN_BLOCKS" ] || toml_set "$app" "" min-retain-blocks "$MIN_RETAIN_BLOCKS"
  [ -z "$SNAPSHOT_INTERVAL" ] || toml_set "$app" state-sync snapshot-interval "$SNAPSHOT_INTERVAL"
  [ -z "$SNAPSHOT_KEEP_RECENT" ] || toml_set "$app" state-sync snapshot-keep-recent "$SNAPSHOT_KEEP_RECENT"
  [ -z "$TX_INDEXER" ] || toml_set "$cfg" tx_index indexer "\"$TX_INDEXER\""
  [ -z "$DISCARD_ABCI_RESPONSES" ] || toml_set "$cfg" storage discard_abci_responses "$DISCARD_ABCI_RESPONSES"
  "$BIN" config set client chain-id "$CHAIN_ID" --home "$h" >/dev/null
  "$BIN" config set client keyring-backend test --home "$h" >/dev/null
  "$BIN" config set client node "tcp://127.0.0.1:$(rpc_port "$i")" --home "$h" >/dev/null
}
