"""The host's watchdog: every run stops on its own when its controller is gone for good.

A run's wrapper (``hostscripts.WRAPPER``) starts, beside the command, a small POSIX shell loop
(``WATCHDOG``) that once a second asks whether the controller is still there, as the run's
``controller`` file says (written by START from a ``Watch``):

- a controller on the same machine (``LocalTransport``) is watched by its PID and start time:
  it is gone once that process is;
- a controller over SSH keeps a *keeper* (``KEEPER``) running on the host through its
  connection and writes it a line every ``BEAT_INTERVAL`` seconds; the keeper writes the
  host's uptime to the session's beat file at each line, and "closed" when its connection
  ends. The controller is gone once the connection closed, or once no beat came for
  ``BEAT_SILENCE`` seconds (a cut link closes nothing on the host).

Once the controller has been gone for the run's grace (``[session] controller_grace``), the
watchdog writes why in the run's ``watchdog`` file and as a last line of its output, and ends
the run as benchtui's own stop does (``shfuncs.STOP_RUN``: process group, tagged processes,
fio's workers included). A link that comes back within the grace changes nothing: the
controller's keeper beats again and its followers resume at their byte.

``LEFTOVERS`` lists, for a later session's preflight, the runs of other sessions still
running on the host, with their processes and whether their controller is gone.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from benchtui.transport.base import (
    RUN_TAG_VARIABLE,
    Leftover,
    RunHandle,
    WatchdogStop,
    check_id,
)
from benchtui.transport.shfuncs import GONE_FOR, STOP_RUN, TAGGED, UPTIME, with_silence

#: Seconds between two lines the controller writes to its keeper on an SSH host.
BEAT_INTERVAL = 1.0
#: Seconds without a beat after which an SSH controller counts as gone (its link is cut).
BEAT_SILENCE = 3.0
#: Tenths of a second the watchdog gives a run between SIGTERM and SIGKILL (benchtui's own
#: stop gives 2 s too: ``session.engine.STOP_GRACE``).
STOP_TICKS = 20
#: The grace word of a run that nothing watches (``controller_grace = "off"``).
OFF = "off"

_GONE_FOR = with_silence(GONE_FOR, round(BEAT_SILENCE * 100))

#: ``said_left RUNDIR``: appends to the run's output a line naming the processes that
#: ``stop_run`` left (they survived SIGKILL: blocked in the kernel), if any.
SAID_LEFT = r"""
said_left() {
  [ -n "$left" ] || return 0
  printf 'benchtui: processes of the run still running after SIGKILL: %s\n' \
    "$(echo $left)" >> "$1/out"
}
"""

#: ``watchdog RUNDIR PID TAG TICKS``, run in the background by the wrapper: watches the
#: controller every second while PID (the command's ``timeout``) lives; once the controller
#: has been gone for the grace, writes it in RUNDIR/watchdog, stops the run, and appends why
#: to its output (after what the tool printed as it ended, before ``rc``). The wrapper kills
#: it when the command ends; while it stops the run it ignores that (``trap '' TERM``) and
#: the wrapper waits for it, so no worker is left behind and ``rc`` comes last.
WATCHDOG = _GONE_FOR + STOP_RUN + SAID_LEFT + r"""
cs_text() {
  txt=$(($1 / 100)) ct_f=$(($1 % 100))
  if [ "$ct_f" -ne 0 ]; then
    [ "$ct_f" -ge 10 ] || ct_f=0$ct_f
    txt=$txt.${ct_f%0}
  fi
}
watchdog() {
  { read -r wd_label wd_grace wd_rest < "$1/controller"; } 2>/dev/null || return 0
  case $wd_grace in ""|off) return 0;; esac
  while sleep 1 && alive "$2"; do
    gone_for "$1"
    if [ "$gone" -ge 0 ] && [ "$gone" -ge "$wd_grace" ]; then
      trap '' TERM
      printf '%s %s\n' "$gone" "$wd_grace" > "$1/watchdog"
      stop_run "$1" "$3" "$4"
      if [ -n "$(tail -c 1 "$1/out")" ]; then printf '\n' >> "$1/out"; fi
      cs_text "$wd_grace"
      printf "benchtui: controller gone for %s s (controller_grace %s s), stopped by the \
host's watchdog\n" "$((gone / 100))" "$txt" >> "$1/out"
      said_left "$1"
      return 0
    fi
  done
}
"""

#: ``sweep RUNDIR TAG TICKS``, run by the wrapper once the command has ended: every process
#: of the run still there (a fio job process in its own session, ignoring SIGTERM, after
#: fio's main process was killed; the children of a shell killed alone) gets SIGTERM, SIGKILL
#: after TICKS tenths of a second, then a check; the run's output says so (unless a stop
#: of benchtui's or the watchdog's was under way: its processes were already going). Nothing
#: is signalled when nothing is left (the usual end: fio waits for its workers). Uses the
#: functions of WATCHDOG, which comes before it in the wrapper.
SWEEP = r"""
sweep() {
  sw_found=$(tagged "$2")
  [ -n "$sw_found" ] || return 0
  stop_run "$1" "$2" "$3" tagged
  [ -e "$1/stopping" ] || [ -e "$1/watchdog" ] || {
    if [ -n "$(tail -c 1 "$1/out")" ]; then printf '\n' >> "$1/out"; fi
    printf 'benchtui: processes of the run still running after it ended were stopped: %s\n' \
      "$(echo $sw_found)" >> "$1/out"
  }
  said_left "$1"
}
"""

#: The keeper of an SSH controller: ``env BENCHTUI_RUN=SESSION/.keeper-NAME sh -c KEEPER sh
#: BASE SESSION NAME``, its standard input fed one line per beat through the controller's
#: connection. It first ends older keepers of the same session and host (a cut link leaves
#: them waiting on a connection the host has not noticed is dead). Each beat replaces the
#: file whole (written aside, then renamed): a keeper killed as it writes never leaves an
#: empty beat file, which would read as a controller still there.
KEEPER = UPTIME + TAGGED + r"""
base=$1 session=$2 name=$3
case $base in /*) ;; *) base="$HOME/$base";; esac
unset $TAGVAR
f=$base/$session/.beat-$name
me=$$
for k in $(tagged "$session/.keeper-$name"); do [ "$k" = "$me" ] || kill "$k" 2>/dev/null; done
beat() { uptime_cs; printf '%s %s %s\n' "$now" "$1" "$me" > "$f.$me" && mv -f "$f.$me" "$f"; }
[ -d "$base/$session" ] || exit 0
beat open
while read -r _; do beat open; done
{ read -r t state owner < "$f"; } 2>/dev/null
case $owner in "$me"|start) beat closed;; esac
""".replace("$TAGVAR", RUN_TAG_VARIABLE)

#: Lists the runs of sessions other than OWN under BASE that still run: a ``run`` line
#: (tab-separated: session, run, directory, wrapper PID, PGID, plan, grace in centiseconds
#: or "off", centiseconds the controller has been gone or -1), then a ``proc`` line (PID,
#: command name) for each of its tagged processes.
LEFTOVERS = _GONE_FOR + TAGGED + r"""
base=$1 own=$2
case $base in /*) ;; *) base="$HOME/$base";; esac
for pf in "$base"/*/*/pid; do
  [ -r "$pf" ] || continue
  d=${pf%/pid}
  [ -e "$d/rc" ] && continue
  read -r wpid pgid < "$pf" || continue
  alive "$wpid" || continue
  s=${d%/*}
  run=${d##*/} session=${s##*/}
  [ "$session" = "$own" ] && continue
  label=- grace=off
  { read -r label grace _ < "$d/controller"; } 2>/dev/null
  gone=-1
  case $grace in off|"") grace=off;; *) gone_for "$d";; esac
  printf 'run\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$session" "$run" "$d" "$wpid" "$pgid" \
    "$label" "$grace" "$gone"
  for p in $(tagged "$session/$run"); do
    c=?
    { read -r c < "/proc/$p/comm"; } 2>/dev/null
    printf 'proc\t%s\t%s\n' "$p" "$c"
  done
