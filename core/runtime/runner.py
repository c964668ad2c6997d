"""The runtime: runs the loop for one session at a time. It loads the session, calls the pure
``update``, saves the session with a version check (and on a race runs ``update`` again on
what the other writer saved, so no turn is lost), then runs the commands and feeds their
results back as messages until none is left. What adapters get back are events: views to
render and the outcomes of commits.

A send starts from the session as this process last read or saved it (``SessionStore.known``;
read when it keeps none). Each save (one script, ``sessions``) carries the messages' trace
rows and the transcript lines and beat evaluations their updates asked for, and checks that
nobody saved since what it started from, so the next message starts from what was saved
without reading it again; the audit rows of the model calls made meanwhile go with it too.
A message whose only command is a reading or an answer made in this process (the embedded
classifier's, the offline responder's) is not saved alone: its change waits for the save of
the message that comes back, and so on, so a turn read and answered here is one save; a
save goes before a model is asked or anything acts beyond the session. When a save finds
that someone saved first, the message is updated again on what it found; when it carried
messages that waited, the first of them is updated again instead (the others came of it,
and come again: read and answered in the context found). A turn read and answered here
takes one Redis round trip; one a model answers takes two (the save before the model call
and the save of its answer); either takes one more to read the session when this process
keeps none, or the workspace's own weights are older than a second. A "Use this" click
takes one: its save, the gateway's commit made only on that save, and the save of what the
commit comes to, foreseen and made only if the commit came to that (``on_save.py``), made
while the save and the commit are on their way and sent behind them on the same connection;
two when it did not, or when what a commit comes to cannot be foreseen (the save of what it
came to after it). An Undo of a change this process's click committed takes one too: the
commit said what the key held before (``made_here.py``), so the revert is checked as the
click comes and committed on its save the same way, the key's version and the time the Undo
was offered for checked by the commit itself (``revert_on_save``). An Undo of any other
change takes two: what it must know of the change is asked as the click comes
(``_look_early``) and read once the click is updated; the revert then goes with the save
(three when its lookup goes with the save and the revert after it, ``_reverted``). Only what
the model's tools ask of the gateway adds to a turn.

A save after which the message asks only for views is sent and not waited for
(``Held.pending``): the send hears what it came to before the next save, before anything
acts beyond the session and before it answers. When someone saved first, what came of it is
dropped (its trace rows stay) and what the save carried is updated again on what it found.

Each Redis call the runtime makes (the session and its rows; a commit in the store itself)
is made again when Redis cuts it off (a failover, a restart), for as long as a commit may be
resent (``store.commit_retry_sec``). When that runs out after a commit was sent, the caller
hears ``CommitUnconfirmed`` (applied once or not at all), never a bare connection error that
would pass for "nothing was changed".

It counts each turn people take, and the act its classifier read (``core.metrics``)."""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from redis.exceptions import RedisError

from core.deliberation.actions import ActionType
from core.deliberation.commands import (
    Classify,
    Cmd,
    Commit,
    Generate,
    LogEvaluation,
    Record,
    ResolveProposal,
    RevertCommit,
    Show,
    Teach,
)
from core.deliberation.messages import (
    ActionClicked,
    ActionDone,
    Classified,
    Msg,
    OutcomeNote,
    ShowRequested,
    TopicSet,
    UserSaid,
)
from core.deliberation.session import Session
from core.deliberation.turn import Answering
from core.deliberation.update.loop import Loop
from core.errors import StoreError
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Outcome
from core.gateway.policy import Verdict
from core.gateway.reverts import Planned, revert_id, undo_lookup
from core.metrics import CLASSIFIED, TURNS, Meter
from core.perception import Classifier
from core.perception.team import TeamWeights
from core.redis.client import INTERRUPTED, interrupted, resend
from core.runtime.beat_history import BeatHistory
from core.runtime.click_secrets import traced, unsaid
from core.runtime.clicked import Clicked
from core.runtime.deciding import clicked_decision, known_undo, planned_undo
from core.runtime.events import Event, FromPeople, OutcomeEvent
from core.runtime.held import Held
from core.runtime.made_here import MadeHere
from core.runtime.on_save import (
    Ahead,
    AheadLater,
    CommitOnSave,
    commit_on_save,
    foreseen,
    made_before,
    revert_on_save,
)
from core.runtime.outcome_notes import note_under
from core.runtime.queries import Queries
from core.runtime.results import classified, replied
from core.runtime.sessions import SessionStore
from core.runtime.stream_appends import StreamAppend
from core.runtime.team_weights import TeamStore
from core.runtime.trace_events import TraceEvents
from core.runtime.transcripts import Transcripts
from core.state.commit_call import unsaved
from core.state.limits import CommitUnconfirmed
from core.state.scripts import ScriptCall

