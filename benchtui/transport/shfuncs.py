"""POSIX shell functions shared by the host scripts (``hostscripts``) and the watchdog
(``watchdog``): defined once here, pasted in front of the scripts that call them.

Each is a constant text; the scripts pass values to them as arguments only. They fork nothing
but where a comment says so: the watchdog calls them every second for every run.
"""

from __future__ import annotations

from benchtui.transport.base import RUN_TAG_VARIABLE

#: ``alive PID``: true while PID exists and is not a zombie (a zombie's parent may never
#: reap it when PID 1 of a container does not, and ``kill -0`` would say it lives). ``read``,
#: not ``$(cat ...)``: no fork, as FOLLOW asks it every second for every followed run.
ALIVE = r"""
alive() {
  { read -r s < "/proc/$1/stat"; } 2>/dev/null || return 1
  case $s in *") Z "*|*") X "*|"") return 1;; esac
  return 0
}
"""

#: ``started_at PID``: true while PID lives (not a zombie), setting ``st`` to its start time
#: (clock ticks after boot, field 22 of /proc/PID/stat): with the PID it names one process,
#: even after the PID is reused.
STARTED_AT = r"""
started_at() {
  st=
  { read -r s < "/proc/$1/stat"; } 2>/dev/null || return 1
  case $s in *") Z "*|*") X "*|"") return 1;; esac
  set -f
  set -- ${s##*) }
  set +f
  st=${20}
  [ -n "$st" ]
}
"""

#: ``uptime_cs``: sets ``now`` to the host's uptime in centiseconds (/proc/uptime: monotonic,
#: counts a suspend, the same clock for every process of the host; no fork).
UPTIME = r"""
uptime_cs() {
  read -r now _ < /proc/uptime
  now=${now%.*}${now#*.}
  while :; do case $now in 0?*) now=${now#0};; *) break;; esac; done
}
"""

#: ``tagged TAG``: the PIDs of the processes whose environment holds ``BENCHTUI_RUN=TAG``
#: (the tag crosses fork and setsid: fio's workers carry it). Forks grep and cut.
TAGGED = r"""
tagged() {
  grep -lzxF -e "$TAGVAR=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}
""".replace("$TAGVAR", RUN_TAG_VARIABLE)

#: ``stop_run DIR TAG TICKS [tagged]``: ends a run as benchtui's stop does: SIGTERM to its
#: process group (while it has no ``rc``, unless ``tagged`` is given: the group's leader
#: gone, its number may be another's) and to every process tagged TAG, SIGKILL to what is
#: left after TICKS tenths of a second, then a check that none is left. Returns 3, with the
#: PIDs in ``left``, if any survive 5 s more; 2 when DIR holds no run.
STOP_RUN = TAGGED + r"""
stop_signal() {
  if [ "$sr_group" = group ] && [ ! -e "$1/rc" ] && [ "$sr_pgid" -gt 1 ]; then
    kill -"$3" -- "-$sr_pgid" 2>/dev/null
  fi
  for sr_p in $(tagged "$2"); do kill -"$3" "$sr_p" 2>/dev/null; done
}
stop_run() {
  left=
  sr_group=${4:-group}
  [ -r "$1/pid" ] || return 2
  read -r sr_wpid sr_pgid < "$1/pid"
  stop_signal "$1" "$2" TERM
  sr_i=0
  while [ -n "$(tagged "$2")" ] && [ "$sr_i" -lt "$3" ]; do sleep 0.1; sr_i=$((sr_i + 1)); done
  stop_signal "$1" "$2" KILL
  sr_i=0
  while [ -n "$(tagged "$2")" ] && [ "$sr_i" -lt 50 ]; do sleep 0.1; sr_i=$((sr_i + 1)); done
  left=$(tagged "$2")
  [ -z "$left" ] || return 3
}
"""

#: ``gone_for RUNDIR``: sets ``gone`` to how long (centiseconds) the controller of the run has
#: been gone, -1 while it is there or when nothing watches it. The run's ``controller`` file
#: (written by START) says how to tell: ``LABEL GRACE pid PID STARTTIME`` (a controller on
#: this machine: gone when that process is) or ``LABEL GRACE beat FILE`` (over SSH: FILE holds
#: "UPTIME_CS open|closed KEEPER" from the keeper the controller feeds; gone when the keeper's
#: connection closed, or when no beat came for SILENCE centiseconds). For a PID, the time it
#: was first seen gone is kept in RUNDIR/gone.
GONE_FOR = ALIVE + STARTED_AT + UPTIME + r"""
gone_for() {
  gone=-1
  { read -r gf_label gf_grace gf_mode gf_rest < "$1/controller"; } 2>/dev/null || return 0
  uptime_cs
  case $gf_mode in
    pid)
      gf_pid=${gf_rest%% *} gf_start=${gf_rest#* }
      if started_at "$gf_pid" && [ "$st" = "$gf_start" ]; then return 0; fi
      gf_since=
      { read -r gf_since < "$1/gone"; } 2>/dev/null
      if [ -z "$gf_since" ]; then gf_since=$now; printf '%s\n' "$now" > "$1/gone"; fi
      gone=$((now - gf_since))
      ;;
    beat)
      gf_t= gf_state=
      { read -r gf_t gf_state _ < "$gf_rest"; } 2>/dev/null
      [ -n "$gf_t" ] || return 0
      case $gf_state in
        closed) gone=$((now - gf_t));;
        *) gone=$((now - gf_t - $SILENCE));;
      esac
      [ "$gone" -ge 0 ] || gone=-1
      ;;
  esac
  return 0
}
"""


def with_silence(script: str, silence_cs: int) -> str:
    """``script`` with the beat silence (centiseconds) that means a cut link put in."""
    return script.replace("$SILENCE", str(silence_cs))