done
"""


@dataclass(frozen=True, slots=True)
class Watch:
    """How the watchdogs of a transport's runs tell that the controller is gone: what START
    writes in each run's ``controller`` file. ``grace`` is in seconds (``math.inf``: no
    watchdog); ``label`` names the plan, for a later session's preflight."""

    label: str
    grace: float
    #: "pid": a controller on this machine, by PID and start time; "beat": over SSH, by the
    #: beats of the keeper of the host named ``name`` in this session.
    mode: str
    pid: int = 0
    start_time: int = 0
    name: str = ""

    @property
    def watched(self) -> bool:
        return math.isfinite(self.grace)

    def start_args(self) -> list[str]:
        """START's LABEL GRACE MODE ARG parameters."""
        label = self.label or "-"
        if not self.watched:
            return [label, OFF, "-", "-"]
        grace = str(max(0, round(self.grace * 100)))
        if self.mode == "pid":
            return [label, grace, "pid", f"{self.pid} {self.start_time}"]
        return [label, grace, "beat", self.name]


def label_text(label: str) -> str:
    """A plan name as one word for a host file ("-" when there is none)."""
    word = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)[:64]
    return word or "-"


def local_watch(label: str, grace: float) -> Watch:
    """The watch of a controller on this machine: this process."""
    pid = os.getpid()
    return Watch(label_text(label), grace, "pid", pid, process_start_time(pid))


