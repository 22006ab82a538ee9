"""``benchtui history`` on bad input: one sentence each and the documented exit status
(docs/history.md): a catalog that cannot be opened (1), a PostgreSQL server that refuses
(1), a file that is not a session (1), a plan, step, host, metric, run or change not in the
catalog (2), options that do not go together (2); and the commands that annotate."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.history.catalog import open_catalog
from tests.history_points import PLAN, fill
from tests.pg_server import free_port


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchtui: "), err
    assert "Traceback" not in err
    return lines[0]


def test_a_catalog_that_cannot_be_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    code, _out, err = run(capsys, "history", "gate", PLAN, "--catalog", str(tmp_path))
    assert code == 1 and "is a directory" in _one_sentence(err)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database file at all" * 100)
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog", str(junk))
    assert code == 1 and "history catalog" in _one_sentence(err)


def test_a_postgresql_server_that_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/history"
    code, _out, err = run(capsys, "history", "gate", PLAN, "--catalog", url)
    line = _one_sentence(err)
    assert code == 1 and "refused or cannot be reached" in line
    assert "secret" not in line  # the password is never printed


def test_a_file_that_is_not_a_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    code, _out, err = run(capsys, "history", "import", str(bad), "--catalog",
                          str(tmp_path / "c.sqlite"))
    assert code == 1 and str(bad) in _one_sentence(err)


def test_what_is_not_in_the_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    url = str(tmp_path / "c.sqlite")
    fill(url, {("randread", "iops", "read", "(fleet)"): [1.0, 2.0, 3.0]}).close()
    code, _out, err = run(capsys, "history", "gate", "weekly", "--catalog", url)
    assert code == 2 and "the plan 'weekly' is not in the catalog" in _one_sentence(err)
    assert "there are: nightly" in err
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog", url, "--step", "x")
    assert code == 2 and "the step 'x'" in _one_sentence(err) and "randread" in err
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog", url, "--host", "h9")
    assert code == 2 and "the host 'h9'" in _one_sentence(err)
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog", url, "--metric", "x")
    assert code == 2 and "not a metric" in _one_sentence(err)
    code, _out, err = run(capsys, "history", "ack", "99", "--catalog", url)
    assert code == 2 and "no change 99" in _one_sentence(err)
    code, _out, err = run(capsys, "history", "exclude", "99", "--reason", "x", "--catalog", url)
    assert code == 2 and "no run 99" in _one_sentence(err)


def test_usage_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["history", "gate", PLAN, "--p", "2"])
    assert exc.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["history", "import", "x.btr", "--attr", "novalue"])
    assert exc.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:  # as report's: a duration of at most a week
        main(["history", "import", "x.btr", "--skip", "1e308"])
    assert exc.value.code == 2
    assert "more than the 7 days" in capsys.readouterr().err
    code, _out, err = run(capsys, "history")
    assert code == 2 and "needs a command" in _one_sentence(err)
    code, _out, err = run(capsys, "run", "plan.toml", "--history-catalog")
    assert code == 2 and "give --record" in _one_sentence(err)
    capsys.readouterr()


def test_annotations_are_stored_in_the_catalog(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "c.sqlite")
    fill(url, {("randread", "iops", "read", "(fleet)"):
               [1000.0 + (i % 3) for i in range(12)] + [800.0 + (i % 3) for i in range(6)]}
         ).close()
    code, out, _err = run(capsys, "history", "gate", PLAN, "--catalog", url)
    assert code == 3 and "(change 1)" in out
    assert run(capsys, "history", "ack", "1", "--reason", "expected", "--catalog", url)[0] == 0
    assert run(capsys, "history", "exclude", "3", "--reason", "disk full",
               "--catalog", url)[0] == 0
    assert run(capsys, "history", "env-change", "13", "--catalog", url)[0] == 0
    code, out, _err = run(capsys, "history", "show", PLAN, "--catalog", url)
    assert code == 0 and "17 runs, 18 recorded" in out and "stable" in out
    code, out, _err = run(capsys, "history", "export", "--catalog", url)
    assert code == 0 and out.splitlines()[0].startswith("run_id,plan,step,scope")


def test_analyze_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import xml.etree.ElementTree as ET

    url = str(tmp_path / "c.sqlite")
    fill(url, {("randread", "iops", "read", "(fleet)"):
               [1000.0 + (i % 3) for i in range(12)] + [800.0 + (i % 3) for i in range(6)],
               ("randread", "latency_p99_seconds", "read", "(fleet)"):
               [1e-3 + 1e-6 * (i % 3) for i in range(18)]}).close()
    assert run(capsys, "history", "exclude", "2", "--reason", "noisy neighbour",
               "--catalog", url)[0] == 0
    code, out, _err = run(capsys, "history", "analyze", PLAN, "--catalog", url,
                          "--format", "json")
    doc = json.loads(out)
    (change,) = doc[f"{PLAN}.randread.(fleet)"][0]["changes"]
    otava = {"metric", "index", "time", "forward_change_percent", "magnitude", "mean_before",
             "stddev_before", "mean_after", "stddev_after", "pvalue"}
    assert otava <= set(change) and change["metric"] == "iops.read"
    assert change["status"] == "confirmed" and change["verdict"] == "regression"
    assert doc[f"{PLAN}.randread.(fleet)"][0]["attributes"]["commit"] == "c13"
    code, out, _err = run(capsys, "history", "analyze", PLAN, "--catalog", url,
                          "--format", "junit")
    suite = ET.fromstring(out)
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    html_file = tmp_path / "h.html"
    code, _out, _err = run(capsys, "history", "analyze", PLAN, "--catalog", url,
                           "--format", "html", "-o", str(html_file))
    page = html_file.read_text()
    assert code == 0 and page.count("<svg") == 2
    assert "src=" not in page and "<script" not in page  # self-contained
    assert 'fill="none"' in page and "not analysed: noisy neighbour" in page
    assert "night-013.btr" in page  # each point links to its session
    code, out, _err = run(capsys, "history", "analyze", PLAN, "--catalog", url)
    assert code == 0 and "| randread iops read (fleet) | 17 |" in out


def test_a_missing_catalog_is_not_made_by_a_command_that_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "typo.sqlite"
    code, _out, err = run(capsys, "history", "gate", PLAN, "--catalog", str(missing))
    assert code == 1 and "no such file" in _one_sentence(err)
    assert not missing.exists()


def test_filters_since_and_branch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "c.sqlite")
    cat = fill(url, {("randread", "iops", "read", "(fleet)"): [1000.0 + i for i in range(10)]})
    cat.executemany("INSERT INTO run_attributes (run_id, name, value) VALUES (?, 'branch', ?)",
                    [(i, "main" if i % 2 else "dev") for i in range(1, 11)])
    cat.commit()
    cat.close()
    code, out, _err = run(capsys, "history", "show", PLAN, "--catalog", url, "--branch", "dev")
    assert code == 0 and "(5 runs, 5 recorded)" in out
    code, out, _err = run(capsys, "history", "show", PLAN, "--catalog", url, "--since",
                          "2026-09-24T00:00+00:00")  # run i: T0 + i days; run 3: 09-24 14:13Z
    assert code == 0 and "(8 runs, 8 recorded)" in out, out


def test_the_gate_can_be_limited_to_some_metrics(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A nightly job on a shared runner gates throughput only: a latency regression alone
    fails the whole gate, and nothing when ``--metric`` leaves latency out."""
    steady = [1000.0 + (i % 3) for i in range(18)]
    slower = [1e-4 * (1 + (i % 3) / 100) for i in range(12)] + \
        [3e-4 * (1 + (i % 3) / 100) for i in range(6)]
    series = {("randread", "iops", "read", "(fleet)"): steady,
              ("randread", "latency_p99_seconds", "read", "(fleet)"): slower}
    fill(str(tmp_path / "all.sqlite"), series).close()
    code, out, _err = run(capsys, "history", "gate", PLAN, "--catalog",
                          str(tmp_path / "all.sqlite"))
    assert code == 3 and "p99 latency read +200.0%" in out, out
    fill(str(tmp_path / "iops.sqlite"), series).close()
    code, out, _err = run(capsys, "history", "gate", PLAN, "--catalog",
                          str(tmp_path / "iops.sqlite"), "--metric", "iops", "--metric", "bw")
    assert code == 0 and out.startswith("history: 0 regressions, 0 improvements, 0 suspected, "
                                        "1 stable"), out
    for wrong, why in (("util", "is shown, never gated"), ("tps", "is not a metric")):
        code, _out, err = run(capsys, "history", "gate", PLAN, "--catalog",
                              str(tmp_path / "iops.sqlite"), "--metric", wrong)
        assert code == 2 and why in err and "iops, bw, lat_mean, lat_p99" in err, err


