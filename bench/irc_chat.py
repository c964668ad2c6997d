"""The real written chat the embedded classifier learns from and is measured on: messages of
public IRC channels (Ubuntu's meeting channel, Rust, Stripe and MediaWiki developers), from
the Ubuntu IRC disentanglement corpus (Kummerfeld et al., ACL 2019; the new-domain files of
Gupta and Kummerfeld, ALTA 2023). Licence of the data: CC BY 4.0
(https://github.com/jkkummerfeld/irc-disentanglement/blob/master/data/LICENSE-data.txt);
attribution in the README and in ``core/perception/chat_training.LICENSE.md``.

The corpus annotates which message answers which; it has no dialogue acts. The acts were
labelled for this project, message by message, by reading each in its context, following
``LABELLING.md`` (beside this script): by annotators that are AI models working from that
written guide, never by a program, a keyword rule, the stance expressions or any
classifier of ours. The held-out test split comes from logs (other days) of which no
message trains; the calibration split, which sets ``perception.min_confidence``, is the
first messages of two logs whose later messages train.

    # fetch github:jkkummerfeld/irc-disentanglement, then:
    python bench/irc_chat.py chunks REPO OUT_DIR     # the files handed to the annotators
    python bench/irc_chat.py check REPO              # every shipped message is the log's

A training message whose text is one of ``tests/data/utterances.jsonl``'s ("+1", "k") is
left out of training, so that our own evaluation corpus is never read verbatim; the
written-chat test split keeps its common messages ("ok", "thanks"): they are what chat is,
and the report counts how many of them training holds.

The training logs are labelled whole, but for the first messages of the two logs the
calibration split takes (8,493 messages: 2,765 first, then the other 5,728, labelled the same
way later).

``check`` rebuilds each shipped row's text from the corpus by its ``source``
(``irc:<file>:<line>``) and reports any difference: the shipped files hold the corpus's
words as written, only the speaker's ``<nick>`` taken off (an address such as "geser: ..."
is kept: it is how people write)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "core" / "perception" / "chat_training.jsonl"
CALIBRATION = ROOT / "tests" / "data" / "chat_calibration.jsonl"
TEST = ROOT / "tests" / "data" / "chat_test.jsonl"

# which part of which log each split takes (by message, bots and joins left out)
SPLITS: dict[str, list[tuple[str, int, int]]] = {
    "test": [
        ("ubuntu-meeting.2", 0, 350),
        ("rust.2", 0, 120),
        ("stripe.2", 0, 120),
        ("mediawiki.2", 0, 110),
    ],
    "calibration": [("ubuntu-meeting.1", 0, 200), ("rust.1", 0, 100)],
    "training": [
        ("ubuntu-meeting.0", 0, 1037),
        ("ubuntu-meeting.1", 200, 1074),
        ("rust.0", 0, 1175),
        ("rust.1", 100, 1197),
        ("stripe.0", 0, 1200),
        ("stripe.1", 0, 1200),
        ("mediawiki.0", 0, 757),
        ("mediawiki.1", 0, 1177),
    ],
}
_LINE = re.compile(r"^(\S+) (\S+) \[([\d:]+)\] <([^>]+)>\s*(.*?)\s*$")
# bots: their lines are the bot's, not a person's (MootBot took the meetings' minutes)
_BOTS = {
    *("MootBot", "ubotu", "ubottu", "wikibugs", "meetingology", "grrrit-wm", "wm-bot"),
    *("jenkins-bot", "gerrit-wm", "ChanServ", "NickServ", "Trebuchet", "rustbot", "playbot"),
    *("stripe-bot", "gitbot", "logbot"),
}


def messages(repo: Path, name: str) -> list[tuple[int, str, str]]:
    """(line, nick, text) of each person's message of ``data/new-domains/NAME.ascii.txt``."""
    text = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"HEAD:data/new-domains/{name}.ascii.txt"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = []
    for number, line in enumerate(text.splitlines()):
        match = _LINE.match(line)
        if match is None:  # a join, a part, a topic change
            continue
        nick, said = match.group(4), match.group(5)
        if nick in _BOTS or nick.lower().endswith("bot") or not said:
            continue
        found.append((number, nick, said))
    return found


def chunks(repo: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for split, parts in SPLITS.items():
        rows = [
            f"{name}:{number:04d}\t<{nick}> {said}"
            for name, start, end in parts
            for number, nick, said in messages(repo, name)[start:end]
        ]
        (out / f"{split}.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"{split}: {len(rows)} messages -> {out / f'{split}.txt'}")


def check(repo: Path) -> int:
    texts: dict[str, str] = {}
    wrong = 0
    for path in (TRAIN, CALIBRATION, TEST):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            name, number = row["source"].removeprefix("irc:").rsplit(":", 1)
            if name not in {t.split(":")[0] for t in texts}:
                texts |= {f"{name}:{k:04d}": said for k, _, said in messages(repo, name)}
            if texts.get(f"{name}:{number}") != row["text"]:
                print(f"{path.name}:{n}: {row['source']} differs from the log", file=sys.stderr)
                wrong += 1
    print("every message is the log's" if not wrong else f"{wrong} differ")
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("chunks", "check"):
        p = sub.add_parser(command)
        p.add_argument("repo", type=Path, help="the corpus's git directory")
        if command == "chunks":
            p.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "chunks":
        chunks(args.repo, args.out)
        return 0
    return check(args.repo)


if __name__ == "__main__":
    sys.exit(main())
