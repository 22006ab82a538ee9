"""The POSIX shell scripts that run on a host, and the argvs that carry them there.

Every script is a constant text run as ``sh -c SCRIPT sh ARG...``: values (paths, ids, the
command itself) only ever arrive as positional parameters, never pasted into script text. The
local transport executes these argvs directly; the SSH transport sends ``shlex.join(argv)``,
which quotes every element, so a value like ``x; touch /tmp/pwned`` stays one argument.

The scripts need ``sh``, coreutils (``timeout``, ``tail``, ``sleep`` with fractions; its
``stdbuf`` is used where it works), ``setsid -f`` (util-linux >= 2.31), ``grep -z`` and
``/proc``: any current Linux distribution.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Sequence

from benchtui.transport import watchdog
from benchtui.transport.base import (
    EXIT_UNKNOWN,
    KILL_AFTER,
    RUN_TAG_VARIABLE,
    RemoteRun,
    RunHandle,
    RunOutcome,
)
from benchtui.transport.shfuncs import ALIVE, STARTED_AT, STOP_RUN, UPTIME

#: Where runs keep their files, relative to the home directory of the user on the host.
DEFAULT_RUNS_DIR = ".cache/benchtui/runs"

#: Runs detached (setsid -f) as the run's wrapper: starts the command under ``timeout`` with
#: its output in ``out``, records "WRAPPER_PID PGID" in ``pid``, starts the run's watchdog
#: beside it (unless the run's ``controller`` file says "off"), waits; once the command has
#: ended, however it ended (by itself, its deadline, benchtui's stop, the watchdog, or a
#: signal from another hand), sweeps what is left of the run (``SWEEP``); writes ``rc``.
#: ``timeout`` makes itself a process group leader, so PGID is its PID.
WRAPPER = watchdog.WATCHDOG + watchdog.SWEEP + r"""
d=$1 deadline=$2 kill_after=$3 tag=$4 cwd=$5 ticks=$6
shift 6
finish() { printf '%s\n' "$1" > "$d/rc.tmp" && mv -f "$d/rc.tmp" "$d/rc"; }
if [ -n "$cwd" ] && ! cd -- "$cwd" 2>>"$d/out"; then
  printf '%s 0\n' "$$" > "$d/pid.tmp" && mv -f "$d/pid.tmp" "$d/pid"
  finish 126
  exit 0
fi
env "$TAGVAR=$tag" timeout --kill-after="$kill_after" "$deadline" env "$@" \
  >>"$d/out" 2>&1 </dev/null &
p=$!
wd=
g=off
{ read -r _ g _ < "$d/controller"; } 2>/dev/null
if [ "$g" != off ]; then
  watchdog "$d" "$p" "$tag" "$ticks" </dev/null >/dev/null 2>&1 &
  wd=$!
  started_at "$wd" && printf '%s %s\n' "$wd" "$st" > "$d/watchdog.pid"
