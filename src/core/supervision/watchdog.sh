# pi-unified-exec: the host-death watchdog of one runtime (POSIX sh, no bashisms).
#
# Owns: stopping a runtime's jobs when the Pi process that started them is gone without an orderly
# shutdown (SIGKILL, an OOM kill, a crash, a signal with no handler left), and the runtime's registry
# file, which lets a later Pi process finish that work if this watchdog was killed as well.
#
# Usage: /bin/sh watchdog.sh <registry-file or -> <host-pid> <host-start or ?>
#
# Standard input is a pipe whose other end only the Pi process holds (Node opens it close-on-exec,
# so no job inherits it). The host writes one line per event:
#   + <pgid> <leader-start|?|-> <command>   a job's group; its leader leads its own session (pgid = sid)
#   x <pgid> [<ms>]                         the leader exited (the group may live on), <ms> ago
#   - <pgid>                                the group is proven empty: forget it
#   q                                       orderly shutdown: exit and touch nothing
# End of input without "q" means the host is gone, however it died. Every registered group that is
# still ours gets SIGTERM (on Linux with every other group of its session), and what is left of them
# SIGKILL one second later. "Still ours": the leader is the same process (pid and start time), or
# the leader is gone and a member of its session started no later than the moment the leader was
# known to have exited: a group id cannot be handed out again while a process still holds it, and a
# group that took the id later holds only processes started after that moment.

trap '' HUP INT
set -f

