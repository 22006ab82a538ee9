"""fio's job options, read from a command line and from a jobfile, the way fio combines them.

Only what benchtui needs to know is interpreted (which files a job touches, whether it writes,
how long it runs, its engine, depth and size); every option is kept as text. fio's rules that
matter here: on the command line, options before the first ``--name`` are defaults for every
job, including the jobs of a jobfile; in a jobfile, ``[global]`` sets defaults for the sections
after it, and a section's own options win. Options may be written ``--key=value``,
``-key=value`` or ``--key value``, and ``key`` alone (a flag) in both places.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from benchtui.plan.fio_values import read_size, read_time

#: fio's default ioengine on Linux, and the synchronous engines (one I/O at a time per job).
DEFAULT_IOENGINE = "psync"
SYNC_IOENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice"})
#: rw modes that write (or trim), i.e. destroy data on the target.
WRITE_MODES = frozenset({
    "write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite",
    "randtrimwrite",
})
READ_MODES = frozenset({"read", "randread"})

#: Command-line options that take a value which may come as the next word.
_VALUE_OPTIONS = frozenset({
    "name", "filename", "directory", "rw", "readwrite", "size", "io_size", "bs", "ioengine",
    "iodepth", "direct", "buffered", "runtime", "ramp_time", "startdelay", "numjobs",
    "output-format", "output", "status-interval", "eta", "eta-newline", "section", "verify",
})

@dataclass
class FioJob:
    """One job as fio will run it: its name and options (global ones merged in)."""

    name: str
    options: dict[str, str | None] = field(default_factory=dict)
    #: Jobs with the same group run at the same time; ``stonewall`` starts a new group.
    group: int = 0

    def get(self, key: str) -> str | None:
        """The option's value; ``""`` for a flag written without a value; None when unset."""
        if key not in self.options:
            return None
        value = self.options[key]
        return "" if value is None else value

    def has(self, key: str) -> bool:
        return key in self.options

    @property
    def rw(self) -> str:
        """The rw mode without its ``:N`` suffix (``randread:8`` -> ``randread``)."""
        value = self.get("rw") or self.get("readwrite") or "read"
        return value.split(":", 1)[0].strip().lower()

    @property
    def writes(self) -> bool:
        """Whether the job writes or trims (and is not ``--readonly``)."""
        return self.rw in WRITE_MODES and not self.has("readonly")

    @property
    def direct(self) -> bool:
        """O_DIRECT: ``direct=1``, or ``buffered=0``."""
        direct = flag_value(self.get("direct"))
        if direct is not None:
            return direct
        buffered = flag_value(self.get("buffered"))
        return buffered is False

    @property
    def ioengine(self) -> str:
        return (self.get("ioengine") or DEFAULT_IOENGINE).strip().lower()

    @property
    def iodepth(self) -> int:
        return int_value(self.get("iodepth")) or 1

    @property
    def numjobs(self) -> int:
        return int_value(self.get("numjobs")) or 1

    @property
    def filenames(self) -> list[str]:
        """The files or devices of ``filename`` (fio separates several with ``:``)."""
        value = self.get("filename")
        if not value:
            return []
        parts = re.split(r"(?<!\\):", value)
        return [p.replace("\\:", ":").strip() for p in parts if p.strip()]

    @property
    def runtime(self) -> float | None:
        return seconds_value(self.get("runtime"))

    @property
    def ramp_time(self) -> float:
        return seconds_value(self.get("ramp_time")) or 0.0

    @property
    def startdelay(self) -> float:
        value = self.get("startdelay") or ""
        return seconds_value(value.split("-")[-1]) or 0.0

    @property
    def size(self) -> int | None:
        """``size`` in bytes; None when absent or a percentage."""
        return size_value(self.get("size"))


