"""``deliberate log [verify|head|seal]``, ``deliberate replay [--verify]`` and
``deliberate compact``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace

from bot.app import App
from bot.commands import SUMMARIES
from bot.commands.args import add_reveal, masking, positive_int, state_key
from bot.reports.render import Masking, json_line, log_line
from bot.screen import one_line
from core.state.chain import (
    SIGNING_KEY_ENV,
    ChainBroken,
    ChainReport,
    Head,
    Link,
    check_head,
    signing_key,
    verify_chain,
)
from core.state.chain.seal import seal
from core.state.checkpoints import HistoryCompacted
from core.state.compaction import Compaction, Compactor, Retention
from core.state.entry import Entry
from core.state.replay import STRETCH, Difference, Pace, Replayer, visible

__all__ = ["compaction_line", "register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    log = commands.add_parser(
        "log", help=SUMMARIES["log"], description="Show committed mutations, oldest first."
    )
    log.add_argument("--key", type=state_key, help="only mutations of this key")
    log.add_argument(
        "--limit", type=int, default=50, metavar="N", help="the newest N mutations (default 50)"
    )
    log.add_argument("--json", action="store_true", help="one JSON object per line")
    add_reveal(log)
    log.set_defaults(handler=_log)
    chain = log.add_subparsers(dest="log_command", metavar="{verify,head,seal}")
    verify = chain.add_parser(
        "verify",
        help="check the log's hash chain",
        description="Walk the log's hash chain (each record carries the hash of its "
        "predecessor and its own fields) from where it starts (record 1, or the compaction "
        "mark, which must also vouch for the checkpoint) and name the first record that "
        "breaks it: changed, deleted, put out of place, planted without a hash anywhere "
        "(before record 1 too), or cut off the end. With --head, also check that a head "
        "saved by 'deliberate log head' is still on the chain, from the start it names "
        "(signed under $" + SIGNING_KEY_ENV + "). Exit 1 when the chain or the head does "
        "not hold; 3 when nothing vouches for the log (no record is chained, or an older "
        "release's compaction mark: see 'deliberate log seal').",
    )
    verify.add_argument(
        "--head", metavar="FILE_OR_JSON", help="a saved head: its JSON, or a file holding it"
    )
    verify.set_defaults(handler=_verify)
    head = chain.add_parser(
        "head",
        help="print the chain's head, signed, to keep elsewhere",
        description="Verify the chain, then print its head (the newest record's log id, its "
        "number in the chain and its hash, where the chain starts and the state at it) as "
        "one JSON line, signed with HMAC-SHA256 under $" + SIGNING_KEY_ENV + " (unsigned, "
        "and said so, when it is not set). Keep it where Redis's writers cannot reach; "
        "'deliberate log verify --head' checks it later. It rebuilds the state at the head "
        "from the checkpoint and the log, as 'replay' does.",
    )
    head.set_defaults(handler=_head)
    seal = chain.add_parser(
        "seal",
        help="vouch once for a start an older release left unvouched",
        description="Vouch for the log's start where an older release left nothing to "
        "vouch for it: records written before the log was chained (ahead of record 1), or a "
        "compaction mark that carries no checkpoint SHA-1. It first checks the chain and "
        "that the checkpoint (or nothing) and every record rebuild the live state, and "
        "refuses otherwise (a record planted at the start is not sealed); then compacts the "
        "unchained records into the checkpoint and marks it. Exit 1 when refused.",
    )
    seal.set_defaults(handler=_seal)

    replay = commands.add_parser(
        "replay",
        help=SUMMARIES["replay"],
        description="Rebuild the snapshot from the mutation log (from the checkpoint the "
        "compaction mark vouches for), checking each record's link of the hash chain as it "
        "reads it; nothing is saved. With --verify, compare it with the live snapshot and "
        "exit 1 on any difference, naming the keys, or where the chain breaks.",
    )
    replay.add_argument("--verify", action="store_true", help="compare with the live snapshot")
    replay.add_argument(
        "--from-scratch", action="store_true", help="ignore checkpoints and replay the whole log"
    )
    add_reveal(replay)  # the values of the entries that differ
    replay.set_defaults(handler=_replay)

    compact = commands.add_parser(
        "compact",
        help=SUMMARIES["compact"],
        description="Compact the workspace's mutation log: replay the records retention lets "
        "go (store.retention in the config: keep_days, keep_records) into the checkpoint, "
        "then trim them; records a rules consumer has not handled are kept. Also drops "
        "expired keys from the key index. The worker does this every "
        "store.retention.compact_every_sec.",
    )
    compact.add_argument(
        "--keep-days", type=float, metavar="D", help="keep D days of log (default: the config's)"
    )
    compact.add_argument(
        "--keep-records",
        type=positive_int,
        metavar="N",
        help="keep at most the newest N records (default: the config's)",
    )
    compact.set_defaults(handler=_compact)


def _log(app: App, args: argparse.Namespace) -> int:
    if args.limit < 1:
        print("deliberate log: --limit must be at least 1", file=sys.stderr)
        return 2
    log, shown = app.log, masking(args, app.policy)
    records = log.latest(args.limit, key=args.key)
    for record in map(shown.record, records):
        print(json_line(record.to_dict()) if args.json else log_line(record))
    for skipped in log.skipped:  # never a silent gap; the others are still shown
        print(one_line(f"deliberate log: {skipped}; skipped"), file=sys.stderr)
    if args.key:  # the key's first record is gone, or none is left
        reached_start = not records or records[0].version > 1
    else:
        reached_start = not records or log.starts_at(records[0].log_id)
    mark = log.compacted() if reached_start else None
    if mark is not None:
        print(f"deliberate log: {mark}", file=sys.stderr)
    return 0


EXIT_UNVERIFIED = 3  # nothing vouches for the log (none chained, or unsealed): not OK, not broken


def _chain_report(app: App) -> ChainReport:
    report = verify_chain(app.redis, app.store.keys)
    print(f"checked {_count(report.records, 'record')}: {report.start()}")
    return report


def _verify(app: App, args: argparse.Namespace) -> int:
    saved: Head | None = None
    if args.head is not None:
        parsed = _saved_head(args.head)
        if isinstance(parsed, int):
            return parsed
        saved = parsed
    report = _chain_report(app)
    if report.broken is not None:
        unsealed = report.broken.unsealed
        print(f"{'UNSEALED' if unsealed else 'BROKEN'} at {report.broken}")
        if saved is not None:
            why = "the log's start is not vouched for" if unsealed else "the chain is broken"
            print(f"head REFUSED: {why}, so no head can be confirmed on it")
            return 1
        return EXIT_UNVERIFIED if unsealed else 1
    last = report.last
    if last is None:
        if report.records:  # records, none of them chained: nothing vouches for them
            print(f"UNVERIFIED: no record carries a link of the chain ({report.records} held)")
            return EXIT_UNVERIFIED
        print("OK: nothing to check yet")
    else:
        print(f"OK: the chain holds through record {last.n} ({last.log_id}) {last.hash}")
    if saved is None:
        return 0
    checked = check_head(app.redis, app.store.keys, saved, report, _state_at(app))
    print(f"head {'OK' if checked.ok else 'REFUSED'}: {checked.says}")
    return 0 if checked.ok else 1


def _state_at(app: App) -> Callable[[Link], str]:
    """The digest of the state at a record, rebuilt as replay does (what a head names)."""
    return lambda link: Replayer(app.store).state_at(link.log_id)


def _saved_head(text: str) -> Head | int:
    """The head ``--head`` names, its signature checked; else an exit code, said why."""
    source = text
    if not text.lstrip().startswith("{"):
        try:
            with open(text, encoding="utf-8") as file:
                source = file.read()
        except OSError as exc:
            print(
                f"deliberate log verify: cannot read --head {text}: {exc.strerror}", file=sys.stderr
            )
            return 2
    try:
        head = Head.from_json(source)
    except ValueError as exc:
        print(f"deliberate log verify: --head: {exc}", file=sys.stderr)
        return 2
    key = signing_key()
    if key is None:
        if head.signature is not None:
            print(
                f"deliberate log verify: the head is signed, but {SIGNING_KEY_ENV} is not set: "
                "its signature cannot be checked",
                file=sys.stderr,
            )
            return 2
        print(
            f"deliberate log verify: the head is unsigned ({SIGNING_KEY_ENV} is not set)",
            file=sys.stderr,
        )
        return head
    if not head.signature_ok(key):
        what = "is not signed" if head.signature is None else "has a signature that does not match"
        print(f"head REFUSED: it {what} under {SIGNING_KEY_ENV}: forged or altered")
        return 1
    return head


def _head(app: App, args: argparse.Namespace) -> int:
    report = verify_chain(app.redis, app.store.keys)
    if report.broken is not None:
        print(
            f"deliberate log head: the chain is broken at {report.broken}; nothing signed",
            file=sys.stderr,
        )
        return 1
    if report.last is None:
        print("deliberate log head: no record is chained yet; nothing to sign", file=sys.stderr)
        return 1
    state = _state_at(app)(report.last)
    mark = report.origin.mark
    head = Head(
        app.store.workspace,
        report.last,
        start=report.origin.digest(),
        state=state,
        compacted=None if mark is None else mark.through,
    )
    key = signing_key()
    if key is None:
        print(
            f"deliberate log head: {SIGNING_KEY_ENV} is not set: this head is UNSIGNED, so "
            "anyone who can write to Redis could forge one; set it to sign",
            file=sys.stderr,
        )
    else:
        head = head.signed(key)
    print(head.to_json())
    return 0


def _seal(app: App, args: argparse.Namespace) -> int:
    sealed = seal(app.store)
    print(sealed.says if sealed.done else f"deliberate log seal: {sealed.says}")
    return 0 if sealed.done else 1


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _since(replayer: Replayer) -> str:
    start = replayer.started_after
    return f" after the checkpoint at {start}" if start else ""


def _rate(pace: Pace) -> str:
    """How fast its records went, for the summary line (nothing when none did): the median
    of its runs of ``STRETCH`` records, so that one slowed by another process counts little."""
    if pace.rate is None:
        return ""
    laps = len(pace.rates)
    over = f" (the median of {laps} runs of {STRETCH:,} records)" if laps > 1 else ""
    return f"; {pace.rate:,.0f} records/s{over}"


def _progress(count: int) -> None:
    print(f"  replayed {count} mutations...", file=sys.stderr)


def _compact(app: App, args: argparse.Namespace) -> int:
    configured = app.config.store.retention.retention
    keep_ms = configured.keep_ms if args.keep_days is None else round(args.keep_days * 86_400_000)
    if keep_ms is not None and keep_ms <= 0:
        print("deliberate compact: --keep-days must be more than 0", file=sys.stderr)
        return 2
    retention = Retention(keep_ms, args.keep_records or configured.keep_records)
    done = Compactor(app.store, retention).run()
    print(compaction_line(app.store.workspace, retention, done))
    return 0


def compaction_line(workspace: str, retention: Retention, done: Compaction) -> str:
    """One compaction, in a sentence (the worker logs the same)."""
    if done.busy:
        return f"{workspace}: another process is compacting this workspace; nothing done"
    if done.trimmed:
        head = (
            f"{workspace}: compacted {_count(done.trimmed, 'record')} through {done.through} "
            f"into the checkpoint; the log keeps {done.log_length}"
        )
    elif retention.trims:
        head = (
            f"{workspace}: nothing to compact (keeping {retention}; {done.log_length} in the log)"
        )
    else:
        head = f"{workspace}: no retention configured, the log keeps everything"
    if done.held_back:
        head += f"; held back: {done.held_back}"
    if done.index_dropped:
        head += f"; {_count(done.index_dropped, 'expired key')} dropped from the key index"
    return head


def _replay(app: App, args: argparse.Namespace) -> int:
    try:
        return _replayed(app, args)
    except HistoryCompacted as exc:
        print(f"deliberate replay: {exc}", file=sys.stderr)
        return 2
    except ChainBroken as exc:
        print(f"deliberate replay: {exc}", file=sys.stderr)
        return 1


def _replayed(app: App, args: argparse.Namespace) -> int:
    replayer = Replayer(app.store, progress=_progress)
    if not args.verify:
        image = replayer.rebuild(use_checkpoint=not args.from_scratch)
        now = app.store.snapshot().at_ms
        print(
            f"replayed {_count(replayer.applied, 'mutation')}{_since(replayer)} up to "
            f"{image.last_id or 'the start'}: {_count(len(visible(image, now)), 'live key')}, "
            f"{_count(len(image.versions), 'key')} ever written"
        )
        return 0
    live, diffs = replayer.verify(use_checkpoint=not args.from_scratch)
    print(
        f"replayed {_count(replayer.applied, 'mutation')}{_since(replayer)} up to "
        f"{live.last_log_id or 'the start'}; the live snapshot has "
        f"{_count(len(live.entries), 'key')}{_rate(replayer.pace)}"
    )
    if diffs:
        print(f"MISMATCH in {len(diffs)} key(s):")
        shown = masking(args, app.policy)
        for diff in diffs:
            print(one_line(f"  {_masked(diff, shown)}"))
        return 1
    print("OK: the replayed snapshot equals the live one")
    return 0


def _masked(diff: Difference, shown: Masking) -> Difference:
    """``diff`` with the values of a secret key masked (unless ``--reveal``)."""
    live, replayed = (
        shown.entry(s) if isinstance(s, Entry) else s for s in (diff.live, diff.replayed)
    )
    return replace(diff, live=live, replayed=replayed)
