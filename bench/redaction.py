"""What striking secrets out of text costs: ``core.redaction.Redactor`` as it is (every shape:
blanks changed or taken out, case-folded, base64, split) against the redactor it replaced
(``Redactor`` of ``core/gateway/secrecy.py`` at ``--before``, read from git: the values as
written and escaped, one regular expression), on the same texts, in rounds that alternate
(each first in turn). Three texts: a long answer (about 130,000 characters, 20,000 blanks)
quoting 10 secrets 660 times, the same answer quoting none, and a refusal of one line with a
redactor made for it (as the gateway makes one per refusal). Medians per call, and the ratio
new / old."""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import string
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from timing import median_us

from core.redaction import Redactor

BEFORE = "e00cc00"  # the last commit whose secrecy.py held the redactor


def old_module(revision: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:core/gateway/secrecy.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "class Redactor" in source, f"{revision}'s secrecy.py has no Redactor"
    path = Path(tempfile.mkdtemp()) / "old_secrecy.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_secrecy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_secrecy"] = module
    spec.loader.exec_module(module)
    return module


def texts(seed: int = 1) -> tuple[list[str], str, str, str]:
    """The secrets, the long answer quoting them, the same answer quoting none, a refusal."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    secrets = ["".join(rng.choices(alphabet, k=n)) for n in (6, 8, 10, 12, 16, 20, 24, 32, 40, 64)]
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(20_000)
    ]
    clean = " ".join(words)
    for i in range(0, len(words), 30):
        words[i] = secrets[(i // 30) % len(secrets)]
    quoting = " ".join(words)
    refusal = f"vault.token: the value {secrets[6]} is refused: must be one of the 2 values"
    return secrets, quoting, clean, refusal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds (10)")
    parser.add_argument("--reps", type=int, default=20, help="long texts per round and kind (20)")
    parser.add_argument("--before", default=BEFORE, help="git revision of the old redactor")
    args = parser.parse_args()
    old = old_module(args.before)
    secrets, quoting, clean, refusal = texts()
    kinds: dict[str, Any] = {"old": old.Redactor, "new": Redactor}
    made = {name: make(secrets) for name, make in kinds.items()}
    assert made["old"].text(quoting) == made["new"].text(quoting)  # (the same, as written)
    assert made["new"].text(clean) == clean

    encoded = urllib.parse.quote(quoting)
    labelled = "(secret) 42 " * 16_000
    cases: dict[str, Callable[[Any, Any], Callable[[], object]]] = {
        "long answer, 660 secrets": lambda make, r: lambda: r.text(quoting),
        "long answer, no secret": lambda make, r: lambda: r.text(clean),
        "long answer, percent-encoded": lambda make, r: lambda: r.text(encoded),
        "one-line refusal, redactor made": lambda make, r: lambda: make([secrets[6]]).text(refusal),
        "16,000 labels and matches": lambda make, r: lambda: make([42]).text(labelled),
    }
    found: dict[tuple[str, str], list[float]] = {(c, k): [] for c in cases for k in kinds}
    for round_ in range(args.rounds):
        order = list(kinds) if round_ % 2 == 0 else list(reversed(kinds))
        for case, call in cases.items():
            reps = args.reps * 100 if case.startswith("one-line") else args.reps
            for kind in order:
                found[(case, kind)].append(median_us(call(kinds[kind], made[kind]), reps))

    print(f"{'text':<34}{'old µs':>12}{'new µs':>12}{'new / old':>12}")
    struck = made["new"].text(quoting).count("(secret)")
    assert made["new"].text(encoded).count("(secret)") == struck  # (read through its escapes)
    ratios = {}
    for case in cases:
        old_us = statistics.median(found[(case, "old")])
        new_us = statistics.median(found[(case, "new")])
        ratios[case] = new_us / old_us
        print(f"{case:<34}{old_us:>12.1f}{new_us:>12.1f}{ratios[case]:>12.2f}")
    print(
        "Headline: new / old redactor, "
        + ", ".join(f"{case}: {ratio:.1f}x" for case, ratio in ratios.items())
    )


if __name__ == "__main__":
    main()
