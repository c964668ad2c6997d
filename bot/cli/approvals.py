"""``deliberate proposals approve|reject|breakglass ID``: a person decides a pending proposal
from the command line, as a click on its buttons would (``core.runtime.deciding``: the
gateway's roles, quorum, four eyes, revision and break-glass checks, each refusal recorded).

The person is ``local:NAME`` (``--as NAME``, else ``$DELIBERATE_AS``, else the name this
machine knows them by), with the roles the config's ``roles:`` binds to ``local:NAME``. ID is
the proposal's id as ``deliberate proposals`` prints it; ``ID@REVISION`` names the edit of it
they read (an edit made since refuses it), and ID alone the value as first proposed (so an
edit made between the listing and the decision is refused, never approved unseen). A name
the config binds to no role decides nothing: made-up names would make up a quorum."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel

from bot.chat.break_glass import reason_problem
from bot.chat.people import NAME_RULE, local_person
from bot.commands.args import local_as
from bot.commands.exits import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from bot.reports.render import json_line
from bot.screen import one_line
from core.deliberation.messages import OutcomeNote
from core.deliberation.sentences import not_done
from core.gateway.break_glass import MAX_GLASS_REASON
from core.gateway.mutation_gateway import MAX_REASON, UnknownProposal
from core.runtime.deciding import Decision, Verb, decide
from core.state.actor import Actor

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["AS_ENV", "ProposalRef", "proposal_ref", "register"]

AS_ENV = "DELIBERATE_AS"
_REVISION_DIGITS = 9


@dataclass(frozen=True)
class ProposalRef:
    """A proposal as typed: its id, and the revision its person read (None: as it is now)."""

    id: str
    revision: int | None = None


def proposal_ref(text: str) -> ProposalRef:
    """``ID`` or ``ID@REVISION``: a tail of digits after the last ``@`` is the revision."""
    named, at, number = text.rpartition("@")
    if at and named and number.isascii() and number.isdigit():
        if len(number) > _REVISION_DIGITS:
            raise argparse.ArgumentTypeError(f"revision {number} is not one a proposal has")
        text, revision = named, int(number)
    else:
        revision = None
    if not 1 <= len(text) <= 128 or not text.isascii() or not text.isprintable() or " " in text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a proposal id ('deliberate proposals' lists them)"
        )
    return ProposalRef(text, revision)


def register(proposals: argparse.ArgumentParser) -> None:
    """The subcommands of ``deliberate proposals`` (which lists them, without one)."""
    sub = proposals.add_subparsers(dest="deciding", metavar="[DECISION]")
    approve = sub.add_parser(
        "approve",
        help="approve a proposal: it commits at its quorum's last approver",
        description="Approve the pending proposal ID, as its Apply button does: your roles "
        "are checked, under four eyes the person who asked for it (or edited it last) is "
        "refused, and it commits at the last approval its quorum (and its rule) needs; until "
        "then it says whom it still awaits. Exit 0 when counted or committed, 1 when "
        "refused (said why; nothing changed), 2 for an unknown ID or bad input.",
    )
    reject = sub.add_parser(
        "reject",
        help="reject a proposal (a denial, where its key counts them)",
        description="Discard the pending proposal ID, as its Discard button does: it takes "
        "the right to apply it; where the key counts denials (approval.deny_at) yours is "
        "counted, and the last one needed discards it. The reason is kept with it, and the "
        "assistant takes it into account. Exit codes as for approve.",
    )
    glass = sub.add_parser(
        "breakglass",
        help="apply a proposal at once, skipping its approvals, with a reason",
        description="Apply the pending proposal ID at once, whatever approvals it awaits: "
        "only a person holding the key's break-glass role, only with a reason. It is flagged, "
        "announced and listed for review ('deliberate proposals --break-glass'). Exit codes "
        "as for approve.",
    )
    for parser, reason_help in (
        (approve, f"why you approve, kept with your approval (at most {MAX_REASON} characters)"),
        (reject, f"why not, kept with the proposal (at most {MAX_REASON} characters)"),
        (glass, f"why at once: required (at most {MAX_GLASS_REASON} characters)"),
    ):
        parser.add_argument(
            "proposal",
            type=proposal_ref,
            metavar="ID[@REVISION]",
            help="the proposal, as 'deliberate proposals' lists it; @REVISION: the edit of it "
            "you read (refused if it was edited since); without it, as first proposed",
        )
        parser.add_argument(
            "--as",
            dest="as_name",
            type=local_as,
            metavar="NAME",
            help=f"who you are: local:NAME, bound to a role in the config's roles (default: "
            f"${AS_ENV}, else your user name on this machine); {NAME_RULE}",
        )
        parser.add_argument("--reason", required=parser is glass, metavar="TEXT", help=reason_help)
        parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    approve.set_defaults(handler=_decide, verb=Verb.APPROVE)
    reject.set_defaults(handler=_decide, verb=Verb.REJECT)
    glass.set_defaults(handler=_decide, verb=Verb.BREAK_GLASS)


def _decide(app: App, args: argparse.Namespace) -> int:
    who = _person(app, args.as_name)
    problem = _reason_problem(args.verb, args.reason)
    if isinstance(who, str) or problem is not None:
        print(f"deliberate: {who if isinstance(who, str) else problem}", file=sys.stderr)
        return EXIT_USAGE
    ref: ProposalRef = args.proposal
    revision = ref.revision
    try:
        if revision is None and args.verb is not Verb.REJECT:
            # the value as first proposed, as listed before any edit: an edit made since
            # (between the listing and this) is refused, naming its value, never approved blind
            revision = 0
        note = decide(app.gateway, Decision(ref.id, who, args.verb, revision, args.reason))
    except UnknownProposal as exc:
        print(one_line(f"deliberate: {exc}; nothing was changed"), file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json_line(_outcome_json(app, ref.id, who, args.verb, note)))
    else:
        print(one_line(not_done(note.message) if note.outcome == "rejected" else note.message))
    return EXIT_REJECTED if note.outcome == "rejected" else EXIT_OK


def _person(app: App, named: str | None) -> Actor | str:
    """``local:NAME`` with its bound roles, or why nobody is named."""
    source, name = "--as", named
    if name is None:
        source, name = f"${AS_ENV}", os.environ.get(AS_ENV) or None
    if name is None:
        source = "your user name on this machine"
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name, no passwd entry
            return f"say who you are with --as NAME or ${AS_ENV}; nothing was changed"
    try:
        who = local_person(app.config.roles, name)
    except ValueError as exc:
        return f"{source}: {exc}; nothing was changed"
    if not who.roles:  # a name made up at the terminal is no person a quorum may count
        return (
            f"{source}: local:{who.id} is bound to no role (roles: ROLE: members: "
            f"[local:{who.id}] in the config): the command line decides as a person the "
            "config names; nothing was changed"
        )
    return who


def _reason_problem(verb: Verb, reason: str | None) -> str | None:
    """What is wrong with the reason given (None: nothing), before anything is read."""
    if verb is Verb.BREAK_GLASS:
        problem = reason_problem(reason)
        return None if problem is None else problem[:1].lower() + problem[1:]
    if reason is not None and len(reason) > MAX_REASON:
        return f"a reason is at most {MAX_REASON} characters; nothing was changed"
    return None


def _outcome_json(
    app: App, proposal_id: str, who: Actor, verb: Verb, note: OutcomeNote
) -> dict[str, Any]:
    """The outcome as ``--json`` prints it: the note's fields, and where it stands (its
    status, approvals of its quorum, denials) when the proposal is still kept."""
    data: dict[str, Any] = {"proposalId": proposal_id, "decision": verb.value, "as": str(who)}
    said = note.model_dump(mode="json", exclude_none=True, exclude={"waiting"})
    data |= {to_camel(field): value for field, value in said.items()}  # (as state set's)
    proposal = app.gateway.proposals.get(proposal_id)
    if proposal is not None:
        data |= {
            "status": proposal.status.value,
            "revision": proposal.revision,
            "approvals": [str(a.by) for a in proposal.approvals],
            "quorum": proposal.quorum,
        }
        if proposal.denials:
            data["denials"] = [str(d.by) for d in proposal.denials]
    return data
