"""The Inbox: a workspace's pending proposals, each with what it would do, who asked, its
deadlines (until when it may be applied, when it escalates or was escalated, how long a
change for a while lasts: ``bot.proposals.deadlines``), its approvals so far against its
quorum, and whom it waits for; and the ones resolved lately, with theirs (when it expired,
when its change reverts or reverted). Apply (an approval: it commits at the proposal's
quorum), Edit (then apply), Reject (with a reason) and Break glass (with a reason, offered to
whoever holds the key's break-glass role) are decided as a chat click is
(``core.runtime.deciding``): the same roles, four eyes, quorum, schema and break-glass
policy; a refusal is flashed with why ("Not done: …"), an approval short of the quorum with
whom it still awaits; a second click of the same person is answered from what the first did.
Apply, Edit and Break glass name the revision of the proposal the page showed (an edit made
since refuses them); a form that names none is answered 400, nothing changed. The person
acts as who they are in chat (the session's actor for this workspace); the operator token
acts nowhere. Each answer is flashed on the page it returns to (303: a reload does not submit
again)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for

from bot.app import App
from bot.proposals.deadlines import deadlines_of
from bot.reports.explain import awaiting
from bot.web.context import acting_as, person, workspace_app
from core.deliberation.sentences import not_done
from core.errors import DeliberateError
from core.gateway.break_glass import may_break_glass
from core.gateway.edits import edited_value, value_text
from core.gateway.mutation_gateway import UnknownProposal
from core.gateway.outcome import Proposal, ProposalStatus
from core.redaction import readable
from core.runtime.deciding import Decision, Verb, decide
from core.state.actor import Actor
from core.state.limits import Unacknowledged
from core.state.scripts import server_ms

__all__ = ["LISTED", "NO_REASON", "NO_REVISION", "RESOLVED_SHOWN", "blueprint"]

RESOLVED_SHOWN = 20
LISTED = 1000  # pending proposals read for one page (the soonest due)
blueprint = Blueprint("inbox", __name__)
VERBS = ("apply", "edit", "reject", "breakglass")
NO_REVISION = (
    "This form names no revision of the proposal (the value the page showed), so it approves "
    "nothing. Nothing was changed; reload the page and try again."
)
NO_REASON = {
    "reject": "Say why it is rejected: the reason goes to the log and to the model. "
    "Nothing was changed.",
    "breakglass": "Breaking the glass needs a reason: it goes to the log, the announcement "
    "and the review list. Nothing was changed.",
}


@blueprint.get("/w/<workspace>")
@blueprint.get("/w/<workspace>/")
def home(workspace: str) -> Any:
    """A workspace's own address opens its Inbox (once the person may see it: else 404)."""
    workspace_app(workspace)
    return redirect(url_for("inbox.page", workspace=workspace))


@blueprint.get("/w/<workspace>/inbox")
def page(workspace: str) -> str:
    app = workspace_app(workspace)
    box = app.gateway.proposals
    now = server_ms(app.redis, app.store.keys.versions)
    pending = box.listed(limit=LISTED)  # (only those shown are read)
    resolved = box.resolved(RESOLVED_SHOWN)
    resolved.sort(key=lambda p: p.resolved_at or p.created_at, reverse=True)
    actor = person().actor_in(workspace)
    return render_template(
        "inbox.html",
        pending=[_card(app, p, now, actor) for p in pending],
        resolved=[_card(app, p, now, actor) for p in resolved[:RESOLVED_SHOWN]],
        actor=actor,
        now=now,
    )


def _card(app: App, proposal: Proposal, now: int, actor: Actor | None) -> dict[str, Any]:
    """What the page shows of ``proposal``; Reject only to whoever may discard it (the
    right to apply it: ``Policy.refuse_deciding``), else why not; Break glass only to whoever
    holds the key's break-glass role."""
    policy, key = app.policy, proposal.mutation.key
    secret = policy.is_secret(key)
    pending = proposal.status is ProposalStatus.PENDING
    deadlines = deadlines_of(app, proposal, now)
    expired = proposal.status is ProposalStatus.EXPIRED
    refused = None if actor is None else policy.refuse_deciding(actor, key)
    return {
        "no_reject": "" if refused is None else refused[1],
        "break_glass": pending and actor is not None and may_break_glass(policy, actor, key),
        "broke_glass": proposal.status is ProposalStatus.APPLIED and bool(proposal.break_glass),
        "p": proposal,
        "secret": secret,
        "deadlines": deadlines.named(expired=expired),
        "awaits": awaiting(policy, proposal).text() if pending else "",
        "edit_text": "" if secret else value_text(proposal.current_value),
        "editable": proposal.mutation.op.value != "delete",
    }


@blueprint.post("/w/<workspace>/inbox/<proposal_id>/<verb>")
def act(workspace: str, proposal_id: str, verb: str) -> Any:
    if verb not in VERBS:
        abort(404)
    actor = acting_as(workspace)
    app = workspace_app(workspace)
    back = redirect(url_for("inbox.page", workspace=workspace), 303)
    # (a discard approves no value: its form names no revision)
    revision = None if verb == "reject" else _revision(request.form.get("revision", ""))
    # as typed: the gateway strikes a secret out of it before it joins its lines or cuts it
    reason = request.form.get("reason", "")
    if verb in NO_REASON and not readable(reason):  # (nothing that shows is no reason)
        flash(NO_REASON[verb], "error")
        return back
    try:
        decision = _decision(app, proposal_id, actor, verb, revision, reason)
        if isinstance(decision, str):
            flash(decision, "error")
            return back
        note = decide(app.gateway, decision)  # as a chat click is decided
    except UnknownProposal as exc:
        flash(f"{exc}; nothing was changed", "error")
        return back
    except Unacknowledged as exc:  # applied once or not at all: the log will tell
        flash(f"{exc}", "error")
        return back
    except DeliberateError as exc:  # (a proposal the store cannot read, say)
        flash(not_done(str(exc)), "error")
        return back
    refused = note.outcome == "rejected"
    flash(not_done(note.message) if refused else note.message, "error" if refused else "ok")
    return back


def _decision(
    app: App, proposal_id: str, actor: Actor, verb: str, revision: int | None, reason: str
) -> Decision | str:
    """What the form decides (with ``verb`` edit: an approval of the typed value instead);
    a string says why an edit is not a value, and nothing changed."""
    if verb == "reject":
        return Decision(proposal_id, actor, Verb.REJECT, reason=reason)
    if verb == "breakglass":  # the gateway checks the role, as for a chat click
        return Decision(proposal_id, actor, Verb.BREAK_GLASS, revision, reason)
    edit = None
    if verb == "edit":
        proposal = app.gateway.proposals.get(proposal_id)
        if proposal is None:
            raise UnknownProposal(proposal_id)
        if proposal.status is not ProposalStatus.PENDING:
            return f"This proposal was already {proposal.status.value}; nothing was changed."
        try:
            edit = edited_value(
                proposal.current_value, request.form.get("value", ""), proposal.mutation.op
            )
        except ValueError as exc:
            return f"The new value: {exc}. Nothing was changed."
    return Decision(proposal_id, actor, Verb.APPROVE, revision, edit=edit)


def _revision(text: str) -> int:
    """The edit of the proposal the page showed (a click on an older one is refused); a form
    that names none is answered 400, nothing changed: an approval says which value it
    approves."""
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)
    abort(400, description=NO_REVISION)
