"""The surface cues the embedded classifier weighs: data, not logic.

Each cue is a regular expression over the lower-cased turn, written for one act type with a
hand-set weight. They describe how people type in a chat, not any one corpus. The classifier
uses each cue as a feature whose learned weights (``weights.json``) replace the hand-set ones,
which remain as documentation of the intent; editing, adding or reordering a cue therefore
needs a retrain (see ``embedded.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.deliberation.interpretation import ActType

__all__ = ["ACT_CUES", "ARTIFACT", "NEW_TOPIC", "STOPWORDS", "Cue"]


@dataclass(frozen=True)
class Cue:
    act: ActType
    weight: float
    pattern: re.Pattern[str]


def _cues(act: ActType, *pairs: tuple[float, str]) -> list[Cue]:
    return [Cue(act, weight, re.compile(pattern)) for weight, pattern in pairs]


_SHORT_YES = (
    r"^(ok(ay)?|k+|yes+|yep|yup|yeah|ya|sure|perfect|great|nice|done|approved|agreed|"
    r"sounds good|works for me|fine by me|\+1|👍|✅|lgtm|ship|go|do it|deal|sold)[.!👍✅ ]*$"
)

ACT_CUES: list[Cue] = [
    *_cues(
        ActType.COMMIT,
        (3.0, r"\blet'?s (go|roll|run|ship|do|use|lock)\b(?! (try|think|see|explore))"),
        (3.0, r"\b(ship|lock) (it|that|this)( in)?\b|\block(ed)? (it )?in\b"),
        (3.0, r"\bgo(ing)? with (it|that|this|the|option|plan|v?\d|#|your|[a-z]+'s)"),
        (3.0, r"\b(that'?s|it'?s|we'?re) (the plan|decided|settled|final|locked|done deal)\b"),
        (3.0, r"\b(decided|decision made|final answer|approved|signed off|green ?light(ed)?)\b"),
        (2.5, r"\b(we'?re|i'?m) (going|gonna) with\b|\bmake it so\b|\bconfirm(ed)?\b"),
        (
            2.5,
            r"\b(use|pick|take|choose|adopt) (this|that|it|the (first|second|third|last|latest"
            r"|current|new) one|option|#?\d)\b",
        ),
        (
            2.0,
            r"\b(do it|ship it|sold|deal|agreed|lgtm|sounds good|works for me|fine by me|"
            r"good to go|let'?s do this|that works|perfect,? (go|do|ship|use))\b",
        ),
        (2.0, r"\b(yes|yep|yeah|ok(ay)?),? (let'?s|do|go|ship|use|that one|this one)\b"),
        (2.5, _SHORT_YES),
        (2.5, r"\b(add|put|save|write|record|log|pin) (it|this|that|them) (to|in|into|on) "),
        (1.5, r"(^|\s)\+1\b|👍|✅"),
        # acceptance said as the next action being taken: "locking it in", "I'll update it"
        (
            2.5,
            r"\b(\w+ it is|is final|that'?s (it|the \w+)|final\b|locked\b|moving on|"
            r"not worth (fighting|arguing)|wins\b|settled)",
        ),
        (
            2.0,
            r"\b(locking|merging|merged|placing|ordering|posting|updating|saving|booking|"
            r"sending|publishing|announcing|scheduling|shipping) (it|the|that|this|them|now|"
            r"\w+ (in|now|to|as))\b|\b(merging|placing the order|updating the \w+ now)\b",
        ),
        (
            2.0,
            r"\bi'?ll (set|update|post|send|book|order|create|write|schedule|announce|merge|"
            r"make|add|put|file|open|draft)\b",
        ),
        (1.5, r"^(fine|alright|ok(ay)?|yeah|yes|bet|hmm+\W+yeah|cool|great|perfect|done)\b\W"),
        # agreeing with what someone said: "I agree with selsta", "I support this idea",
        # "that's a fantastic idea", "makes sense", "I also recommend delaying"
        (
            2.0,
            r"\bi (fully |totally |also |too |completely |strongly )?(agree|support|second|"
            r"back|endorse)\b|\b(good|great|nice|fantastic|excellent|cool|brilliant) "
            r"(idea|point|call|plan)\b|\bmakes (total |perfect )?sense\b|\bsounds "
            r"(good|great|fine|right|reasonable|like a plan)\b|\bi (also |too )?(vote|"
            r"recommend|prefer|picked|pick|chose|like) |\bi'?m (in|all for|for it|on board|"
            r"happy to|fine with|ok with|okay with)\b|\bcount me in\b",
        ),
    ),
    *_cues(
        ActType.REFINE,
        (
            3.0,
            r"\bmake (it|that|this|them|the \w+) (a bit |a little |way |much )?(more|less|"
            r"\w+er)\b",
        ),
        (3.0, r"\bsame (thing |idea |one |plan |as before )?but\b"),
        (
            2.5,
            r"\b(instead of|rather than|swap|replace|rename|reword|rephrase|tweak|adjust|"
            r"trim|shorten|lengthen|simplify|soften|tone (it )?down|polish|reorder|move the|"
            r"cut the|drop the|remove the|get rid of)\b",
        ),
        (2.0, r"\b(change|switch) (it|that|the|this)\b|\b(add|include|mention) (a|an|the|some)\b"),
        (
            1.5,
            r"\b(shorter|longer|tighter|simpler|punchier|clearer|cleaner|smaller|bigger|"
            r"quieter|louder|earlier|later|faster|slower|warmer|friendlier)\b",
        ),
        (
            1.5,
            r"\b(but|except|only|just) (with|without|make|change|drop|add|keep|use|move|"
            r"in|on|for|swap|put)\b|\b(keep|leave) (it|the|that|everything)\b",
        ),
        (1.0, r"\b(more|less|fewer) \w+|\b(v2|second pass|another pass|one more pass)\b"),
        # an edit given as an order: "bump the bar up", "lose the emoji", "1 week not 2"
        (
            2.0,
            r"^(bump|tighten|loosen|narrow|widen|lose|skip|timebox|put|move|raise|lower|"
            r"increase|decrease|reduce|cap|flip|center|centre|align|bold|hide|shrink|"
            r"stretch|key|group|sort|merge|split|round|limit|default|fix|lead with|"
            r"start with|end with|open with|close with)\b",
        ),
        (
            2.0,
            r"\bshould be\b|\b\w+,? not \w+\b|\b(after|before|above|below|under|over) "
            r"the \w+,? not\b|\bbut (skip|lose|drop|keep|make|cut)\b",
        ),
        (
            1.0,
            r"\b(too (long|short|big|small|loud|quiet|wide|narrow|much|many|busy|bright|dark)|"
            r"way too)\b",
        ),
    ),
    *_cues(
        ActType.QUESTION,
        (2.0, r"\?\s*\W*$"),
        (1.5, r"^(what|how|why|when|where|who|which|whose)\b(?! if| about)"),
        (1.0, r"^(is|are|does|do|did|can|will|has|have|was|were|should|would)\b"),
        (
            1.0,
            r"\b(does|do|is|are|can|will|did) (the|it|this|that|we|they|anyone|someone|"
            r"everyone)\b|\bor is (that|it)\b|\bquestion\b",
        ),
        (1.5, r"^(curious|wondering)\b"),
        (
            2.0,
            r"\b(what does|what is|what'?s the|how (long|much|many|does|do|would|big|often)|"
            r"do we (know|have|already)|any idea|is there|are there|can (you|someone) "
            r"(explain|tell|check|clarify|confirm whether)|remind me|wondering (if|whether|"
            r"what|how)|not sure (what|how|if|whether)|clarify|eta|who owns|stand for)\b",
        ),
    ),
    *_cues(
        ActType.BRAINSTORM,
        (
            2.5,
            r"\b(what if|how about|what about|why not|could we|we could|maybe we|perhaps|"
            r"another (idea|option|thought|angle|approach|way)|alternatively|or we (could|can)|"
            r"idea:|option:|brainstorm|i wonder if|might be (nice|cool|fun|worth)|"
            r"wouldn'?t it be|imagine|spitball|throwing (this|it|something|one) out|"
            r"one (idea|option|thought)|just an idea|hear me out|random idea|wild idea)\b",
        ),
        (2.5, r"^or\b|\boption \d+\b|^(could|might) (add|do|try|use|make|run|go|have)\b"),
        (
            1.5,
            r"\b(we (should|could|can|might)|let'?s (try|consider|explore|think about)|"
            r"maybe|what about)\b",
        ),
        (1.0, r"\b(ideas?|options?|suggestions?|proposal|concept|alternatives?|or)\b"),
    ),
    *_cues(
        ActType.TANGENT,
        (
            2.0,
            r"\b(lunch|dinner|breakfast|coffee|tea|snacks?|pizza|beers?|weekend|holiday|"
            r"vacation|birthday|weather|rain(ing)?|sunny|snow(ing)?|traffic|commute|gym|"
            r"nap|sleep|tired|hungry)\b",
        ),
        (
            1.5,
            r"\b(brb|afk|gtg|g2g|lol|lmao|rofl|haha+|omg|off[- ]?topic|unrelated|random(ly)?"
            r"|by the way|btw|side note|anyway)\b|😂|🤣|😅",
        ),
        (
            2.0,
            r"\bmy (cat|dog|kid|kids|son|daughter|wife|husband|partner|mom|dad|neighbou?r)\b|"
            r"\b(netflix|movie|tv show|episode|last night|the game|football|soccer|nba|"
            r"meme|playlist|album|concert)\b",
        ),
        (
            2.0,
            r"\b(anyone (up for|want|going|else|seen|watch)|did (you|anyone) (see|watch|hear|"
            r"catch))\b|\bhappy (friday|monday|birthday)\b",
        ),
        # chat culture and personal life: greetings, emotes, "is it just me", errands
        (
            2.5,
            r"^(hi|hello|hey|yo|gm|gn)\b.*\b(from|all|everyone|chat|guys)\b|^(pog|poggers|"
            r"kekw|lul|lmao+|lol+|rip|f in chat|gg)\b|\bis it just me\b|\bwho else\b|"
            r"\bignore me\b|\bjust fyi\b|\bchat,? look\b",
        ),
        (
            1.5,
            r"\b(dentist|doctor|office|wifi|keyboard|package|amazon|delivery|fire alarm|"
            r"bears?|bakery|quit|gameboy|camera|zoom|parking|elevator|printer|my \w+ (is|has|"
            r"was|just))\b",
        ),
    ),
]

ARTIFACT = re.compile(
    r"\b(docs?|document|notes|write[- ]?up|spec|readme|wiki|page|minutes|summary|agenda|"
    r"changelog|the record|design doc|add (this|it|that) to)\b"
)
NEW_TOPIC = re.compile(
    r"\b(new topic|different (topic|question|thing)|switching gears|change of subject|"
    r"next (item|topic)|moving on|separately|another thing|unrelated)\b"
)
STOPWORDS = frozenset(
    "the a an and or but for of to in on at by with from this that these those it its is are "  # noqa: SIM905
    "was were be been our your their we you they i me my us about into over under new".split()
)
