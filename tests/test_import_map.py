"""The import map (benchtui/session/import_map.py): reading it, and cutting reports into
(host, step) pieces with it."""

from __future__ import annotations

import pytest

from benchtui.errors import InputError
from benchtui.session.import_map import classify, parse_map, split_pieces

REPORT = """\
# A report

* not a host: the methodology, before the data

## Data

* db1

```
# randread
line a
```

* db2:

```bash
#!/bin/sh
# randread
line b
# randwrite
line c
```

## Network

* not a host either
"""


def pieces(report: str, map_text: str) -> list[tuple[str, str, int, list[str]]]:
    imap = parse_map(map_text, "m.toml")
    return [(p.host, p.step, p.line, p.lines)
            for p in split_pieces(report.split("\n"), imap, "r.md")]


def test_classify_reads_markdown_with_code_blocks() -> None:
    got = list(classify(["## Two", "* b", "```", "# c", "* not a bullet", "```", "# h1",
                         "- d", "text"]))
    assert got == [("heading", 2, "Two"), ("bullet", None, "b"), ("fence", None, ""),
                   ("comment", None, "c"), (None, None, ""), ("fence", None, ""),
                   ("heading", 1, "h1"), ("bullet", None, "d"), (None, None, "")]


def test_hosts_holding_steps_within_a_section() -> None:
    got = pieces(REPORT, 'within = "## Data"\n[host]\nmarker = "bullet"\nstrip = ":"\n'
                 '[step]\nmarker = "comment"\n')
    assert got == [("db1", "randread", 10, ["line a", "```", ""]),
                   ("db2", "randread", 18, ["line b"]),
                   ("db2", "randwrite", 20, ["line c", "```", ""])]


def test_steps_holding_hosts_and_headings_of_a_level() -> None:
    report = "## randread\n### h1\nout 1\n### h2\nout 2\n## randwrite\nlost\n### h1\nout 3\n"
    got = pieces(report, '[host]\nmarker = "heading"\nlevel = 3\n'
                 '[step]\nmarker = "heading"\nlevel = 2\n')
    # A new step forgets the host: "lost" belongs to no piece.
    assert got == [("h1", "randread", 2, ["out 1"]), ("h2", "randread", 4, ["out 2"]),
                   ("h1", "randwrite", 8, ["out 3", ""])]


def test_one_line_marks_both_with_match_groups_and_rename() -> None:
    report = "intro\n--- Ext4 libaio randrw\nout 1\n----- block device, io_uring x\nout 2\n"
    got = pieces(report, "[host]\nmarker = \"line\"\n"
                 "match = '(?i)^-{3,}\\s*(ext4|block device)'\n"
                 'rename = { "block device" = "None" }\n'
                 "[step]\nmarker = \"line\"\nmatch = '^-{3,}.*\\b(libaio|io_uring)\\b'\n"
                 'rename = { libaio = "io_submit" }\n')
    assert got == [("Ext4", "io_submit", 2, ["out 1"]), ("None", "io_uring", 4, ["out 2", ""])]


def test_a_match_without_group_filters_and_the_text_is_the_name() -> None:
    got = pieces("* host one\n* skip\n# s\nx\n", '[host]\nmarker = "bullet"\nmatch = "host"\n'
                 '[step]\nmarker = "heading"\n')
    assert got == [("host one", "s", 3, ["x", ""])]


@pytest.mark.parametrize(("report", "map_text", "expected"), [
    (REPORT, 'within = "## Nowhere"\n[host]\nmarker = "bullet"\n[step]\nmarker = "comment"\n',
     'm.toml: within = "## Nowhere" matched no heading of r.md; write the heading as the '
     "report has it"),
    (REPORT, 'within = "## Data"\n[host]\nmarker = "heading"\nlevel = 3\n'
     '[step]\nmarker = "comment"\n',
     'm.toml:2: the [host] rule (headings of level 3) matched no line of r.md under "## Data"'),
    (REPORT, '[host]\nmarker = "bullet"\n[step]\nmarker = "line"\nmatch = "^=== (.*)"\n',
     "m.toml:3: the [step] rule (lines matching '^=== (.*)') matched no line of r.md"),
    # Both rules match, but never in the same section.
    ("## D\n* h1\n## D\n```\n# s1\n```\n",
     'within = "## D"\n[host]\nmarker = "bullet"\n[step]\nmarker = "comment"\n',
     'm.toml: no line of r.md under "## D" comes after both a host and a step marker, so it '
     "holds no piece of output"),
])
def test_a_rule_that_matches_nothing_is_named(report: str, map_text: str,
                                              expected: str) -> None:
    with pytest.raises(InputError) as info:
        pieces(report, map_text)
    assert str(info.value) == expected


@pytest.mark.parametrize(("map_text", "expected"), [
    ('[host]\nmarker = "bullet"\n[step]\nmarker = comment\n',
     "m.toml:4: TOML syntax error: invalid value (column 10); text needs quotes: write "
     'marker = "comment"'),
    ('[host]\nmarker = "bullet"\nlevle = 2\n[step]\nmarker = "comment"\n',
     "m.toml:3: unknown key 'levle' in [host]; the keys are marker, level, match, strip, "
     "rename"),
    ('[host]\nmarker = "bullets"\n[step]\nmarker = "comment"\n',
     "m.toml:2: [host] needs marker = one of heading, bullet, comment, line"),
    ('[host]\nmarker = "bullet"\n',
     'm.toml: the map has no [step] table; add one, e.g. [step] marker = "bullet"'),
    ('[host]\nmarker = "bullet"\nlevel = 2\n[step]\nmarker = "comment"\n',
     'm.toml:3: [host] level must be a heading level from 1 to 6, with marker = "heading"'),
    ('[host]\nmarker = "line"\n[step]\nmarker = "comment"\n',
     'm.toml:2: [host] marker = "line" needs a match; a regular expression that only the '
     "marker lines match"),
    ("[host]\nmarker = \"bullet\"\nmatch = '(x'\n[step]\nmarker = \"comment\"\n",
     "m.toml:3: [host] match is not a valid regular expression (missing ), unterminated "
     "subpattern at position 0)"),
    ('hosts = 1\n[host]\nmarker = "bullet"\n[step]\nmarker = "comment"\n',
     "m.toml:1: unknown key 'hosts' in the map; a map has within, [host] and [step] "
     "(docs/import.md)"),
    ('within = 3\n[host]\nmarker = "bullet"\n[step]\nmarker = "comment"\n',
     'm.toml:1: within must be a heading, as text; e.g. within = "#### 测试数据"'),
    ('[host]\nmarker = "bullet"\nrename = { a = 1 }\n[step]\nmarker = "comment"\n',
     'm.toml:3: [host] rename must be a table of names; e.g. rename = { "libaio" = '
     '"io_submit" }'),
])
def test_a_wrong_map_is_one_sentence_with_its_line(map_text: str, expected: str) -> None:
    with pytest.raises(InputError) as info:
        parse_map(map_text, "m.toml")
    assert str(info.value) == expected
