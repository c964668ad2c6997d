"""What the embedded classifier sees of a turn: a bag of named, binary features.

Words and word pairs carry most of the signal; the shape of the turn (a closing question mark,
an opening wh-word, an emoji) and the hand-written cues in ``cues.py`` add what a small
training corpus cannot. Written chat carries marks speech does not: an @mention or an IRC
"nick:" address, a quoted line ("> ..."), a link, `code`, an emoticon or a ``:shortcode:``;
each is one token or one shape feature, never the name or address it stands for. The cues
generalise to phrasings the corpus never spelled out, and the learned weights decide how
much each one is worth. Feature names are the keys of
``weights.json``, so changing anything here means retraining (see ``embedded.py``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from core.perception.cues import ACT_CUES, STOPWORDS
from core.perception.literals import needed_words

__all__ = ["MAX_CHARS", "content_words", "features", "normalise", "unaddressed"]

# a word, a "+1"/"-1", or a single emoji/pictograph (they carry tone in chat: 👍 vs 😂)
_TOKEN = re.compile(r"[a-z0-9]+|[+-]1\b|[\u2600-\u27bf\U0001f300-\U0001faff]")
# what written chat carries besides words, each read as one placeholder token (in angle
# brackets, which no word contains): who is named, where a link points, what code says
_MARKS = (
    # Slack's <@U123|name>, Discord's <@123>, <@!123> and <@&role>, a plain @name
    (re.compile(r"<@[!&]?[a-z0-9]{1,40}(\|[^>|]{0,80})?>|(?<![\w.])@[\w.-]{1,40}"), " <mention> "),
    # a channel, and Slack's <!channel>, <!here>, <!subteam^ID>: one more mention, of many
    (
        re.compile(r"<#[a-z0-9]{1,40}(\|[^>|]{0,80})?>|<![a-z^0-9]{1,40}(\|[^>|]{0,80})?>"),
        " <channel> ",
    ),
    (re.compile(r"<?https?://\S+"), " <link> "),
    (re.compile(r"`[^`]+`"), " <code> "),
    (re.compile(r"(?<!\S)[:;]-?[()dp/|](?!\w)"), " <emoticon> "),  # :) ;-) :D :/
    (re.compile(r":[a-z0-9_+-]+:"), " <emoji> "),  # :thumbsup:
)
# an address a turn opens with: a Slack/Discord mention, "@maya", IRC's "nick: ..." (not
# "note: ..."), and "nick, ..." when the nick cannot be a word
_ADDRESS = re.compile(
    r"^(<@[!&]?[a-z0-9]{1,40}(?:\|[^>|]{0,80})?>[:,]?\s+"
    r"|@([\w.-]{1,40})[:,]?\s+"
    r"|([\w\[\]|^`{}-]{2,32}): (?=\S)"
    r"|([\w\[\]|^`{}-]{2,32}), )"
)
# words that open a turn with a colon or a comma without being anyone's name
_NOT_NICKS = frozenset(
    {
        *("note", "edit", "update", "fyi", "ps", "re", "btw", "q", "a", "answer", "question"),
        *("idea", "also", "todo", "imo", "imho", "fwiw", "tldr", "no", "nope", "nah", "yes"),
        *("yeah", "yep", "ok", "okay", "sure", "agreed", "right", "true", "well", "so", "and"),
        *("but", "http", "https"),
    }
)
# what may follow a closing question mark: "right? :)", "ok?!", "really? 🤔"
_TRAILING_MARKS = ("<emoticon>", "<emoji>")
_TRAILING_CHARS = " !.)"
_MARK_TOKEN = re.compile(r"<(mention|channel|link|code|emoticon|emoji)>")
_WORD = re.compile(r"[a-z0-9]+")
_EMOJI = re.compile(r"[\u2600-\u27bf\U0001f300-\U0001faff]")
_WH = frozenset("what how why when where who which whose".split())  # noqa: SIM905
_AUX = frozenset("is are does do did can will has have was were should would could".split())  # noqa: SIM905
# the cue features are named by act and position, so an edited cue list needs a retrain
_CUE_NAMES = [f"cue:{cue.act.value}:{n}" for n, cue in enumerate(ACT_CUES)]
# each cue with the words it cannot match without (None: it is always searched)
_CUES = [
    (name, cue.pattern.search, None if needs is None else tuple(needs))
    for name, cue in zip(_CUE_NAMES, ACT_CUES, strict=True)
    for needs in [needed_words(cue.pattern)]
]


def normalise(text: str) -> str:
    # typographic apostrophes (phones type them) count as plain ones
    return " ".join(text.lower().replace("\u2019", "'").replace("\u2018", "'").split())


def content_words(text: str) -> set[str]:
    """Words that say what a turn is about, compared by their first five letters so that
    "stream" and "streaming" meet."""
    return {w[:5] for w in _WORD.findall(text) if len(w) > 3 and w not in STOPWORDS}


MAX_CHARS = 2000  # what of a turn is read: all a short turn says, and a bound on the time


def features(text: str, topic: str | None = None) -> list[str]:
    """The features present in a turn (its first ``MAX_CHARS`` characters), without
    repeats, in a stable order. A turn's are worked out once: its classifier, and the marks
    a click may teach of it (``team.py``), read the same ones."""
    return list(_features(text[:MAX_CHARS], topic))


@lru_cache(maxsize=256)
def _features(text: str, topic: str | None) -> tuple[str, ...]:
    own, chat = _unquoted(text)
    said = normalise(own)
    plain = unaddressed(said)
    if plain != said:
        chat.append("chat:addressed")
    marked = _marked(plain)
    # "let's" and "lets" are one word in chat
    tokens = _tokens(marked.replace("'", ""))
    words = ["<mention>", *tokens] if plain != said else tokens
    found = [f"w:{t}" for t in words]
    framed = ["<s>", *words, "</s>"]
    found += [f"b:{a} {b}" for a, b in pairwise(framed)]
    found += chat + _shape(marked, tokens)
    found += _cued(plain)
    found += _topic(said, topic)
    return tuple(dict.fromkeys(found))


def _cued(plain: str) -> list[str]:
    """The names of the cues ``plain`` matches: a cue none of whose needed words is in it is
    not searched (``literals``)."""
    if len(plain) > _PIECEMEAL:
        has = plain.__contains__
        return [
            name
            for name, search, needs in _CUES
            if (needs is None or any(map(has, needs))) and search(plain)
        ]
    hit = set(_ALWAYS)
    # a needed word in the turn starts with three characters of it: only those are looked for
    for start in _STARTS.intersection([plain[i : i + 3] for i in range(len(plain) - 2)]):
        for word, cue in _BY_START[start]:
            if cue not in hit and word in plain:
                hit.add(cue)
    for word, cue in _SHORT:
        if cue not in hit and word in plain:
            hit.add(cue)
    return [name for k, (name, search, _) in enumerate(_CUES) if k in hit and search(plain)]


def _by_start() -> tuple[dict[str, tuple[tuple[str, int], ...]], tuple[tuple[str, int], ...]]:
    """Each needed word of each cue (by its index), by its first three characters; the words
    shorter than that apart."""
    starts: dict[str, list[tuple[str, int]]] = {}
    short: list[tuple[str, int]] = []
    for cue, (_, _, needs) in enumerate(_CUES):
        for word in needs or ():
            if len(word) < 3:
                short.append((word, cue))
            else:
                starts.setdefault(word[:3], []).append((word, cue))
    return {k: tuple(v) for k, v in starts.items()}, tuple(short)


# a turn's three-character pieces cost more than looking for each needed word in a long turn
_PIECEMEAL = 300
_ALWAYS = frozenset(k for k, (_, _, needs) in enumerate(_CUES) if needs is None)
_BY_START, _SHORT = _by_start()
_STARTS = frozenset(_BY_START)


def unaddressed(said: str) -> str:
    """``said`` (normalised) without the address it opens with: "maya: +1", "@maya +1",
    "<@U123> +1" say what "+1" says, to someone."""
    address = _ADDRESS.match(said)
    if address is None:
        return said
    colon, comma = address.group(3), address.group(4)
    nick = colon or comma
    if nick is not None and (nick in _NOT_NICKS or not re.search("[a-z]", nick)):
        return said  # "no: ...", "-1, ...", "10: 30": no names
    if comma is not None and not re.search(r"[\d_|^`-]", comma):
        return said  # "maya, ..." may as well be "so, ...": only a nick no word can be
    rest = said[address.end() :]
    return rest if rest.strip() else said


def _unquoted(text: str) -> tuple[str, list[str]]:
    """A turn that quotes another ("> we could ship" then "please no") is what it adds: the
    quoted lines go, and a feature says something was quoted."""
    lines = text.split("\n")
    own = [line for line in lines if not line.lstrip().startswith(">")]
    if len(own) == len(lines) or not "".join(own).strip():
        return text, []
    return "\n".join(own), ["chat:quote"]


def _marked(said: str) -> str:
    """``said`` with chat's marks as placeholder tokens."""
    for pattern, token in _MARKS:
        said = pattern.sub(token, said)
    return " ".join(said.split())