def beat_watch(label: str, grace: float, name: str) -> Watch:
    """The watch of a controller that reaches the host named ``name`` over SSH."""
    return Watch(label_text(label), grace, "beat", name=check_id("host name", name))


def process_start_time(pid: int) -> int:
    """Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[19])


def keeper_argv(runs_dir: str, session_id: str, name: str) -> list[str]:
    """The keeper's argv, tagged so that a newer keeper and the host find it."""
    return ["env", f"{RUN_TAG_VARIABLE}={session_id}/.keeper-{name}", "sh", "-c", KEEPER, "sh",
            runs_dir, session_id, name]


def leftovers_argv(runs_dir: str, own_session: str) -> list[str]:
    return ["sh", "-c", LEFTOVERS, "sh", runs_dir, own_session]


def parse_leftovers(host: str, stdout: str) -> list[Leftover]:
    """The runs LEFTOVERS listed (malformed lines are skipped)."""
    found: list[Leftover] = []
    current: list[str] | None = None
    processes: list[tuple[int, str]] = []

    def close() -> None:
        if current is not None:
            leftover = _leftover(host, current, processes)
            if leftover is not None:
                found.append(leftover)

    for line in stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "run" and len(fields) == 9:
            close()
            current, processes = fields[1:], []
        elif fields[0] == "proc" and len(fields) == 3 and current is not None:
            try:
                processes.append((int(fields[1]), fields[2]))
            except ValueError:
                continue
    close()
    return found


def _leftover(host: str, fields: list[str], processes: list[tuple[int, str]]
              ) -> Leftover | None:
    session, run, directory, wpid, pgid, label, grace, gone = fields
    try:
        handle = RunHandle(host, run, directory, int(wpid), int(pgid), f"{session}/{run}")
        grace_s = math.inf if grace == OFF else int(grace) / 100
        gone_cs = int(gone)
    except ValueError:
        return None
    return Leftover(handle, session, "" if label == "-" else label, tuple(processes), grace_s,
                    None if gone_cs < 0 else gone_cs / 100)


def parse_watchdog_stop(text: str) -> WatchdogStop | None:
    """What a run's ``watchdog`` file says ("GONE_CS GRACE_CS"), or None."""
    fields = text.split()
    if len(fields) != 2:
        return None
    try:
        return WatchdogStop(int(fields[0]) / 100, int(fields[1]) / 100)
    except ValueError:
        return None
