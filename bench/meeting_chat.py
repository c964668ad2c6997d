"""Real chat of small groups deciding things together, for the embedded classifier to learn
from and be measured on (issue 42): the IRC meeting logs of two open-source projects, each
meeting whole and in order, with who wrote each message.

- Monero's community, dev, GUI and localization meetings, as published on getmonero.org
  (github:monero-project/monero-site, commit db1cb28c9cb588f5df79b2020a28827a102c4e64,
  ``_posts/``): BSD 3-Clause, "Copyright (c) 2014-2025, The Monero Project".
- I2P's developer meetings (github:i2p/i2p.www, commit
  3afd7340f51d53e407986e2d2ca9cf004b708b35, ``i2p2www/meetings/logs/``): "Website content,
  text, images etc. ... Copyright (c) 2004 - 2015 I2P", CC BY-SA 4.0. The labelled files
  that hold these messages are CC BY-SA 4.0 too (share-alike).

Both notices are in ``core/perception/meeting_training.LICENSE.md`` and
``tests/data/meeting.LICENSE.md``. The meetings run on an agenda, with a chair asking "any
objections?", votes ("I vote for yes, enable by default"), "+1", people taking on actions
and setting dates: the register of people deciding together, which support channels lack.

The acts were labelled for this project, message by message, by reading each in its
meeting, following ``LABELLING.md``, by annotators that are AI models working from that
written guide, never by a program, a keyword rule or any classifier of ours; each label
they were not sure of was read again with the messages around it, and ``"sure": false``
marks the ones still doubtful. Split by meeting: ``tests/data/meeting_test.jsonl`` (fourteen
meetings, 2,766 messages: four first, then ten more labelled after the training options were
chosen; one "+1" left out, it is one of ``tests/data/utterances.jsonl``'s turns) and
``tests/data/meeting_dev.jsonl`` (two, 228: what training options were chosen on) are never
trained on; ``core/perception/meeting_training.jsonl`` (seven, 1,381) trains.

    # fetch github:monero-project/monero-site and github:i2p/i2p.www, then:
    python bench/meeting_chat.py check MONERO_GIT I2P_GIT   # every shipped message is the log's

``check`` reads each shipped row's log line again by its ``source`` (``monero:FILE:LINE``,
``i2p:FILE:LINE``) and reports any difference in writer or text: the shipped files hold the
logs' words as written (Markdown's escapes and HTML's entities read, the writer's nick taken
out of the line; a relay's nick replaced by the person it relays)."""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    ROOT / "core" / "perception" / "meeting_training.jsonl",
    ROOT / "tests" / "data" / "meeting_dev.jsonl",
    ROOT / "tests" / "data" / "meeting_test.jsonl",
]
COMMITS = {
    "monero": "db1cb28c9cb588f5df79b2020a28827a102c4e64",
    "i2p": "3afd7340f51d53e407986e2d2ca9cf004b708b35",
}
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|~])")
_MONERO = re.compile(r"^\*\*\\<(.+?)\\?>\*\*\s?(.*?)\s*$")
_RELAY = re.compile(r"^(.+?)\\?> \\<(.+)$")
_I2P_RELAY = re.compile(r"^i2p-relay\\?> \{-?(.+?)\}$")
_RELAYS = {"xmrmatterbridge", "xmrmatterbridge[m]", "monerobridge"}
_I2P = re.compile(r"^(?:\d\d:\d\d(?::\d\d)? )?<[ @+%&~]?([^ >]+)> ?(.*?)\s*$")
_I2P_LATER = re.compile(r"^\(\d\d?:\d\d:\d\d [AP]M\) ([^\s:]+): (.*?)\s*$")


def said(kind: str, line: str) -> tuple[str, str] | None:
    """(writer, text) of one log line, as the shipped files hold it; None: no message."""
    if kind == "monero":
        found = _MONERO.match(line)
        if not found:
            return None
        who, text = found.group(1), found.group(2)
        relayed = _RELAY.match(who)
        if relayed and _MARKDOWN_ESCAPE.sub(r"\1", relayed.group(1)) in _RELAYS:
            who = relayed.group(2)
        if bridged := _I2P_RELAY.match(who):
            who = bridged.group(1)
        return _MARKDOWN_ESCAPE.sub(r"\1", who), _MARKDOWN_ESCAPE.sub(r"\1", text)
    found = _I2P.match(line) or _I2P_LATER.match(line)
    return (found.group(1), html.unescape(found.group(2))) if found else None


def check(repos: dict[str, Path]) -> int:
    lines: dict[tuple[str, str], list[str]] = {}
    wrong = total = 0
    for path in FILES:
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            kind, file, number = row["source"].split(":", 2)
            if (kind, file) not in lines:
                shown = subprocess.run(
                    ["git", "-C", str(repos[kind]), "show", f"{COMMITS[kind]}:{file}"],
                    capture_output=True,
                    check=True,
                )
                lines[kind, file] = shown.stdout.decode("utf-8", "replace").splitlines()
            total += 1
            if said(kind, lines[kind, file][int(number) - 1]) != (row["who"], row["text"]):
                wrong += 1
                print(f"{path.name}: {row['source']} differs from the log", file=sys.stderr)
    print(f"{total} messages checked against the logs, {wrong} differ")
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    checking = sub.add_parser("check", help="every shipped message is the log's")
    checking.add_argument("monero", type=Path, help="monero-project/monero-site's git directory")
    checking.add_argument("i2p", type=Path, help="i2p/i2p.www's git directory")
    args = parser.parse_args()
    return check({"monero": args.monero, "i2p": args.i2p})


if __name__ == "__main__":
    sys.exit(main())
