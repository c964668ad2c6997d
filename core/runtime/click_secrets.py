"""What of a click's typed text may be kept and told: a secret key's value struck out of the
reason typed with a discard or a break-glass (traced, and told the model), and an edit of a
secret key's proposal masked whole in the trace (its value is the edit)."""

from __future__ import annotations

from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, ActionDone, Msg
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import SECRET
from core.state.value_json import dumps

__all__ = ["traced", "unsaid"]


def traced(gateway: MutationGateway, msg: Msg) -> str:
    """What the trace keeps of ``msg``, as JSON (pydantic's: 5x faster than ``json``'s, the
    same text): a value typed as an edit of a secret key's proposal (or of one no longer
    known) is masked."""
    click = msg.click if isinstance(msg, ActionDone) else msg
    if isinstance(click, ActionClicked) and click.note and _edits_secret(gateway, click):
        data = msg.model_dump(mode="json")
        (data if click is msg else data["click"])["note"] = SECRET
        return dumps(data)
    return msg.model_dump_json()


def unsaid(gateway: MutationGateway, click: ActionClicked) -> ActionClicked:
    """``click`` with a secret key's value struck out of the reason typed with it (a
    discard's, a break-glass's), which is traced and told the model (an edit's value is the
    edit: masked whole in the trace)."""
    if click.action == ActionType.EDIT_PROPOSAL or not (click.note or click.break_glass):
        return click
    proposal = gateway.proposals.get(click.target_id)
    secrecy = gateway.secrecy
    if proposal is None or not secrecy.is_secret(proposal.mutation.key):
        return click
    hide = secrecy.redactor(proposal.mutation, values=[proposal.current_value]).text
    typed = {"note": click.note, "break_glass": click.break_glass}
    return click.model_copy(update={k: hide(v) for k, v in typed.items() if v})


def _edits_secret(gateway: MutationGateway, click: ActionClicked) -> bool:
    if click.action != ActionType.EDIT_PROPOSAL:
        return False
    proposal = gateway.proposals.get(click.target_id)
    return proposal is None or gateway.secrecy.is_secret(proposal.mutation.key)