__all__ = ["Runtime"]


T = TypeVar("T")


class Runtime:
    def __init__(
        self,
        loop: Loop,
        sessions: SessionStore,
        gateway: MutationGateway,
        classifier: Classifier,
        responder: Answering,
        transcripts: Transcripts,
        beat_history: BeatHistory,
        trace: TraceEvents,
    ) -> None:
        self.loop = loop
        self.sessions = sessions
        self.gateway = gateway
        self.classifier = classifier
        self.responder = responder
        self.transcripts = transcripts
        self.beat_history = beat_history
        self.trace = trace
        self.meter = Meter.of(gateway.store.redis, gateway.store.workspace)
        self.team = TeamStore(gateway.store.redis, gateway.store.workspace)
        self.queries = Queries(sessions, gateway)  # what adapters may ask (the narrow door)
        self.made = MadeHere()  # the commits its clicks made, as heard

    def send(self, session_id: str, msg: FromPeople) -> list[Event]:
        """Handle one message from an adapter and everything it leads to. Adapters say what
        people said, clicked and asked of the session (its topic, a look at it); what
        commands came to only the runtime reports."""
        if not isinstance(msg, UserSaid | ActionClicked | TopicSet | ShowRequested):
            raise TypeError(f"adapters send what people did, not {type(msg).__name__}")
        if isinstance(msg, UserSaid):
            self.meter.count(TURNS)
        if isinstance(msg, ActionClicked):
            msg = unsaid(self.gateway, msg)
        events: list[Event] = []
        queue: deque[Msg] = deque([msg])
        held = Held()
        sent = held.commits
        with self.trace.held() as held.rows:  # (a model call's audit: saved with what follows)
            try:
                if isinstance(msg, ActionClicked):
                    self._look_early(session_id, msg, held)
                while queue or held.pending is not None:
                    if not queue:  # (the send's last save, heard before the send answers)
                        if not held.settled(self._patiently):
                            held.rewind(events, queue)
                        continue
                    cmds = self._update(session_id, queue.popleft(), held, len(events), not queue)
                    if cmds is None:  # what it followed from is updated again first
                        held.rewind(events, queue)
                        continue
                    for cmd in cmds:
                        follow = self._run(session_id, cmd, events, held)
                        if follow is not None:
                            queue.append(follow)
            except BaseException as error:
                self._unheld(session_id, held)
                if not sent or not isinstance(error, INTERRUPTED) or not interrupted(error):
                    raise
                what, mutation_id = sent[-1]
                raise CommitUnconfirmed(what, mutation_id, self._budget, error) from error
            finally:  # (a lookup sent early that no update read: its connection serves on)
                self._looked_early(list(held.early), held)
        return events

    def click(self, session_id: str, click: ActionClicked) -> Clicked:
        """``click`` sent, and what it came to, typed for adapters to render."""
        return Clicked.of(self.send(session_id, click))

    def _unheld(self, session_id: str, held: Held) -> None:
        """The trace rows no save took (the send stopped first: a model call's audit, a
        message whose update failed), written if Redis answers at once (the send's error
        is what the caller hears); with the change of a message that waited for a reading
        or an answer that failed, or whose save was sent and found that someone saved
        first (the words said stay on record, on whatever Redis holds by then)."""
        rows, held.rows[:] = [*held.always, *held.rows], []
        held.always = []
        with contextlib.suppress(*INTERRUPTED, StoreError, RedisError):
            # (heard once, not waited for again; what it saved waits again on what it found)
            if not held.settled(lambda again: again()):
                assert held.saved is not None
                held.waiting, held.rewound, held.cut = held.rewound, [], None
                held.session, held.along = self._replayed(session_id, held.saved, held.waiting)
            if held.waiting and held.saved is not None and held.session is not None:
                self._save_waiting(session_id, held, rows)
                return
            for row in rows:
                row.send(self.trace.redis)

    def _save_waiting(
        self, session_id: str, held: Held, rows: list[StreamAppend], attempts: int = 5
    ) -> None:
        """Save the messages that waited for a reading or an answer that never came
        (``rows``: the trace rows, written whatever the save finds), on what Redis holds:
        when someone saved meanwhile, the first is updated again on that (not read again:
        a reading that waited was made in the context before theirs)."""
        read, session, along = held.saved, held.session, held.along
        assert read is not None and session is not None
        for _ in range(attempts):
            token = os.urandom(16).hex()
            stored = self.sessions.store(read, session, token, [*rows, *along], len(rows))
            if stored.saved:
                return
            rows, read = [], stored.session
            session, along = self._replayed(session_id, read, held.waiting[:1])

    def _replayed(
        self, session_id: str, read: Session, msgs: list[Msg]
    ) -> tuple[Session, list[StreamAppend]]:
        """``read`` updated with ``msgs``, and the rows their updates ask to save with it."""
        session, along = read, list[StreamAppend]()
        for msg in msgs:
            session, cmds = self.loop.update(session, msg)
            along += self._rows(session_id, cmds)[0]
        return session, along

    @property
    def _budget(self) -> float:
        return self.gateway.store.durability.retry_sec

    def _patiently(self, call: Callable[[], T]) -> T:
        return resend(call, self.gateway.store.redis, self._budget)

    def _update(
        self,
        session_id: str,
        msg: Msg,
        held: Held,
        shown: int = 0,
        alone: bool = True,
        attempts: int = 50,
    ) -> list[Cmd] | None:
        """Update the session with ``msg`` and save it with the rows the update asked for and
        the message's trace row: one round trip (two when the session is read first). The
        session saved by the previous message of this send is updated without being read
        again: its save checks that nobody saved meanwhile, and if someone did, it answers
        with their session, which is updated again. A message whose only command is a reading
        or an answer made in this process (``alone``: nothing else queued) waits for the
        next save; None: that save found the session moved, and the first message that
        waited is ``held.rewound``, to be updated again (``msg`` and the others that waited
        followed from it: they come again).
        A save not waited for (``held.pending``, ``_answers_at_once``) is heard of here; None
        also says it found the session moved (``msg`` came of it). ``shown``: the events."""
        # (the trace keeps every message, also when the save must wait)
        held.always += held.rows
        held.rows[:] = []
        if id(msg) not in held.traced:
            held.traced[id(msg)] = msg
            traced_as = traced(self.gateway, msg)
            held.always.append(
                self.trace.encoded_row(msg.correlation_id, session_id, msg.kind, traced_as)
            )
        if held.session is None:
            held.session = held.saved = self._loaded(session_id, held)
        session = held.session
        for _ in range(attempts):
            changed, cmds = self.loop.update(session, msg)
            rows, rest = self._rows(session_id, cmds)
            if alone and held.may_wait and self._made_here(rest) and held.saved is not None:
                held.waiting.append(msg)
                held.along += rows
                held.session = changed
                return rest
            along = [*held.along, *rows]
            if not held.always and not along and changed == held.saved:
                if not held.settled(self._patiently):  # (msg came of what that saved: dropped)
                    return None
                held.session = changed  # (as fresh as a read: what the last save found)
                return rest
            # a save whose answer was lost is sent again with its token and answered as its
            # first run was (unless someone saved in between: then, as for any save whose
            # session moved meanwhile, nothing but the trace row is written, and the session
            # found, with this message's change in it, is updated again: a click is known by
            # its id; a chat turn may be remembered twice); an Undo's lookup goes with it,
            # unless it was sent as the click came (``_look_early``): then its revert does
            undos = [c.click.target_id for c in rest if isinstance(c, RevertCommit)]
            looked = self._looked_early(undos, held)
            adapt = self.loop.settings.adapt
            if not undos:
                on_save = commit_on_save(self.gateway, rest, adapt, held.on_save)
            else:  # (its revert, checked as it came, or on its lookup: made on the save)
                on_save = revert_on_save(self.gateway, rest, looked, held.known)
            later_undos = [] if on_save else [m for m in undos if m not in looked]
            lookups = [undo_lookup(self.gateway.store, m) for m in later_undos]
            held.looked_up = looked if on_save is None else {}
            assert held.saved is not None  # (read with the session)
            # (a uuid4's hex costs twenty times as much as that token)
            token = os.urandom(16).hex()
            save = (held.saved, changed, token, [*held.always, *along])
            later, told = None, False
            if on_save is not None:  # (a click's commit, made on its save: on_save.py)
                key = self.sessions.keys.session(session_id)
                until = None if on_save.planned is None else on_save.planned.deadline
                commit = self.gateway.commit_on(on_save.verdict, key, token, until)
                lookups = [commit]
                # (and the save of what it comes to, when that is known: made on the commit,
                # while the save and the commit are on their way)
                if on_save.planned or rest == [on_save.cmd]:  # (nothing else: it can follow)
                    click, verdict = on_save.cmd.click, on_save.verdict
                    first = partial(self.sessions.saved_as, held.saved, changed)
                    ahead_of = (session_id, first, token, click, verdict, commit)
                    later = AheadLater(partial(self._ahead, *ahead_of))
            if not lookups and alone and held.may_wait and self._answers_at_once(rest):
                # (made ready while the save before it, if any, is on its way)
                after = None if held.pending is None else held.pending.saving.token
                saving = self.sessions.prepare(*save, len(held.always), after)
                if not held.settled(self._patiently):
                    return None
                if held.sent(msg, shown, saving):
                    return rest
            elif not held.settled(self._patiently):
                return None
            store = partial(self.sessions.store_along, *save, len(held.always), lookups, later)
            if on_save is None:
                stored, looked_up = self._patiently(store)
                held.looked_up.update(zip(later_undos, looked_up, strict=True))
            else:  # (sent: unconfirmed until heard)
                made = on_save.cmd.mutation
                what = made.key if on_save.planned is None else f"revert of {made.causation_id}"
                held.commits.append((what, made.id))
                stored, [reply, *answers] = self._patiently(store)
                # heard when its save landed, and when it was made by an attempt before (its
                # answer lost) though this one's save was beaten: the click, updated again
                # on what was found, is told what it came to, not asked to commit again
                if stored.saved or not unsaved(reply):
                    on_save.heard(reply)
                    held.on_save[on_save.cmd.mutation.id] = on_save
                else:  # not made: its save did not land
                    held.commits.pop()
                ahead = None if later is None else later.ahead
                if ahead is not None and stored.saved:
                    landed = ahead.saving.landed(answers[0])
                    told = landed is not None
                    stored = stored if landed is None else landed
                elif ahead is not None:  # (its save, and the click's, beaten: made before?)
                    told = made_before(reply, ahead, stored.session, on_save.cmd.click.click_id)
                if told:  # what it came to is saved: told, not updated again
                    on_save.ahead = ahead
            held.always, held.along = [], []
            held.session = held.saved = session = stored.session
            if stored.saved or told:
                held.waiting = []
                return rest
            if held.waiting:
                held.rewound, held.waiting, held.may_wait = held.waiting[:1], [], False
                return None
        raise StoreError(f"session {session_id} kept changing during {attempts} attempts")

    def _look_early(self, session_id: str, click: ActionClicked, held: Held) -> None:
        """An Undo's revert checked as the click comes, when the session this process keeps
        lists what it undoes: on the change as this process committed it (``made``:
        nothing asked), else on its lookup (``undo_lookup``: read-only) sent now, its
        answer read once the click is updated (``_looked_early``): no wait of its own. The
        revert's commit goes with the click's save (``revert_on_save``). A lookup cut off
        goes with the save instead, as before."""
        if click.action != ActionType.REVERT_MUTATION:
            return
        known = self.sessions.known(session_id)
        if known is None or click.target_id not in known.interaction.undoable:
            return
        made = self.made.record(click.target_id)
        planned = None if made is None else known_undo(self.gateway, click, made)
        if planned is not None:
            held.known[click.target_id] = planned
            return
        lookup = undo_lookup(self.gateway.store, click.target_id)
        with contextlib.suppress(*INTERRUPTED, RedisError):
            held.early[click.target_id] = lookup.send()

    def _looked_early(self, undos: list[str], held: Held) -> dict[str, Any]:
        """What the lookups sent early (``_look_early``) for ``undos`` found, by mutation id
        (one cut off on its way, left out: it goes with the save)."""
        looked: dict[str, Any] = {}
        for mutation_id in undos:
            early = held.early.pop(mutation_id, None)
            if early is not None:
                with contextlib.suppress(*INTERRUPTED, RedisError):
                    looked[mutation_id] = early.reply()
        return looked

    def _ahead(
        self,
        session_id: str,
        first: Session | Callable[[], Session],
        token: str,
        click: ActionClicked,
        verdict: Verdict,
        commit: ScriptCall,
    ) -> Ahead | None:
        """The save of what ``click``'s commit (``verdict``'s, ``commit``) comes to, made on
        ``first`` (the click's save, ``token``; or what makes it, asked only once the commit
        is foreseen) before the commit is (``foreseen``), for
        when what comes of it asks only for views and a lesson. None: it is updated and
        saved once the commit is heard of."""
        seen = foreseen(self.gateway, verdict, commit)
        if seen is None:
            return None
        note, made = seen
        first = first if isinstance(first, Session) else first()
        done = ActionDone(correlation_id=click.correlation_id, click=click, result=note)
        after, cmds = self.loop.update(first, done)
        rows, later = self._rows(session_id, cmds)
        if not all(isinstance(c, Show | Teach) for c in later):
            return None
        traced_as = traced(self.gateway, done)
        row = self.trace.encoded_row(done.correlation_id, session_id, done.kind, traced_as)
        ahead_token = os.urandom(16).hex()
        saving = self.sessions.prepare(first, after, ahead_token, [row, *rows], 0, token, made)
        return Ahead(note, later, saving)

    def _answers_at_once(self, cmds: list[Cmd]) -> bool:
        """Whether ``cmds`` ask for nothing but views (a save before them may be heard of
        later: nothing in them acts beyond the session; an answer made in this process
        waits for the save after it instead, ``_made_here``)."""
        return all(isinstance(c, Show) for c in cmds)

    def _made_here(self, cmds: list[Cmd]) -> bool:
        """Whether ``cmds`` is one call answered in this process: a reading by such a
        classifier, or an answer by such a responder."""
        if len(cmds) != 1:
            return False
        cmd = cmds[0]
        if isinstance(cmd, Classify):
            return self.classifier.in_process
        return isinstance(cmd, Generate) and self.responder.in_process

    def _loaded(self, session_id: str, held: Held) -> Session:
        """The session as this process keeps it, or read (the workspace's own weights with
        it when clicks teach them, and this process keeps none read in the last second)."""
        known = self.sessions.known(session_id)
        if not self.loop.settings.adapt:
            if known is not None:
                return known
            return self._patiently(partial(self.sessions.read_kept, session_id))
        fresh, team = self.team.kept()
        if known is not None and fresh:
            held.team = team
            return known
        session, held.team = self._patiently(partial(self.team.along, self.sessions, session_id))
        return session

    def _rows(self, session_id: str, cmds: list[Cmd]) -> tuple[list[StreamAppend], list[Cmd]]:
        """The transcript lines and beat evaluations ``cmds`` ask for before any effect
        (classify, generate, a commit), as rows to save with the session; the rest of
        ``cmds``, to run after the save (a write asked for after an effect stays after it)."""
        rows: list[StreamAppend] = []
        rest: list[Cmd] = []
        effect = False  # a command before this one acts beyond the session
        for cmd in cmds:
            if not effect and isinstance(cmd, Record):
                said = (cmd.speaker, cmd.text, cmd.correlation_id)
                rows.append(self.transcripts.line(session_id, *said))
            elif not effect and isinstance(cmd, LogEvaluation):
                rows.append(self.beat_history.row(session_id, cmd.correlation_id, cmd.result))
            else:
                effect = effect or not isinstance(cmd, Show)
                rest.append(cmd)
        return rows, rest

    def _run(self, session_id: str, cmd: Cmd, events: list[Event], held: Held) -> Msg | None:
        sent = held.commits
        if isinstance(cmd, Show):
            events.append(cmd.view)
            return None
        # (what acts beyond the session runs on a save heard of: ``_update`` sees to it)
        assert held.pending is None or isinstance(cmd, Classify | Generate)
        if isinstance(cmd, Generate):
            answer = self.responder.answer(cmd.turn, cmd.correlation_id, cmd.asker)
            return replied(cmd, answer)
        if isinstance(cmd, Record):
            record = (session_id, cmd.speaker, cmd.text, cmd.correlation_id)
            self._patiently(partial(self.transcripts.append, *record))
        elif isinstance(cmd, Classify):
            return self._classify(cmd, held.team)
        elif isinstance(cmd, Teach) and self.loop.settings.adapt:  # a click's lesson
            taught = self._patiently(partial(self.team.teach, cmd, session_id, self.trace))
            held.team = taught or held.team
        elif isinstance(cmd, Commit):
            on_save = held.on_save.pop(cmd.mutation.id, None)
            return self._committed(session_id, cmd, on_save, events, held)
        elif isinstance(cmd, ResolveProposal):
            # an agent's proposal has its mutation's id
            sent.append((f"proposal {cmd.click.target_id}", cmd.click.target_id))
            return self._done(session_id, cmd.click, clicked_decision(self.gateway, cmd), events)
        elif isinstance(cmd, RevertCommit):
            on_save = held.on_save.pop(revert_id(cmd.click.target_id), None)
            if on_save is not None and on_save.ran:  # (made on its save: ``revert_on_save``)
                return self._committed(session_id, on_save.cmd, on_save, events, held)
            # (else, not made there, checked by what is asked now, not by what it was
            # checked on: a revert checked as it came leaves its time to its commit)
            sent.append((f"revert of {cmd.click.target_id}", revert_id(cmd.click.target_id)))
            looked_up = held.looked_up.pop(cmd.click.target_id, None)
            planned = planned_undo(self.gateway, cmd.click, looked_up)
            if isinstance(planned, OutcomeNote):  # refused
                return self._done(session_id, cmd.click, planned, events)
            return self._reverted(session_id, cmd.click, planned, events, held)
        elif isinstance(cmd, LogEvaluation):
            evaluated = (session_id, cmd.correlation_id, cmd.result)
            self._patiently(partial(self.beat_history.append, *evaluated))
        return None

    def _committed(
        self,
        session_id: str,
        cmd: Commit,
        on_save: CommitOnSave | None,
        events: list[Event],
        held: Held,
    ) -> ActionDone | None:
        """What ``cmd``'s commit came to, made on its click's save (``on_save``: heard with
        it; None, or not made there: proposed now), told; None when what it came to was saved
        already (``_foreseen``), else the ``ActionDone`` to update the session with."""
        outcome = None if on_save is None else on_save.outcome(self.gateway)
        if outcome is None:
            held.commits.append((cmd.mutation.key, cmd.mutation.id))
            outcome = self.gateway.propose(cmd.mutation)
        if not self.gateway.policy.is_secret(cmd.mutation.key):  # (no value kept of those)
            self.made.heard(outcome)  # (an Undo of it asks nothing first)
        if on_save is None or on_save.ahead is None:
            note = note_under(self.gateway.policy, outcome)
            return self._done(session_id, cmd.click, note, events)
        ahead, on_save.ahead = on_save.ahead, None
        self._foreseen(session_id, cmd.click, outcome, ahead, events, held)
        return None

    def _reverted(
        self,
        session_id: str,
        click: ActionClicked,
        planned: Planned,
        events: list[Event],
        held: Held,
    ) -> ActionDone | None:
        """An Undo's revert, checked (``planned``), committed on the save the click's update
        made (``held.saved``: its token among the session's last saves'), and with it, in
        the same round trip, the save of what it comes to, foreseen as a click's commit's
        is (``_ahead``); told as one made on its save is (``_committed``)."""
        verdict = self.gateway.ready(planned.mutation)
        saved = held.saved
        token = "" if saved is None or held.session is not saved else self.sessions.token_of(saved)
        if verdict is not None and saved is not None and token:
            key = self.sessions.keys.session(session_id)
            commit = self.gateway.commit_on(verdict, key, token)
            # (what it comes to made and saved behind it while it is on its way)
            ahead_of = (session_id, saved, token, click, verdict, commit)
            later = AheadLater(partial(self._ahead, *ahead_of))
            reply, *answers = self._patiently(partial(self.sessions.together, [commit], later))
            on_save = CommitOnSave(Commit(planned.mutation, click), verdict, planned=planned)
            on_save.heard(reply)
            if on_save.ran:  # (else its save's token is no longer among the last saves')
                landed = None if later.ahead is None else later.ahead.saving.landed(answers[0])
                if landed is not None:  # (what it came to saved already: told from it)
                    held.session = held.saved = landed.session
                    on_save.ahead = later.ahead
                return self._committed(session_id, on_save.cmd, on_save, events, held)
        outcome = planned.told(self.gateway.propose(planned.mutation))  # (alone, as before)
        return self._done(session_id, click, note_under(self.gateway.policy, outcome), events)

    def _foreseen(
        self,
        session_id: str,
        click: ActionClicked,
        outcome: Outcome,
        ahead: Ahead,
        events: list[Event],
        held: Held,
    ) -> None:
        """What ``click``'s commit came to (``outcome``), saved already as foreseen
        (``ahead``: its save was made only on the commit made by this request at the
        version foreseen, which is all its note reads of it): told, and the views and the
        lesson that came of it run (they ask for no update)."""
        ahead.heard(outcome)
        self._told(session_id, click, ahead.note, events)
        for later in ahead.cmds:
            self._run(session_id, later, events, held)

    def _classify(self, cmd: Classify, team: TeamWeights | None) -> Classified:
        turn, source = self.classifier.with_team(team).interpret(
            cmd.text, cmd.topic, cmd.correlation_id, context=cmd.context
        )
        self.meter.count(CLASSIFIED, turn.act_type.value, source)
        return classified(cmd, turn, source, self.loop.settings)

    def _done(
        self, session_id: str, click: ActionClicked, note: OutcomeNote, events: list[Event]
    ) -> ActionDone:
        self._told(session_id, click, note, events)
        return ActionDone(correlation_id=click.correlation_id, click=click, result=note)

    def _told(
        self, session_id: str, click: ActionClicked, note: OutcomeNote, events: list[Event]
    ) -> None:
        """What ``click`` came to, among the ``events`` adapters get."""
        events.append(
            OutcomeEvent(
                session_id=session_id,
                correlation_id=click.correlation_id,
                action=click.action,
                actor=str(click.actor),
                **note.model_dump(),
            )
        )