def flag_value(text: str | None) -> bool | None:
    """fio's boolean option: ``1``/``true``/flag alone -> True, ``0``/``false`` -> False."""
    if text is None:
        return None
    value = text.strip().lower()
    if value in ("", "1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


def int_value(text: str | None) -> int | None:
    if text is None:
        return None
    value = text.strip()
    return int(value) if value.isdigit() else None


def size_value(text: str | None) -> int | None:
    """A size in bytes as fio reads it (``4g`` = 4 GiB with fio's kb_base=1024; ``1.5g`` is
    1 byte to fio: ``fio_values``); None when absent, not a number, or a percentage."""
    if not text:
        return None
    reading = read_size(text.split(",", 1)[0])
    return None if reading.value is None or reading.percent else int(reading.value)


def seconds_value(text: str | None) -> float | None:
    """A time in seconds as fio reads it for runtime-like options (a bare number is seconds;
    ``500ms``, ``2m``, ``1h``; ``15sec`` is 15 microseconds to fio: ``fio_values``)."""
    if not text:
        return None
    return read_time(text, bare_seconds=True).value


def split_option(word: str) -> tuple[str, str | None] | None:
    """``--key=value`` / ``-key=value`` -> (key, value); ``--flag`` -> (flag, None);
    a word that is not an option -> None."""
    if not word.startswith("-") or word in ("-", "--"):
        return None
    body = word[2:] if word.startswith("--") else word[1:]
    key, sep, value = body.partition("=")
    return key, (value if sep else None)


@dataclass
class CommandLine:
    """fio's command line split up: global defaults, jobs defined with --name, jobfiles
    named on it, and everything else kept in order."""

    defaults: dict[str, str | None] = field(default_factory=dict)
    jobs: list[FioJob] = field(default_factory=list)
    positional: list[str] = field(default_factory=list)


def parse_args(args: tuple[str, ...] | list[str]) -> CommandLine:
    """Read fio options from ``args`` (already split into words)."""
    line = CommandLine()
    current: dict[str, str | None] = line.defaults
    words = list(args)
    i = 0
    while i < len(words):
        option = split_option(words[i])
        i += 1
        if option is None:
            line.positional.append(words[i - 1])
            continue
        key, value = option[0].lower(), option[1]
        if (value is None and key in _VALUE_OPTIONS and i < len(words)
                and not words[i].startswith("-")):
            value = words[i]
            i += 1
        if key == "name":
            job = FioJob(name=value or "", options=dict(line.defaults))
            line.jobs.append(job)
            current = job.options
        current[key] = value
    _assign_groups(line.jobs)
    return line


@dataclass
class JobfileSyntaxError(Exception):
    """A jobfile line fio would refuse."""

    line: int
    reason: str
    hint: str = ""


def parse_jobfile(text: str, defaults: dict[str, str | None] | None = None) -> list[FioJob]:
    """The jobs of a fio jobfile (INI: ``[global]`` and job sections; keys may have no value;
    ``;`` and ``#`` start comments). Raises ``JobfileSyntaxError`` for lines fio refuses."""
    global_options: dict[str, str | None] = dict(defaults or {})
    jobs: list[FioJob] = []
    current: dict[str, str | None] | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise JobfileSyntaxError(number, f"malformed section header {line!r}",
                                         "write [global] or [job-name]")
            section = line[1:-1].strip()
            if section == "global":
                current = global_options
            else:
                job = FioJob(name=section, options=dict(global_options))
                jobs.append(job)
                current = job.options
            continue
        if current is None:
            raise JobfileSyntaxError(number, f"option {line!r} is outside of any [section]",
                                     "put it under [global] or under a [job-name] section")
        key, sep, value = line.partition("=")
        current[key.strip().lower()] = value.strip() if sep else None
    _assign_groups(jobs)
    return jobs


def _starts_group(job: FioJob) -> bool:
    """``stonewall`` (or ``wait_for_previous``): the job waits for the ones before it."""
    return any(job.has(key) and flag_value(job.get(key)) is not False
               for key in ("stonewall", "wait_for_previous"))


def _assign_groups(jobs: list[FioJob]) -> None:
    group = 0
    for n, job in enumerate(jobs):
        if n > 0 and _starts_group(job):
            group += 1
        job.group = group


def fio_jobs(args: tuple[str, ...], jobfile_text: str | None, default_name: str) -> list[FioJob]:
    """Every job fio runs for a step: the jobfile's (with the command line's defaults) and
    those defined on the command line. With neither, one job named ``default_name`` holding
    the command line's options (benchtui adds ``--name`` in that case)."""
    line = parse_args(args)
    jobs: list[FioJob] = []
    if jobfile_text is not None:
        with contextlib.suppress(JobfileSyntaxError):
            jobs.extend(parse_jobfile(jobfile_text, line.defaults))
    jobs.extend(line.jobs)
    if not jobs:
        jobs.append(FioJob(name=default_name, options=dict(line.defaults)))
    return jobs


def expected_seconds(jobs: list[FioJob]) -> float | None:
    """How long the jobs run, from runtime, ramp_time and startdelay (groups one after the
    other); None when a job is bounded by size only."""
    by_group: dict[int, float] = {}
    for job in jobs:
        runtime = job.runtime
        if runtime is None or runtime <= 0:
            return None
        length = runtime + job.ramp_time + job.startdelay
        by_group[job.group] = max(by_group.get(job.group, 0.0), length)
    return sum(by_group.values()) if by_group else None