def test_two_series_of_one_name_read_apart(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The same step's fleet on another set of hosts is a new series (series.py): the rows
    of series of one name say the run each starts from, so that show and analyze never
    print two alike."""
    from tests.history_points import night

    url = str(tmp_path / "c.sqlite")
    cat = open_catalog(url)
    for sid, env in ((1, "three-hosts"), (2, "four-hosts")):
        cat.execute("INSERT INTO series (id, plan, step, args_key, args, metric, op, scope, "
                    "env_key) VALUES (?, ?, 'randread', 'a', '{}', 'iops', 'read', "
                    "'(fleet)', ?)", (sid, PLAN, env))
    for i in range(1, 13):
        night(cat, i, {1 if i <= 6 else 2: 1000.0 + i % 3})
    cat.close()
    code, out, _err = run(capsys, "history", "show", PLAN, "--catalog", url)
    assert code == 0
    assert "randread iops read (fleet) from run 1  (6 runs" in out, out
    assert "randread iops read (fleet) from run 7  (6 runs" in out, out
    code, out, _err = run(capsys, "history", "analyze", PLAN, "--catalog", url)
    assert code == 0
    rows = [line.split(" | ")[0] for line in out.splitlines() if "(fleet)" in line]
    assert rows == ["| randread iops read (fleet) from run 1",
                    "| randread iops read (fleet) from run 7"], out
