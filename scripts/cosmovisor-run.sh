#!/usr/bin/env bash
# cosmovisor-run.sh: cosmovisor, plus the upgrade switch it can miss.
#
#   scripts/cosmovisor-run.sh HOME COMMAND [ARGS...]
#       run COMMAND (cosmovisor run start --home HOME ...), switching first
#   scripts/cosmovisor-run.sh --switch HOME
#       only the switch, e.g. as a systemd unit's ExecStartPre=
#
# The switch. HOME/data/upgrade-info.json is what x/upgrade writes when the
# chain reaches a plan's height on a binary without a handler for it. When it
# names an upgrade that HOME/cosmovisor/current does not point at, and
# cosmovisor/upgrades/<name>/bin/$DAEMON_NAME is staged, do what cosmovisor
# does at an upgrade: copy data/ to $DAEMON_DATA_BACKUP_DIR/data-backup-<date>
# (unless UNSAFE_SKIP_BACKUP=true), point current at upgrades/<name>, and
# write the plan to upgrades/<name>/upgrade-info.json, which is how cosmovisor
# knows the upgrade it runs (so it does not upgrade twice). No file, a plan
# already current, or a plan whose binary is not staged: nothing changes.
#
# Why. cosmovisor v1.5.0 can leave a node on the old binary after the halt:
#   - it starts whatever current points at without reading upgrade-info.json
#     first (cosmos/cosmos-sdk#25861, open);
#   - a node catching up (blocksync) writes upgrade-info.json and exits in the
#     same instant. cosmovisor's file watcher and its exit path then check the
#     file at once; the one that loses finds it already seen, and cosmovisor
#     exits with the node's "exit status 2", current unchanged.
# So run mode switches before COMMAND starts and, when COMMAND fails,
# switches again and restarts it only if that switched: at most once per
# staged upgrade. Any other failure is COMMAND's exit status, unchanged.
#
# Limit: the file is trusted to be x/upgrade's, written at the halt. A file
# that `cosmovisor add-upgrade --upgrade-height` writes ahead of its height
# would be switched to early; do not combine the two.
#
# Environment: DAEMON_NAME (inferenced), UNSAFE_SKIP_BACKUP (false),
# DAEMON_DATA_BACKUP_DIR (HOME), as cosmovisor reads them.
set -euo pipefail

say() { printf '%s cosmovisor-run: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$*"; }
die() { say "$*" >&2; exit 1; }

# switch HOME: the switch above. Exit status 0 when it switched, 1 when
# there was nothing to switch; an error (2) when it could not do it.
switch() {
  local home=$1 info name cv up cur backup
  local daemon=${DAEMON_NAME:-inferenced} skip=${UNSAFE_SKIP_BACKUP:-false}
  info="$home/data/upgrade-info.json"
  cv="$home/cosmovisor"
  [ -s "$info" ] || return 1
  name=$(jq -er '.name | select(type == "string" and . != "")' "$info" 2>/dev/null) ||
    { say "$info: no plan name in it; left to cosmovisor"; return 1; }
  # cosmovisor's directory is the URL-escaped name: for these characters,
  # the name itself.
  [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || { say "plan \"$name\": a name cosmovisor escapes; left to cosmovisor"; return 1; }
  up="$cv/upgrades/$name"
  cur=$(readlink "$cv/current" 2>/dev/null || true)
  [ -n "$cur" ] && [ "$(readlink -f "$cv/current")" = "$(readlink -f "$up")" ] && return 1
  [ -x "$up/bin/$daemon" ] || { say "plan $name: $up/bin/$daemon is not staged; left to cosmovisor"; return 1; }

  case $skip in
    true) say "plan $name: UNSAFE_SKIP_BACKUP=true, no backup" ;;
    false)
      backup="${DAEMON_DATA_BACKUP_DIR:-$home}/data-backup-$(date +%Y-%-m-%-d)"
      [ -e "$backup" ] && backup="$backup-$name"
      [ -e "$backup" ] && { say "plan $name: kept the backup already at $backup"; backup=; }
      if [ -n "$backup" ]; then
        cp -a "$home/data" "$backup.tmp.$$" && mv "$backup.tmp.$$" "$backup" ||
          { say "plan $name: backup to $backup failed"; return 2; }
        say "plan $name: data backed up to $backup"
      fi
      ;;
    *) say "UNSAFE_SKIP_BACKUP=$skip: true or false"; return 2 ;;
  esac
  cp "$info" "$up/upgrade-info.json.tmp.$$" && mv -f "$up/upgrade-info.json.tmp.$$" "$up/upgrade-info.json" &&
    ln -sfn "$up" "$cv/current.tmp.$$" && mv -fT "$cv/current.tmp.$$" "$cv/current" ||
    { say "plan $name: could not point $cv/current at $up"; return 2; }
  say "plan $name: switched $cv/current from ${cur:-nothing} to $up"
}

# switched HOME: switch, and stop on its error; status 0 when it switched.
switched() {
  local rc=0
  switch "$1" || rc=$?
  [ "$rc" = 2 ] && die "the switch failed; current is unchanged"
  return "$rc"
}

command -v jq >/dev/null || die "jq is required (apt-get install -y jq)"
case ${1:-} in
  --switch)
    [ $# = 2 ] || die "usage: $0 --switch HOME"
    switched "$2" || true
    ;;
  "" | -*) die "usage: $0 HOME COMMAND [ARGS...] | $0 --switch HOME" ;;
  *)
    [ $# -ge 2 ] || die "usage: $0 HOME COMMAND [ARGS...]"
    home=$1
    shift
    switched "$home" || true
    rc=0
    "$@" || rc=$?
    while [ "$rc" != 0 ] && switched "$home"; do
      say "$1 exited with status $rc at a pending upgrade; starting it again"
      rc=0
      "$@" || rc=$?
    done
    exit "$rc"
    ;;
esac
