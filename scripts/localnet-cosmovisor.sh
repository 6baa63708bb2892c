# Sourced by scripts/localnet.sh: its cosmovisor mode (COSMOVISOR=1).
#
# Cosmovisor (COSMOVISOR=1): validator i runs as `cosmovisor run start
# --home <node home>` with DAEMON_NAME=inferenced, DAEMON_HOME=<node home>,
# DAEMON_ALLOW_DOWNLOAD_BINARIES=false, DAEMON_RESTART_AFTER_UPGRADE=true and
# DAEMON_POLL_INTERVAL=300ms (NODE<i>_ENV may override them), started by
# scripts/cosmovisor-run.sh (which makes the switch to a staged upgrade that
# cosmovisor v1.5.0 can miss), in the operator layout under
# <node home>/cosmovisor/:
#   genesis/bin/inferenced          a copy of NODE<i>_BIN or INFERENCED
#   upgrades/<UPGRADE_NAME>/bin/inferenced  a copy of UPGRADE_BIN
#   current -> genesis or upgrades/<name>   cosmovisor's (it makes it, and
#                                   moves it at an upgrade; cosmovisor-run.sh
#                                   too, when cosmovisor missed the upgrade)
# init and start create what is missing: copies, not links, so a rebuild of
# build/ never changes a node's binary. genesis/bin and current are never
# rewritten (after an upgrade the genesis binary is history and current is
# cosmovisor's); upgrades/<name>/bin is refreshed from UPGRADE_BIN when it
# differs. start needs only what any release's init writes (chain-id and the
# node homes), so it also runs a home made by an earlier localnet.sh.

# need_cosmovisor checks the cosmovisor settings (part of need).
need_cosmovisor() {
  if [ "$COSMOVISOR" = 1 ]; then
    [ -x "$COSMOVISOR_BIN" ] || die "missing $COSMOVISOR_BIN: run 'make cosmovisor' first (or set COSMOVISOR_BIN)"
    case $COSMOVISOR_SKIP_BACKUP in true | false) ;; *) die "COSMOVISOR_SKIP_BACKUP=$COSMOVISOR_SKIP_BACKUP: true or false" ;; esac
  fi
  if [ -n "$UPGRADE_NAME$UPGRADE_BIN" ]; then
    [ "$COSMOVISOR" = 1 ] || die "UPGRADE_NAME and UPGRADE_BIN are for cosmovisor: set COSMOVISOR=1"
    [ -n "$UPGRADE_NAME" ] && [ -n "$UPGRADE_BIN" ] || die "set both UPGRADE_NAME and UPGRADE_BIN"
    # cosmovisor looks for upgrades/<the plan's name, URL-escaped>: a name
    # that needs no escaping is the same directory for both.
    [[ $UPGRADE_NAME =~ ^[A-Za-z0-9._-]+$ ]] || die "UPGRADE_NAME=$UPGRADE_NAME: letters, digits, '.', '_' and '-' only"
    [ -x "$UPGRADE_BIN" ] || die "missing UPGRADE_BIN $UPGRADE_BIN"
  fi
}

# copy_bin SRC DST copies through a rename, so that a DST being run (which
# cp cannot write: text file busy) is replaced whole.
copy_bin() { cp "$1" "$2.tmp.$$" && chmod +x "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"; }

# cosmovisor_layout creates what is missing of node i's cosmovisor layout
# (above).
cosmovisor_layout() {
  local cv bin cur up
  cv="$(node_home "$1")/cosmovisor"
  bin=$(node_bin "$1")
  if [ ! -e "$cv/genesis/bin/inferenced" ]; then
    mkdir -p "$cv/genesis/bin"
    copy_bin "$bin" "$cv/genesis/bin/inferenced"
  elif ! cmp -s "$bin" "$cv/genesis/bin/inferenced"; then
    cur=$(readlink "$cv/current" 2>/dev/null || true)
    case $cur in */upgrades/*) ;; *) log "node$1: kept $cv/genesis/bin/inferenced, which differs from $bin ('reset' starts over)" ;; esac
  fi
  if [ -n "$UPGRADE_NAME" ]; then
    up="$cv/upgrades/$UPGRADE_NAME/bin/inferenced"
    mkdir -p "${up%/*}"
    cmp -s "$UPGRADE_BIN" "$up" || copy_bin "$UPGRADE_BIN" "$up"
  fi
}

# start_cosmovisor I [VAR=value...]: validator i under cosmovisor, in its
# own session (the caller records $! as the group), through
# cosmovisor-run.sh; the extra words override the environment above.
start_cosmovisor() {
  local i=$1 h
  shift
  h=$(node_home "$i")
  setsid env DAEMON_NAME=inferenced DAEMON_HOME="$h" DAEMON_ALLOW_DOWNLOAD_BINARIES=false \
    DAEMON_RESTART_AFTER_UPGRADE=true DAEMON_POLL_INTERVAL=300ms UNSAFE_SKIP_BACKUP="$COSMOVISOR_SKIP_BACKUP" \
    COSMOVISOR_COLOR_LOGS=false COSMOVISOR_TIMEFORMAT_LOGS=rfc3339nano "$@" \
    bash "$root/scripts/cosmovisor-run.sh" "$h" \
    "$COSMOVISOR_BIN" run start --home "$h" --log_level warn --log_no_color >>"$HOME_DIR/logs/node$i.log" 2>&1 &
}