def _tokens(said: str) -> list[str]:
    tokens: list[str] = []
    for part in re.split(r"(<[a-z]+>)", said):
        mark = _MARK_TOKEN.fullmatch(part)
        tokens += [part] if mark else _TOKEN.findall(part)
    return tokens


def _shape(said: str, tokens: list[str]) -> list[str]:
    shape = []
    if _without_trailing(said).endswith("?"):
        shape.append("shape:ends?")
    elif "?" in said:  # "any idea? I tried X": a question in the middle of a turn
        shape.append("shape:has?")
    if tokens and tokens[0] in _WH:
        shape.append("shape:wh-first")
    if tokens and tokens[0] in _AUX:
        shape.append("shape:aux-first")
    if _EMOJI.search(said):
        shape.append("shape:emoji")
    if "!" in said:
        shape.append("shape:bang")
    if any(t.isdigit() for t in tokens):
        shape.append("shape:number")
    # no bucket for one or two words: that would make any unknown short word look like "ok"
    if len(tokens) >= 8:
        shape.append("shape:long")
    if len(tokens) >= 3:  # a few words, a sentence, a paragraph: chat's turns vary most here
        shape.append(
            "len:3-5" if len(tokens) < 6 else "len:6-11" if len(tokens) < 12 else "len:12+"
        )
    return shape


def _without_trailing(said: str) -> str:
    """``said`` without what may follow a closing question mark (in linear time)."""
    while True:
        before = said
        said = said.rstrip(_TRAILING_CHARS)
        for mark in _TRAILING_MARKS:
            said = said.removesuffix(mark)
        if said and _EMOJI.match(said[-1]):
            said = said[:-1]
        if said == before:
            return said


def _topic(said: str, topic: str | None) -> list[str]:
    """A turn that shares a word with the session topic is on it; one of some length that
    shares none leans towards a tangent (an idea, too, often shares none: the weights say
    how much that counts)."""
    if not topic:
        return []
    words = content_words(said)
    if words & content_words(normalise(topic)):
        return ["topic:shared"]
    return ["topic:apart"] if len(words) >= 3 else []
