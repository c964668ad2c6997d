"""Build the real-human data the embedded classifier learns from and is measured on, from the
ICSI Meeting Recorder Dialog Act corpus (MRDA): 75 real research meetings, every utterance
tagged with a dialogue act. Licence: CC BY 4.0 ("The ICSI corpus and its annotations are
released under the Creative Commons Attribution 4.0 license agreement",
https://groups.inf.ed.ac.uk/ami/icsi/license.shtml); attribution in the README.

Get the database files (one ``.dadb`` per meeting) and run this script:

    # fetch github:NathanDuran/MRDA-Corpus, then copy mrda_archive/database/*.dadb to DIR
    python bench/mrda.py DIR

Only the original database files are read (the repository's own processed text is not used).
A ``.dadb`` line is CSV: start, end, id, channel, the words ("start+end+word" joined by "|"),
the dialogue-act label, ... An utterance is kept when it carries one act (no "|"), is
complete (no "%"), and maps to one of our acts (``MAPPING``); the others are left out.

Meetings are split, never utterances: a meeting's hash puts it in training (70%), in the
calibration split that sets ``min_confidence`` (10%), or in the held-out test split (20%)
that is never used for training or tuning. Each split is sampled, balanced over the four
acts MRDA carries (refine has no MRDA tag), with a fixed seed: the output is the same on
every run. The calibration and test splits hold no text the training files hold, nor one
another's, nor any text twice (compared lower-cased, spaces collapsed): a common "yeah" is
learned from training, and measured only on turns the classifier never saw verbatim.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "core" / "perception" / "human_training.jsonl"
OURS = ROOT / "core" / "perception" / "training.jsonl"
CALIBRATION = ROOT / "tests" / "data" / "human_calibration.jsonl"
TEST = ROOT / "tests" / "data" / "human_test.jsonl"

# MRDA's tags (its manual's names) and the act each maps to. A question's general tag
# (qy yes-no, qw wh-, qr or-, qrr or-clause, qo open-ended) makes it a question, whatever
# else it carries; qh (rhetorical) is left out.
QUESTIONS = {"qy", "qw", "qr", "qrr", "qo"}
COMMIT = {"aa", "aap", "cc"}  # accept, partial accept, commitment ("I'll do that")
BRAINSTORM = {"cs", "df", "e"}  # suggestion, defending/explanation, elaboration
# jokes, exclamations, apologies, thanks, welcomes, sympathy, a change of topic
TANGENT = {"j", "fe", "fa", "ft", "fw", "by", "tc"}
# speech, not chat: backchannels (b, bk, bh: "uh-huh", "yeah" while another talks) and floor
# holders and grabbers (fh, fg, h: "um", "so") have no counterpart in a chat, where the same
# "yeah" is the accept (aa) it is when it answers a proposal; they are left out
MAPPING = (
    "question: general tag qy, qw, qr, qrr, qo (qh, rhetorical, left out); "
    "commit: aa, aap, cc; brainstorm: a plain statement (s), cs, df, e; "
    "tangent: j, fe, fa, ft, fw, by, tc; a one-word question or tangent ('ok?', 'right?', "
    "a topic-changing 'ok', an 'oh': intonation and timing decide them) left out; left out: "
    "backchannels and floor mechanisms (b, bk, "
    "bh, ba, bd, fh, fg, h), talk about the task itself (t, t1, t3: in MRDA mostly the "
    "meeting's own content), and everything else (rejections, answers, commands, ...)"
)
SIZES = {"train": 500, "calibration": 200, "test": 250}  # per act


def act_of(label: str) -> str | None:
    """Our act for one MRDA label (``general^specific^...``), or None to leave it out."""
    if not label or "|" in label or "%" in label or label in ("z", "x"):
        return None
    parts = label.replace(":", "^").split("^")
    general, specific = parts[0].split(".")[0], set(parts[1:])
    if general in QUESTIONS:
        return "question"
    if general == "qh":
        return None
    if general != "s":
        return None
    if specific & COMMIT:
        return "commit" if specific <= COMMIT | {"rt"} else None
    if not specific or specific <= BRAINSTORM | {"rt"}:
        return "brainstorm"
    if specific <= TANGENT | {"rt"}:
        return "tangent"
    return None


def text_of(words: str) -> str:
    """The words as said, without the timings, the markers and the disfluency marks."""
    said = []
    for token in words.split("|"):
        word = token.rpartition("+")[2].replace("_", "")
        if word and not any(ch in word for ch in "<>()#=@{}[]"):
            said.append(word.rstrip("-"))
    return " ".join(w for w in said if w)


def split_of(meeting: str) -> str:
    bucket = int(hashlib.sha256(meeting.encode()).hexdigest(), 16) % 10
    return "train" if bucket < 7 else "calibration" if bucket == 7 else "test"


def read(directory: Path) -> dict[str, dict[str, list[dict[str, str]]]]:
    """Split -> act -> rows, in file order."""
    out: dict[str, dict[str, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(directory.glob("*.dadb")):
        meeting = path.stem
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            for row in csv.reader(handle):
                if len(row) < 6:
                    continue
                act, text = act_of(row[5].strip()), text_of(row[4])
                if act is None or not text:
                    continue
                if act in ("question", "tangent") and " " not in text:
                    # "ok?", "right?", a topic-changing "ok", an "oh": said so by intonation
                    # and timing alone, which a text does not carry
                    continue
                out[split_of(meeting)][act].append(
                    {"text": text, "act_type": act, "source": f"mrda:{meeting}"}
                )
    return out


def same(text: str) -> str:
    return " ".join(text.lower().split())


def unseen(rows: list[dict[str, str]], taken: set[str]) -> list[dict[str, str]]:
    """``rows`` whose text is not in ``taken``, each text once (its first row); their texts
    are added to ``taken``."""
    kept = []
    for row in rows:
        key = same(row["text"])
        if key not in taken:
            taken.add(key)
            kept.append(row)
    return kept


def sample(rows: dict[str, list[dict[str, str]]], size: int, seed: str) -> list[dict[str, str]]:
    picked = []
    for act in sorted(rows):
        pool = list(rows[act])
        random.Random(f"{seed}:{act}").shuffle(pool)
        picked += pool[:size]
    random.Random(seed).shuffle(picked)
    return picked


def write(path: Path, rows: list[dict[str, str]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="the MRDA .dadb files")
    args = parser.parse_args()
    splits = read(args.directory)
    if not splits:
        raise SystemExit(f"no .dadb file with a labelled utterance in {args.directory}")
    seen: set[str] = set()  # texts already taken: no text is in two splits, or twice in one
    for name, path in (("train", TRAIN), ("calibration", CALIBRATION), ("test", TEST)):
        if name != "train":  # across acts too: "right" may be a question and an accept
            taken = set(seen)
            splits[name] = {act: unseen(splits[name][act], taken) for act in sorted(splits[name])}
        rows = sample(splits[name], SIZES[name], name)
        seen |= {same(row["text"]) for row in rows}
        if name == "train":  # the other training file too
            seen |= {same(json.loads(line)["text"]) for line in OURS.read_text().splitlines()}
        write(path, rows)
        counts = Counter(row["act_type"] for row in rows)
        found = {act: len(found) for act, found in sorted(splits[name].items())}
        meetings = len({row["source"] for act in splits[name].values() for row in act})
        print(f"{name}: {len(rows)} rows {dict(counts)} from {meetings} meetings (of {found})")
    print(f"mapping: {MAPPING}")


if __name__ == "__main__":
    main()
