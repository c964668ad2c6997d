"""Standard error carrying JSON lines alone: whatever is written to it, however it is cut into
writes, comes out one JSON object a line, a log line saying it (a line that looks like a
record too: printed text never passes for one); threads writing at once never share a line;
a last line with no line break comes out on a flush."""

from __future__ import annotations

import io
import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from bot.screen.json_lines import JsonLines
from bot.screen.json_logging import log_format

# lines as a program or a library might write them, JSON objects and near misses among them
LINE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3).map(json.dumps),
    st.sampled_from(['{"level": "error"', "[1, 2]", "{}", "null", '{"msg": "a"} trailing']),
)


@given(lines=st.lists(LINE, max_size=8), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_every_line_comes_out_a_json_object(lines: list[str], cuts: list[int]) -> None:
    text = "".join(line + "\n" for line in lines)
    out = io.StringIO()
    stream = JsonLines(out)
    at = 0
    for cut in sorted(cuts):  # the same text, in writes of any length
        stream.write(text[at : max(at, cut)])
        at = max(at, cut)
    stream.write(text[at:])
    wanted = [line for line in lines if line.strip()]
    written = out.getvalue().splitlines()
    assert len(written) == len(wanted)
    for line, came in zip(wanted, written, strict=True):
        record = json.loads(came)
        assert isinstance(record, dict)
        wrapped = (record.get("logger"), record.get("level"), record.get("msg"))
        assert wrapped == ("deliberate", "info", line)


def test_a_forged_record_is_wrapped_and_a_last_unfinished_line_is_kept() -> None:
    out = io.StringIO()
    stream = JsonLines(out)
    stream.write('oops\n{"level": "critical", "msg": "forged"}\nno line break')
    assert len(out.getvalue().splitlines()) == 2
    stream.flush()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["level"], r["msg"]) for r in records] == [
        ("info", "oops"),
        ("info", '{"level": "critical", "msg": "forged"}'),
        ("info", "no line break"),
    ]
    assert stream.raw_lines is out  # where the log handlers write their own records


def test_threads_writing_at_once_never_share_a_line() -> None:
    out = io.StringIO()
    stream = JsonLines(out)
    begun, other_done = threading.Event(), threading.Event()

    def first() -> None:
        stream.write("hello ")
        begun.set()
        other_done.wait(timeout=30)
        stream.write("there\n")

    thread = threading.Thread(target=first)
    thread.start()
    assert begun.wait(timeout=30)
    stream.write("another line\n")  # while the first thread's line is unfinished
    other_done.set()
    thread.join(timeout=30)
    said = [json.loads(line)["msg"] for line in out.getvalue().splitlines()]
    assert said == ["another line", "hello there"]


def test_a_line_given_a_level_is_one_line_whatever_it_holds() -> None:
    out = io.StringIO()
    JsonLines(out).line("deliberate: configuration error:\nfile.yaml:3: rules", "error")
    [line] = out.getvalue().splitlines()
    record = json.loads(line)
    assert (record["level"], record["msg"]) == (
        "error",
        "deliberate: configuration error:\nfile.yaml:3: rules",
    )


def test_a_person_at_a_terminal_reads_text_and_a_journal_gets_json() -> None:
    assert log_format(None, None, serving=True, terminal=True) == "text"
    assert log_format(None, "info", serving=False, terminal=True) == "text"
    assert log_format(None, None, serving=True, terminal=False) == "json"
    assert log_format(None, "info", serving=False, terminal=False) == "json"
    assert log_format(None, None, serving=False, terminal=False) == "text"
    assert log_format("json", None, serving=False, terminal=True) == "json"  # as asked
