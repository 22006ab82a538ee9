"""A failing tool says why, in its own words, and every run of a step is its own (issue 27),
with real sshd hosts, real iperf3 and real fio, in one recorded session:

- an iperf3 step whose server is an SSH host, with three clients (two over SSH, this machine):
  one server per client, each run with its own id on the host, all complete; no silence is
  counted from the machine's boot;
- fio rejecting a misspelled option, over SSH and on this machine: the error line on stderr,
  the run's end in the recording, ``info`` and the report's list of runs that did not
  complete carry fio's own message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtui.model import events as ev
from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.sshd import SshdHost
from tests.test_cli_outcomes import Benchtui, cli
from tests.test_host_loss import host_table

FIO_SAYS = ("fio: unrecognized option '--iodepht=8'", "Did you mean iodepth?")


@pytest.mark.slow
def test_failing_tools_say_why_and_every_run_is_its_own(
        sshd_hosts: list[SshdHost], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_tool("iperf3")
    require_tool("fio")
    h1, h2, h3 = sshd_hosts[:3]
    plan = tmp_path / "words.toml"
    plan.write_text(
        '[session]\nname = "words"\n\n' + host_table("h1", h1) + host_table("h2", h2)
        + host_table("h3", h3) + '[hosts.here]\nlocal = true\n\n'
        '[[step]]\nname = "net"\ntool = "iperf3"\nserver = "h1"\n'
        'server_address = "127.0.0.1"\nclients = ["h2", "h3", "here"]\nargs = "-t 2"\n\n'
        '[[step]]\nname = "typo"\ntool = "command"\nparser = "fio-json"\n'
        'hosts = ["h2", "here"]\n'
        'command = "fio --name=typo --filename=/tmp/benchtui-typo.dat --size=1m '
        '--iodepht=8 --output-format=json+"\n')
    session = tmp_path / "words.btr"
    home = tmp_path / "home"
    home.mkdir()
    run = Benchtui(home, "record", str(plan), "-o", str(session), "--known-hosts",
                   h1.known_hosts)
    assert run.finish(120) == 1, run.stderr()
    err = run.stderr()
    assert "Traceback" not in err and "already used" not in err, err
    for host in ("h2", "here"):
        line = next(x for x in err.splitlines() if f"error: {host}: command exited" in x)
        assert all(words in line for words in FIO_SAYS), line

    with SessionReader.open(str(session)) as reader:
        assert reader.complete
        found = reader.events()
    net = [e for e in found if e.kind == ev.STEP_END and e.step == "net"]
    assert ev.outcome_of(net[0]) == ev.COMPLETED, net
    assert net[0].data["silences"] == []
    ends = [e for e in found if e.kind == ev.RUN_END and e.step == "net"]
    assert len(ends) == 6 and all(ev.outcome_of(e) == ev.COMPLETED for e in ends), ends
    servers = [e.data["command"] for e in found
               if e.kind == ev.RUN_START and e.step == "net" and e.host == "h1"]
    assert len(servers) == 3 and len({str(c) for c in servers}) == 3, servers
    typo = [e for e in found if e.kind == ev.RUN_END and e.step == "typo"]
    assert {e.host for e in typo} == {"h2", "here"}
    for e in typo:
        assert ev.outcome_of(e) == ev.FAILED and e.data["exit_status"] == 1, e
        assert list(FIO_SAYS) == [w for w in e.data["output_tail"]  # type: ignore[attr-defined]
                                  if w in FIO_SAYS], e.data
        assert all(words in ev.reason_of(e) for words in FIO_SAYS), e

    code, text, _ = cli(capsys, "info", str(session))
    assert code == 0 and "printed nothing" not in text, text
    step = next(x for x in text.splitlines() if x.startswith("  typo: "))
    assert "FAILED" in step and all(words in step for words in FIO_SAYS), step
    code, report, _ = cli(capsys, "report", str(session))
    assert code == 0
    cut = next(x for x in report.splitlines() if "runs that did not complete" in x)
    assert all(words in cut for words in FIO_SAYS), cut