fi
printf '%s %s\n' "$$" "$p" > "$d/pid.tmp" && mv -f "$d/pid.tmp" "$d/pid"
wait "$p"
status=$?
sweep "$d" "$tag" "$ticks"
if [ -n "$wd" ]; then kill "$wd" 2>/dev/null; wait "$wd"; fi
finish "$status"
""".replace("$TAGVAR", RUN_TAG_VARIABLE)

#: Creates the run directory, writes the run's ``controller`` file (how its watchdog tells that
#: the controller is gone: "LABEL GRACE MODE ARG", see ``watchdog``; a fresh beat for an SSH
#: controller), starts WRAPPER in a new session, waits for its ``pid`` file and prints
#: "DIRECTORY WRAPPER_PID PGID".
START = UPTIME + r"""
base=$1 session=$2 run=$3 deadline=$4 kill_after=$5 tag=$6 cwd=$7 wrapper=$8
label=$9 grace=${10} mode=${11} arg=${12} ticks=${13}
shift 13
case $base in /*) ;; *) base="$HOME/$base";; esac
mkdir -p -- "$base/$session/$run" || exit 111
d=$(cd -- "$base/$session/$run" && pwd -P) || exit 111
if [ -e "$d/pid" ]; then echo "run directory $d is already used" >&2; exit 112; fi
: > "$d/out" || exit 111
if [ "$mode" = beat ]; then
  arg=${d%/*}/.beat-$arg
  uptime_cs
  printf '%s open start\n' "$now" > "$arg"
fi
printf '%s %s %s %s\n' "$label" "$grace" "$mode" "$arg" > "$d/controller" || exit 111
setsid -f sh -c "$wrapper" sh "$d" "$deadline" "$kill_after" "$tag" "$cwd" "$ticks" "$@" \
  </dev/null >/dev/null 2>&1 || { echo "setsid -f failed" >&2; exit 113; }
i=0
while [ ! -s "$d/pid" ]; do
  i=$((i + 1))
  if [ "$i" -gt 105 ]; then echo "the run did not start within 10 s" >&2; exit 114; fi
  if [ "$i" -le 10 ]; then sleep 0.01; else sleep 0.1; fi
done
printf '%s %s\n' "$d" "$(cat "$d/pid")"
"""

#: Ends a run: marks it ``stopping``, SIGTERM to its process group (while it runs) and to
#: every process tagged with the run's tag, SIGKILL to what is left after the grace ticks
#: (0.1 s each), a check that none is left (exit 3 naming them); then ends the run's
#: watchdog (its wrapper does that too, unless the wrapper itself was killed).
STOP = STOP_RUN + STARTED_AT + r"""
d=$1 tag=$2 ticks=$3
[ -r "$d/pid" ] || { echo "no run in $d" >&2; exit 2; }
: > "$d/stopping"
stop_run "$d" "$tag" "$ticks"
if { read -r wd wd_start < "$d/watchdog.pid"; } 2>/dev/null && started_at "$wd" \
    && [ "$st" = "$wd_start" ]; then
  kill "$wd" 2>/dev/null
  i=0
  while started_at "$wd" && [ "$st" = "$wd_start" ] && [ "$i" -lt 20 ]; do
    sleep 0.05
    i=$((i + 1))
  done
fi
if [ -n "$left" ]; then echo "processes still running: $left" | tr '\n' ' ' >&2; exit 3; fi
exit 0
"""

#: Prints "rc N" when the run ended, "running" while its wrapper lives, else "lost"; then
#: "watchdog GONE_CS GRACE_CS" if the host's watchdog stopped it.
STATUS = ALIVE + r"""
d=$1
[ -r "$d/pid" ] || { echo "no run in $d" >&2; exit 2; }
if [ -r "$d/rc" ]; then printf 'rc %s\n' "$(cat "$d/rc")"
else
  read -r wpid pgid < "$d/pid"
  if alive "$wpid"; then echo running
  elif [ -r "$d/rc" ]; then printf 'rc %s\n' "$(cat "$d/rc")"
  else echo lost
  fi
fi
if [ -r "$d/watchdog" ]; then printf 'watchdog %s\n' "$(cat "$d/watchdog")"; fi
"""

#: Sets ``big`` to ``stdbuf -o1M`` where that works on the host (coreutils' stdbuf and its
#: preload library; a host without them follows as before, 8 KiB writes).
BIG_WRITES = """big=
if stdbuf -o1M true 2>/dev/null; then big="stdbuf -o1M"; fi"""

#: Exit status of FOLLOW when its ``tail`` ended while the run still lives: follow again.
FOLLOW_AGAIN = 75

#: Streams ``out`` from byte OFFSET (0-based) while the run lives, then exits 0. The bytes
#: written after ``tail`` was stopped are read by a final DRAIN from the offset reached.
#: ``tail --pid`` ends by itself within 0.2 s of the wrapper; the 1 s guard loop is the safety
#: net (measured: 128 followers cost 18% of a core this way, 129% with a 0.2 s loop that forked
#: ``cat`` and ``sleep``; docs/benchmarks/fleet_scale.md).
#: ``tail`` writes what it reads 8 KiB at a time, and sshd, woken by each write, sends each as
#: a packet of its own (an 80 kB fio document in 4-12 packets); under ``stdbuf -o1M``
#: (``BIG_WRITES``) it writes what one look at the file found at once (tail flushes after
#: each), and sshd sends it in packets of 32 KiB: fewer packets for the controller to decrypt
#: and parse, the same bytes as soon (docs/benchmarks/fleet_scale.md, round 8).
FOLLOW = ALIVE + r"""
d=$1 offset=$2 wpid=$3
[ -r "$d/out" ] || { echo "no output file $d/out" >&2; exit 2; }
$BIG_WRITES
$big tail -c "+$((offset + 1))" -s 0.2 -F --pid="$wpid" "$d/out" 2>/dev/null &
t=$!
while [ ! -e "$d/rc" ] && alive "$wpid" && kill -0 "$t" 2>/dev/null; do sleep 1; done
kill "$t" 2>/dev/null
wait "$t" 2>/dev/null
if [ -e "$d/rc" ] || ! alive "$wpid"; then exit 0; fi
exit $AGAIN
""".replace("$AGAIN", str(FOLLOW_AGAIN)).replace("$BIG_WRITES", BIG_WRITES)

#: Prints ``out`` from byte OFFSET (0-based) to its current end (in large writes, as FOLLOW).
DRAIN = r"""
[ -r "$1/out" ] || { echo "no output file $1/out" >&2; exit 2; }
$BIG_WRITES
exec $big tail -c "+$(($2 + 1))" "$1/out"
""".replace("$BIG_WRITES", BIG_WRITES)

#: Writes standard input to PATH atomically (through PATH.TOKEN.benchtui-tmp: two plan hosts
#: on one machine or one shared file system may copy the same file at once), parents created.
PUT = r"""
p=$1 t=$p.$2.benchtui-tmp
dir=$(dirname -- "$p")
mkdir -p -- "$dir" && cat > "$t" && mv -f -- "$t" "$p"
"""


def shell_line(argv: Sequence[str]) -> str:
    """One command line for a remote shell: every element quoted with ``shlex.quote``."""
    return shlex.join(argv)


def script_argv(script: str, *args: str) -> list[str]:
    """The argv that runs ``script`` with ``args`` as its positional parameters."""
    return ["sh", "-c", script, "sh", *args]


def command_argv(command: Sequence[str] | str) -> list[str]:
    """An argv for a command given as an argv (kept as is) or a shell line (``sh -c``)."""
    if isinstance(command, str):
        return ["sh", "-c", command]
    return list(command)


def bounded_argv(command: Sequence[str] | str, timeout: float) -> list[str]:
    """``command`` under ``timeout`` on the host, so a short command cannot linger."""
    return ["timeout", "--kill-after=2", _seconds(timeout), *command_argv(command)]


def start_argv(run: RemoteRun, *, runs_dir: str, session_id: str, tag: str,
               watch: watchdog.Watch) -> list[str]:
    """The argv of START for ``run`` watched as ``watch`` says; it prints what
    ``parse_started`` reads."""
    env_pairs = [f"{name}={value}" for name, value in run.env.items()]
    if isinstance(run.command, str):
        tail = ["sh", "-c", run.command]
    else:
        tail = ["sh", "-c", 'exec "$@"', "sh", *run.command]
    return script_argv(START, runs_dir, session_id, run.run_id, _seconds(run.deadline),
                       _seconds(KILL_AFTER), tag, run.cwd or "", WRAPPER,
                       *watch.start_args(), str(watchdog.STOP_TICKS), *env_pairs, *tail)


def parse_started(stdout: str) -> tuple[str, int, int]:
    """(directory, wrapper PID, PGID) from what START printed; ``ValueError`` if garbled."""
    fields = stdout.strip().rsplit(" ", 2)
    if len(fields) != 3:
        raise ValueError(f"unexpected answer from the start script: {stdout!r}")
    directory, wrapper_pid, pgid = fields
    return directory, int(wrapper_pid), int(pgid)


def stop_argv(handle: RunHandle, grace: float) -> list[str]:
    ticks = max(1, round(grace * 10))
    return script_argv(STOP, handle.directory, handle.tag, str(ticks))


def status_argv(handle: RunHandle) -> list[str]:
    return script_argv(STATUS, handle.directory)


def parse_status(stdout: str) -> int | None:
    """The exit status STATUS printed: ``None`` while running, ``EXIT_UNKNOWN`` if lost."""
    return parse_outcome(stdout).status


def parse_outcome(stdout: str) -> RunOutcome:
    """What STATUS printed: the exit status, and the watchdog's stop if there was one."""
    lines = stdout.strip().splitlines() or [""]
    text = lines[0].strip()
    status: int | None = EXIT_UNKNOWN
    if text == "running":
        status = None
    elif text.startswith("rc "):
        try:
            status = int(text[3:])
        except ValueError:
            status = EXIT_UNKNOWN
    stop = None
    for line in lines[1:]:
        if line.startswith("watchdog "):
            stop = watchdog.parse_watchdog_stop(line.removeprefix("watchdog "))
    return RunOutcome(status, stop)


def follow_argv(handle: RunHandle, offset: int) -> list[str]:
    return script_argv(FOLLOW, handle.directory, str(offset), str(handle.wrapper_pid))


def drain_argv(handle: RunHandle, offset: int) -> list[str]:
    return script_argv(DRAIN, handle.directory, str(offset))


def put_argv(remote_path: str) -> list[str]:
    return script_argv(PUT, remote_path, secrets.token_hex(4))


def _seconds(value: float) -> str:
    """Seconds as ``timeout`` and ``sleep`` read them: ``2.5``, ``60``."""
    return f"{value:.3f}".rstrip("0").rstrip(".")