# Start time of process $1 in $start (empty when there is no such process): Linux /proc/<pid>/stat
# field 22 (clock ticks since boot); elsewhere ps's lstart, spaces made underscores.
start_of() {
  start=
  if [ -n "$linux" ]; then
    { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
    set -- ${stat##*") "}
    start=${20}
  else
    set -- $(LC_ALL=C ps -o lstart= -p "$1" 2>/dev/null)
    [ $# -ge 5 ] && start="${1}_${2}_${3}_${4}_${5}"
  fi
  return 0
}

# Now in $now, in the clock and unit of process start times (Linux): the start time of a subshell
# forked for the purpose, which needs no assumption about /proc/uptime's clock or rounding. "-"
# elsewhere.
now_ticks() {
  now=-
  [ -n "$linux" ] || return 0
  now=$(
    { read -r stat </proc/self/stat; } 2>/dev/null || exit 0
    set -- ${stat##*") "}
    printf '%s' "${20}"
  )
  case $now in '' | *[!0-9]*) now=- ;; esac
}

header() {
  printf '%s\n' "pi-unified-exec-registry 1" "host $host_pid $host_start" "watchdog $$ $my_start"
}

# Rewrites the registry from memory, so the journal stays short however many jobs come and go.
compact() {
  [ "$registry" = - ] && return 0
  {
    header
    IFS=$nl
    for e in $entries; do
      IFS=$sp
      split_entry "$e"
      printf '+ %s %s %s %s\n' "$e_pgid" "$e_start" "$e_at" "$e_cmd"
      [ "$e_exit" = - ] || printf 'x %s %s\n' "$e_pgid" "$e_exit"
    done
    IFS=$sp
  } 2>/dev/null >"$registry.tmp" && mv -f "$registry.tmp" "$registry" 2>/dev/null
  journal_lines=0
}

journal() {
  [ "$registry" = - ] && return 0
  { printf '%s\n' "$1" >>"$registry"; } 2>/dev/null
  journal_lines=$((journal_lines + 1))
  [ "$journal_lines" -gt 400 ] && compact
  return 0
}

split_entry() {
  e_pgid=${1%% *}
  rest=${1#* }
  e_start=${rest%% *}
  rest=${rest#* }
  e_at=${rest%% *}
  rest=${rest#* }
  e_exit=${rest%% *}
  e_cmd=${rest#* }
}

# Replaces the entry of group $1 with line $2 (empty: removes it).
replace_entry() {
  kept=
  IFS=$nl
  for e in $entries; do
    case $e in "$1 "*) ;; *) kept="$kept$e$nl" ;; esac
  done
  IFS=$sp
  [ -n "$2" ] && kept="$kept$2$nl"
  entries=$kept
}

find_entry() {
  found=
  IFS=$nl
  for e in $entries; do
    case $e in "$1 "*) found=$e ;; esac
  done
  IFS=$sp
}

valid_pgid() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
  [ "$1" -gt 1 ]
}

on_register() {
  r_args=${1#+ }
  r_pgid=${r_args%% *}
  r_args=${r_args#* }
  r_start=${r_args%% *}
  r_cmd=${r_args#* }
  valid_pgid "$r_pgid" || return 0
  now_ticks
  if [ "$r_start" = "?" ]; then
    start_of "$r_pgid"
    r_start=${start:--}
  fi
  # A leader already gone when registered: the group was last known whole now.
  r_exit=-
  [ "$r_start" = - ] && r_exit=$now
  replace_entry "$r_pgid" "$r_pgid $r_start $now $r_exit $r_cmd"
  journal "+ $r_pgid $r_start $now $r_cmd"
  [ "$r_exit" = - ] || journal "x $r_pgid $r_exit"
}

# A watchdog started again after the first died hears of earlier exits only then; the host says how
# long ago each was, so it still knows when the group was last whole.
on_exit() {
  # Parsed first into names of its own: the helpers below set variables of theirs (sh has no locals).
  x_args=${1#x }
  x_pgid=${x_args%% *}
  x_ago=${x_args#"$x_pgid"}
  x_ago=${x_ago# }
  case $x_ago in '' | *[!0-9]*) x_ago=0 ;; esac
  valid_pgid "$x_pgid" || return 0
  find_entry "$x_pgid"
  [ -n "$found" ] || return 0
  split_entry "$found"
  now_ticks
  at=$now
  [ "$at" = - ] || at=$((at - x_ago * hz / 1000))
  [ "$at" = - ] && [ "$e_exit" != - ] && return 0
  if [ "$e_exit" != - ] && [ "$at" != - ]; then [ "$at" -lt "$e_exit" ] || return 0; fi
  replace_entry "$x_pgid" "$e_pgid $e_start $e_at $at $e_cmd"
  journal "x $x_pgid $at"
}

on_forget() {
  f_pgid=${1#- }
  valid_pgid "$f_pgid" || return 0
  replace_entry "$f_pgid" ""
  now_ticks
  journal "- $f_pgid $now"
}

# Linux: the processes of registered sessions and groups, one "pid pgrp sid start state" line each.
# Every process's stat comes from one `cat`: the shell's `read` takes one byte per system call (some
# 30 000 calls for 120 processes), which made each scan take 0.3-0.5 s on a busy machine.
snapshot() {
  procs=
  wanted=" "
  IFS=$nl
  for e in $entries; do wanted="$wanted${e%% *} "; done
  set +f
  all=$(cat /proc/[0-9]*/stat 2>/dev/null)
  set -f
  for stat in $all; do
    IFS=$sp
    s_pid=${stat%% *}
    set -- ${stat##*") "}
    # A line that is not a whole stat (a name holding a line break) names nothing.
    case $s_pid in '' | *[!0-9]*) set -- ;; esac
    if [ $# -ge 20 ]; then
      case $wanted in
        *" $3 "* | *" $4 "* | *" $s_pid "*) procs="$procs$s_pid $3 $4 ${20} $1$nl" ;;
      esac
    fi
    IFS=$nl
  done
  IFS=$sp
}

# Adds to $targets the groups to signal for group $1 (leader start $2, exit bound $3), if still ours.
claim() {
  c_pgid=$1
  c_start=$2
  c_bound=$3
  leader=
  early=
  groups=
  if [ -z "$linux" ]; then
    start_of "$c_pgid"
    if [ -n "$start" ]; then
      [ "$start" = "$c_start" ] || return 0
    else
      kill -s 0 -- "-$c_pgid" 2>/dev/null || return 0
    fi
    targets="$targets $c_pgid"
    return 0
  fi
  IFS=$nl
  for line in $procs; do
    IFS=$sp
    set -- $line
    [ "$1" = "$c_pgid" ] && leader=$4
    if [ "$2" = "$c_pgid" ] || [ "$3" = "$c_pgid" ]; then
      # A zombie still holds its ids (it proves the group never ended) but needs no signal.
      [ "$4" -le "$c_bound" ] && early=1
      case "$5 $groups " in [ZX]\ * | *" $2 "*) ;; *) groups="$groups $2" ;; esac
    fi
  done
  IFS=$sp
  if [ -n "$leader" ]; then
    [ "$leader" = "$c_start" ] || return 0
  else
    [ -n "$early" ] || return 0
  fi
  targets="$targets$groups"
}

# Finds in $targets every group of every registered job that is still ours and has a living member,
# and sends them signal $1 ("none": only look).
sweep() {
  targets=
  [ -n "$linux" ] && snapshot
  IFS=$nl
  for e in $entries; do
    IFS=$sp
    split_entry "$e"
    bound=$e_exit
    [ "$bound" = - ] && bound=$gone_at
    claim "$e_pgid" "$e_start" "$bound"
    IFS=$nl
  done
  IFS=$sp
  [ "$1" = none ] && return 0
  for g in $targets; do
    valid_pgid "$g" && kill -s "$1" -- "-$g" 2>/dev/null
  done
  return 0
}

# Everything runs from inside this function, so the shell has parsed the whole script before it
# acts: a package update that rewrites this file in place cannot change what a running watchdog does.
main() {
  registry=$1
  host_pid=$2
  host_start=$3
  nl='
'
  sp=' '
  IFS=$sp
  linux=
  [ -r "/proc/$$/stat" ] && linux=1
  hz=100
  if [ -n "$linux" ]; then
    hz=$(getconf CLK_TCK 2>/dev/null)
    case $hz in '' | *[!0-9]*) hz=100 ;; esac
  fi
  # One line per registered group: "<pgid> <leader-start> <registered-at> <leader-exit-bound> <command>".
  entries=
  journal_lines=0
  start_of $$
  my_start=${start:--}
  if [ "$host_start" = "?" ]; then
    start_of "$host_pid"
    host_start=${start:--}
  fi
  # A watchdog started again after the first died appends: until the host has replayed every
  # registration, the first one's journal is the only record of them (and the host may die first).
  if [ "$registry" != - ]; then
    if [ -s "$registry" ]; then
      { printf '%s\n' "host $host_pid $host_start" "watchdog $$ $my_start" >>"$registry"; } 2>/dev/null
    else
      header 2>/dev/null >"$registry"
    fi
  fi

  while IFS= read -r message; do
    case $message in
      "+ "*) on_register "$message" ;;
      "x "*) on_exit "$message" ;;
      "- "*) on_forget "$message" ;;
      q)
        now_ticks
        journal "q $now"
        exit 0
        ;;
    esac
  done

  # The host is gone.
  now_ticks
  gone_at=$now
  [ "$gone_at" = - ] && gone_at=0
  journal "gone $now"
  [ -n "$entries" ] || exit 0
  sweep TERM
  # What is left gets KILL one second of the clock after the TERM, not after ten sleeps and checks:
  # on a busy machine each of those takes far longer than its 0.1 s.
  now_ticks
  kill_at=-
  [ "$now" = - ] || kill_at=$((now + hz))
  waited=0
  while [ -n "$targets" ]; do
    if sleep 0.1 2>/dev/null; then waited=$((waited + 1)); else sleep 1; waited=10; fi
    now_ticks
    if [ "$kill_at" = - ] || [ "$now" = - ]; then
      [ "$waited" -lt 10 ] || break
    else
      [ "$now" -lt "$kill_at" ] || break
    fi
    # Checked after the clock: once time is up, the KILL's own sweep is the next look.
    sweep none
  done
  [ -n "$targets" ] && sweep KILL
  now_ticks
  journal "done $now"
  return 0
}

main "$@"; exit
