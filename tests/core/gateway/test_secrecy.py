"""A secret key's value, masked where it is written: the refusals the gateway gives and
keeps (a stale Apply, a schema's message that quotes the value, an edit it cannot take), a
proposal once nothing can apply it, the note under a conflict; and ``Redactor``, which
strikes known values out of derived text."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from redis import Redis

from bot.app import App, build_app
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.gateway.edits import Edit
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import SECRET, Pending, ProposalStatus
from core.gateway.value_schema import ValueSchema, ValueType
from core.llm.chat import ChatModel
from core.redaction import MIN_INSIDE, Redactor
from core.runtime.outcome_notes import discard_note, note_under
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.bot.secret_paths import RULES, VAULT
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.rules.rig import config_text

AL = actor("user:al")
MIA, ZED = actor("moderator:mia"), actor("moderator:zed")
AGENT = actor("agent:assistant")
OLD, NEW = "hunter2-the-old-one", "correct-horse-battery"


@pytest.fixture
def vault(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    path = write_config(tmp_path, config_text(RULES, keys=VAULT))
    return build_app(workspace, path, client=server_redis)


def proposed(app: App, key: str = "vault.token", value: str = OLD) -> str:
    outcome = app.gateway.propose(mutation("set", key, value, AGENT, reason="rotate"))
    assert isinstance(outcome, Pending), outcome
    return outcome.proposal.id


def kept(app: App) -> str:
    """Everything the decision log holds."""
    return json.dumps(app.gateway.decisions.recent(1000))


def test_a_stale_apply_is_refused_without_reading_out_the_new_value(vault: App) -> None:
    """As reproduced: a member posts Apply with the revision before an edit; the refusal
    read "it now reads set vault.token = <value>". A member is now refused for their roles
    (nothing about the proposal's value); a moderator is told it changed, masked."""
    pid = proposed(vault)
    edited = vault.gateway.apply_proposal(pid, MIA, edit=Edit(NEW), revision=0)
    assert isinstance(edited, Pending)  # (a quorum of two: Mia's edit counts as one)
    member = vault.gateway.apply_proposal(pid, AL, revision=0)
    assert isinstance(member, Rejected) and member.reason is RejectReason.FORBIDDEN
    moderator = vault.gateway.apply_proposal(pid, ZED, revision=0)
    assert isinstance(moderator, Rejected) and moderator.reason is RejectReason.CONFLICT
    assert f"it now reads set vault.token = {SECRET}" in moderator.message
    for said in (member.message, moderator.message, kept(vault)):
        assert NEW not in said and OLD not in said
    assert vault.store.get("vault.token") is None  # and nothing changed


def test_a_refusal_of_a_secret_value_quotes_neither_it_nor_the_allowed_ones(vault: App) -> None:
    """The schema's refusal said "must be one of 'red', 'blue'; got '...'": the value, and,
    once masking struck a secret "red" out of the list, which one the key held."""
    refused = vault.gateway.propose(mutation("set", "vault.choice", NEW, "admin:root"))
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.SCHEMA
    assert refused.message == "vault.choice: must be one of the 2 values the policy allows"
    assert NEW not in refused.message and NEW not in kept(vault)
    schema = ValueSchema(type=ValueType.STRING, enum=["red", "blue"])
    assert schema.check(NEW) == f'must be one of "red", "blue"; got "{NEW}"'  # not secret


def test_a_conflict_on_a_secret_key_says_what_is_there_masked(vault: App) -> None:
    vault.gateway.propose(mutation("set", "vault.token", OLD, "admin:root"))
    late = vault.gateway.propose(
        mutation("set", "vault.token", NEW, "admin:root", expected_version=0)
    )
    assert isinstance(late, Rejected) and late.reason is RejectReason.CONFLICT
    note = note_under(vault.policy, late)
    assert SECRET in note.message and OLD not in note.message and NEW not in note.message


def test_a_proposal_keeps_its_value_while_it_waits_and_not_once_it_is_settled(
    vault: App,
) -> None:
    gateway = vault.gateway
    waiting = proposed(vault, "vault.a", OLD)
    assert gateway.proposals.get(waiting).mutation.value == OLD  # type: ignore[union-attr]
    for_applying = proposed(vault, "vault.b", OLD)
    gateway.apply_proposal(for_applying, MIA, edit=Edit(NEW), revision=0)
    applied = gateway.apply_proposal(for_applying, ZED, revision=1)
    assert isinstance(applied, Committed) and vault.store.get("vault.b").value == NEW  # type: ignore[union-attr]
    for_dropping = proposed(vault, "vault.c", OLD)
    gateway.discard_proposal(for_dropping, MIA, "not now")
    hurried = MutationGateway(vault.store, vault.policy, proposal_expiry_ms=0)
    for_expiring = proposed(vault, "vault.d", OLD)
    lapsing = hurried.propose(mutation("set", "vault.e", OLD, AGENT))
    assert isinstance(lapsing, Pending) and hurried.expire_due() == 1
    for pid in (for_applying, for_dropping, lapsing.proposal.id):
        settled = gateway.proposals.get(pid)
        assert settled is not None and settled.status is not ProposalStatus.PENDING
        text = settled.model_dump_json()
        assert OLD not in text and NEW not in text, text
    again = gateway.apply_proposal(for_applying, MIA, revision=1)  # a late click: its first result
    assert isinstance(again, Committed) and again.duplicate
    assert gateway.proposals.get(for_expiring).mutation.value == OLD  # type: ignore[union-attr]


def test_a_discard_reason_quoting_the_secret_value_keeps_it_masked(vault: App) -> None:
    """Mia discards a secret proposal saying why in words that quote its value (as a careless
    person does): the reason is kept, logged, told and handed to the model as a rejected
    idea, so the value is struck out of it before it is kept."""
    pid = proposed(vault)
    discarded = vault.gateway.discard_proposal(pid, MIA, f"no: {OLD} is the one that leaked")
    assert discarded.status is ProposalStatus.DISCARDED
    assert discarded.reason == f"no: {SECRET} is the one that leaked"
    stored = vault.gateway.proposals.get(pid)
    assert stored is not None and stored.reason == discarded.reason
    assert OLD not in kept(vault)
    note = discard_note(discarded, MIA, secret=True)
    assert OLD not in note.message and "(no: (secret) is the one that leaked)" in note.message


def test_a_clicks_reason_quoting_the_secret_value_is_neither_traced_nor_told_the_model(
    vault: App, openai_server: OpenAIServer
) -> None:
    """The same reason typed in chat, on the model's proposal: with a break-glass Apply (Mia
    holds no break-glass role: refused) and with Discard. Each click is traced, and the
    discard's reason becomes a rejected idea the model reads next turn: neither keeps it."""
    openai_server.answer_with = proposing("vault.token", OLD)
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    runtime = vault.runtime(ChatModel(client, "m"))
    shown = runtime.send("s1", UserSaid(text="rotate the stream token", actor=AL))
    [apply] = [
        b for e in shown if isinstance(e, View) for b in e.buttons if b.action == "ApplyProposal"
    ]
    said = f"no: {OLD} is the one that leaked"
    for n, (action, field) in enumerate(
        (("ApplyProposal", "break_glass"), ("DiscardProposal", "note"))
    ):
        click = ActionClicked(
            action=action,
            target_id=apply.target_id,
            expected_version=apply.target_version,
            click_id=f"c-{n}",
            actor=MIA,
        )
        runtime.send("s1", click.model_copy(update={field: said}))
    assert vault.gateway.proposals.get(apply.target_id).status is ProposalStatus.DISCARDED  # type: ignore[union-attr]
    traced = json.dumps([fields for _, fields in vault.redis.xrange(vault.store.keys.trace)])
    assert traced.count("is the one that leaked") >= 2 and OLD not in traced
    ideas = runtime.sessions.load("s1").working.rejected_ideas
    assert len(ideas) == 1 and OLD not in ideas[0]
    assert "(rejected: no: (secret) is the one that leaked)" in ideas[0]


def test_an_edit_of_a_secret_proposal_it_cannot_take_is_refused_without_it(vault: App) -> None:
    pid = proposed(vault)
    refused = vault.gateway.apply_proposal(pid, MIA, edit=Edit({"not": [NEW]}), revision=0)
    assert isinstance(refused, Rejected)
    assert NEW not in refused.message and NEW not in kept(vault)


TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@given(secret=st.text(st.characters(codec="utf-8"), min_size=MIN_INSIDE), a=TEXT, b=TEXT)
@example(secret="F000", a="\\", b="")  # (CI found it: "\F" read as "\f", a blank's escape)
@example(secret="Nora", a="x\\", b="")
@example(secret="000\\", a="", b="n")  # (found: the value's "\\" and the "n" read as "\\n")
def test_a_long_secret_is_struck_out_wherever_it_stands(secret: str, a: str, b: str) -> None:
    assume(secret.strip() and secret not in SECRET)
    redactor = Redactor([secret])
    out = redactor.text(a + secret + b)
    assert secret not in out and SECRET in out
    assert not [
        t for t in strings(redactor.json({"x": [a + secret + b, {secret: 1}]})) if secret in t
    ]


def strings(value: object) -> list[str]:
    """Every string in JSON data, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*strings(k), *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@given(
    number=st.integers(min_value=-999, max_value=9999),
    word=st.text("abcxyz", min_size=1, max_size=3),
)
def test_a_short_secret_is_struck_out_only_as_a_word_of_its_own(number: int, word: str) -> None:
    secret = str(number)
    assume(len(secret) < MIN_INSIDE)
    redactor = Redactor([secret])
    assert redactor.text(f"it is {secret}.") == f"it is {SECRET}."
    assert redactor.text(f"v{secret}{word}") == f"v{secret}{word}"  # inside a word: kept
    assert redactor.json(number) == SECRET and redactor.json(number + 1) == number + 1


@pytest.mark.parametrize("secret", ["pässwörd-123", 'hun"ter2-xyz', "line1\nline2", "a<b>&c-9"])
def test_what_a_step_sent_finds_its_secret_in_every_form_and_masks_the_echo(secret: str) -> None:
    """``within`` kept the escaped forms it found and lost the secret itself: an echo of a
    secret with a quote, a newline or a letter outside ASCII stayed unmasked."""
    sent = json.dumps({"message": f"rotated to {secret}"}, ensure_ascii=False)
    found = Redactor([secret, "never-sent-zzz"]).within(sent)
    assert found.values == [secret]
    assert found.text(f"echo: {secret}") == f"echo: {SECRET}"
    quoted = found.text(json.dumps(secret))  # as a JSON string quotes it, escapes and all
    assert SECRET in quoted and secret not in quoted
