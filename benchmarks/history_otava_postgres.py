"""Point Apache Otava at benchtui's PostgreSQL views, for real (the example of
docs/history.md): a PostgreSQL server is started (tests/pg_server.py), the sessions given are
imported with ``benchtui history import`` (attributes commit=c01, c02... and branch=main),
and ``otava analyze`` reads ``history_metrics`` with the configuration the docs show.

    python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
    .venv/bin/python benchmarks/history_otava_postgres.py --otava /tmp/otava/bin/otava \\
        --step randread-limited --skip 1 night-*.btr
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pg_server import postgres_server  # noqa: E402

CONFIG = """\
templates:
  benchtui_fleet:
    type: postgres
    time_column: time
    attributes: [run_id, commit]
    metrics:
      iops_read: {{direction: 1, scale: 1}}
      bw_read: {{direction: 1, scale: 1}}
      lat_p99_read: {{direction: -1, scale: 1}}
tests:
  {plan}.{step}:
    inherit: [benchtui_fleet]
    query: |
      SELECT time, run_id, "commit", iops_read, bw_read, lat_p99_read
      FROM history_metrics
      WHERE plan = '{plan}' AND step = '{step}' AND scope = '(fleet)'
        AND outcome = 'completed' AND branch = %{{BRANCH}}
      ORDER BY time
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sessions", nargs="+")
    ap.add_argument("--otava", default="otava", help="the otava command")
    ap.add_argument("--plan", default="nightly")
    ap.add_argument("--step", required=True)
    ap.add_argument("--skip", default="5")
    args = ap.parse_args()
    with postgres_server() as url, tempfile.TemporaryDirectory() as top:
        port = url.rsplit(":", 1)[1].split("/")[0]
        for i, path in enumerate(args.sessions, 1):
            subprocess.run([sys.executable, "-m", "benchtui", "history", "import", path,
                            "--catalog", url, "--skip", args.skip, "--attr", f"commit=c{i:02d}",
                            "--attr", "branch=main"], cwd=ROOT, check=True,
                           capture_output=True)
        config = Path(top) / "otava.yaml"
        config.write_text(CONFIG.format(plan=args.plan, step=args.step))
        env = {**os.environ, "POSTGRES_HOSTNAME": "127.0.0.1", "POSTGRES_PORT": port,
               "POSTGRES_USERNAME": "postgres", "POSTGRES_PASSWORD": "unused",
               "POSTGRES_DATABASE": "postgres"}
        done = subprocess.run([args.otava, "analyze", "--config-file", str(config),
                               f"{args.plan}.{args.step}", "--branch", "main"], env=env,
                              capture_output=True, text=True, check=False)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr[-2000:])
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
