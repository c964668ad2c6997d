"""Two stances a chat turn takes towards what is on the table, read by rule before the
model's reading is used: no learned weight may turn them around.

- **Dissent** ("no", "nah", "not that", "I don't think so", "don't ship it", "let's not go
  with that", "-1", 👎) is never a commit: such a turn is read as the likeliest act that is
  not one, however strongly the words "ship it" or "go with" pull the model towards it.
- **Back** ("go back to the previous one", "the first version was better") asks for the
  candidate before this one: no commit either.
- **Edit** ("and announce it on the blog", "also record it", "make sure support is
  staffed", "change it so ...", "without the replica", "needs a runbook too") changes what
  is on the table: with a candidate there, a refinement, whatever act the words read as
  alone ("and announce it" is no new idea). A question or a new idea ("but what if ...")
  is no edit.
- **Echo** ("same", "me too", "ditto", "seconded", "this", "^", "+1") is agreement with what
  was said before it, a commit turn: the model, reading the turn alone, cannot know that.

Both look at the whole turn, lower-cased (``features.normalise``): "no problem, ship it",
"no-brainer", "no one told me" and "no, you're right" are no dissent, and "same as before?"
is no echo."""

from __future__ import annotations

import re

from core.deliberation.interpretation import Stance

__all__ = ["BACK", "DISSENT", "ECHO", "EDIT", "dissents", "echoes", "stance_of"]

_NOT_A_NO = (
    r"(?!-brainer|\s+(problem|worries|doubts?|objections?|complaints?|changes?|issues?|more|"
    r"one|matter|need|longer)\b)"
)
DISSENT = re.compile(
    # a turn that opens with a refusal
    r"^(no+|nope|nah+|nay|-1|👎|hard no|hell no|no way|hmm+,? no|wait,? no|please no|"
    r"absolutely not|definitely not|certainly not|not (that|this|yet|now|really|quite|so sure|"
    r"convinced|a fan)|disagree)\b" + _NOT_A_NO + r"|^👎"
    # or says it outright anywhere
    r"|\bi (don'?t|do not) (think so|agree|like (it|that|this))\b|\bi disagree\b"
    r"|\bi'?d rather (not|we didn'?t)\b|\bnot a fan\b"
    r"|(?<!not a )(?<!not an )\b(bad|terrible|awful) idea\b"
    r"|\b(let'?s|we should|we shouldn'?t|please) (not|never) (do|go|use|ship|pick|take|lock|"
    r"merge|commit|choose|settle)\b|\blet'?s not\W*$"
    r"|\b(don'?t|do not|shouldn'?t|should not|can'?t|won'?t) (ship|do|use|go with|pick|take|"
    r"lock|merge|commit to|choose|settle on) (it|that|this|them)\b"
)
_EARLIER = (
    r"(previous|earlier|last|old|first|other|original) (one|version|idea|option|candidate|"
    r"proposal|plan)"
)
BACK = re.compile(
    rf"\bback to (the |that |our )?{_EARLIER}\b|\b(the |that )?{_EARLIER} (was|is) better\b|"
    rf"\b(bring|put) (back )?(the |that )?{_EARLIER} back\b|\brestore (the |that )?{_EARLIER}\b"
)
EDIT = re.compile(
    # a change said as an instruction, or joined on to what is on the table
    r"^(?:(?:ok(?:ay)?|so|oh|hmm|actually)[,.!]?\s+)*(?:and also|and|also|plus|oh and|but|"
    r"make sure|make it(?! so\b)|make them|change|replace|swap|drop|remove|without|instead of|"
    r"no more|skip|keep it|keep them|move it|push it|only)\b"
    r"|^(?:please\s+)?add\b.*\b(to it|to that|to this|as well|too)\W*$"
    r"|\b(too|as well)\W*$"
)
# a new idea or a question, not a change: "but what if we used X", "and how about Y"
_NEW_IDEA = re.compile(r"\b(what if|how about|what about|or maybe|alternatively|instead,)\b|\?\s*$")
# a "no" that agrees: "no, you're right", "no I agree", "no ok"
_AGREEING = re.compile(
    r"\b(right|agree|agreed|ok(ay)?|true|exactly|fair|good point|yes|yeah|yep|of course|sure)\b"
)
ECHO = re.compile(
    r"^(same( here)?|me too|me as well|ditto|seconded|second(ed)? (that|this)|i second (that|"
    r"this)|this|this\^*|\^+|\+\d+|what (he|she|they|you) said|exactly( this)?|"
    r"agreed|agree|same for me)[\s.!👍]*$"
)


def dissents(said: str) -> bool:
    """Whether ``said`` (normalised) turns down what is on the table."""
    return DISSENT.search(said) is not None and _AGREEING.search(said) is None


def echoes(said: str) -> bool:
    """Whether ``said`` (normalised) only agrees with what was said before it."""
    return ECHO.fullmatch(said) is not None


def stance_of(said: str) -> Stance | None:
    """The stance ``said`` (normalised) takes, if its words say it plainly."""
    if echoes(said):
        return Stance.AGREE
    if BACK.search(said) is not None:
        return Stance.BACK
    if dissents(said):
        return Stance.DISSENT
    if EDIT.search(said) is not None and _NEW_IDEA.search(said) is None:
        return Stance.EDIT
    return None
