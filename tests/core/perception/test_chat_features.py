"""What the classifier sees of written chat: an address or a mention is one token whatever
the name, a quoted line is left out of what the turn says, a link and code are tokens, a
smiley after a question mark still ends a question; and a stance said to someone is read
as said."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.deliberation.interpretation import ActType, Stance
from core.perception import EmbeddedClassifier
from core.perception.features import MAX_CHARS, features, normalise, unaddressed


def _plain(found: list[str]) -> list[str]:
    return [f for f in found if not f.startswith(("b:", "cue:", "len:"))]


@pytest.mark.parametrize(
    "text",
    [
        "geser: +1",  # IRC
        "<@U0123ABCD> +1",  # Slack
        "<@U0123ABCD|maya> +1",
        "@maya +1",  # Discord, plain
        "cody_s, +1",  # a nick that cannot be a word
    ],
)
def test_an_address_is_one_mention_token_whatever_the_name(text: str) -> None:
    assert _plain(features(text)) == ["w:<mention>", "w:+1", "chat:addressed"]
    assert unaddressed(normalise(text)) == "+1"


@pytest.mark.parametrize(
    "text",
    ["note: fixed", "ok, thursday", "so, what now", "no: same problem", "-1, let's wait",
     "yes: do it", "10: 30 works", "imo: too slow", "http: it's down"],
)  # fmt: skip
def test_words_that_open_a_turn_are_not_addresses(text: str) -> None:
    assert "chat:addressed" not in features(text)
    assert unaddressed(normalise(text)) == normalise(text)


@pytest.mark.parametrize("text", ["no: same problem here", "-1, let's wait"])
def test_a_dissent_that_opens_with_a_colon_or_a_comma_is_still_a_dissent(text: str) -> None:
    assert EmbeddedClassifier().classify(text).stance is Stance.DISSENT


@pytest.mark.parametrize("text", ["<!channel> ship it", "<!here|here> ship it"])
def test_a_slack_broadcast_is_a_mark_not_its_words(text: str) -> None:
    found = features(text)
    assert "w:<channel>" in found and "w:channel" not in found and "shape:bang" not in found


@pytest.mark.parametrize(
    "evil",
    ["?" + " ." * 20000 + "x", "a1" * 20000 + "!", "<@a|" * 10000, "?" * 40000 + "a", "@" * 50000],
)
def test_a_long_turn_is_read_as_its_first_characters(evil: str) -> None:
    """Such turns once took seconds to a minute each (patterns retried at every position);
    what is read of a turn is now bounded, so the time is."""
    assert features(evil) == features(evil[:MAX_CHARS])


def test_a_quoted_line_is_left_out_of_what_the_turn_says() -> None:
    found = features("> we could ship on friday\nplease no")
    assert "chat:quote" in found and "w:friday" not in found and "w:no" in found
    only_quote = features("> we could ship on friday")  # nothing else: the quote is it
    assert "w:friday" in only_quote and "chat:quote" not in only_quote


def test_links_code_and_smileys_are_tokens_not_their_text() -> None:
    found = _plain(features("see https://example.com/a?b=c and `cargo build` :) :thumbsup:"))
    assert found[:6] == ["w:see", "w:<link>", "w:and", "w:<code>", "w:<emoticon>", "w:<emoji>"]
    assert not [f for f in found if "example" in f or "cargo" in f or "thumbsup" in f]


@pytest.mark.parametrize("text", ["any news? :)", "really?! 🤔", "done?)", "ok?"])
def test_a_question_mark_before_a_smiley_still_ends_the_turn(text: str) -> None:
    assert "shape:ends?" in features(text), features(text)


def test_a_question_mark_inside_a_turn_is_its_own_feature() -> None:
    found = features("any idea? I tried restarting it")
    assert "shape:has?" in found and "shape:ends?" not in found


@pytest.mark.parametrize("text", ["geser: +1", "@maya same", "<@U0123ABCD> me too"])
def test_agreement_said_to_someone_is_agreement(text: str) -> None:
    turn = EmbeddedClassifier().classify(text)
    assert turn.stance is Stance.AGREE and turn.act_type is ActType.COMMIT


_PARTS = ("maya", "u0123abcd", "cody_s", "example", "intra")


@given(
    st.text(max_size=80).filter(lambda t: not any(p in normalise(t) for p in _PARTS)),
    st.sampled_from(["maya", "u0123abcd", "cody_s"]),
    st.sampled_from(["https://example.com/x", "http://intra.net/a?b=c"]),
)
def test_a_name_or_a_link_never_stands_in_a_feature(text: str, name: str, link: str) -> None:
    for said in (f"@{name} {text} {link}", f"<@{name.upper()}> {text} <{link}|here>"):
        found = features(said)
        assert len(found) == len(set(found))
        assert not [f for f in found if name in f or "example" in f or "intra" in f], found
