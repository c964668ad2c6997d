"""The cycle collector's pause: off inside, back as it was once the last pause open at once
ends, across threads, errors and a collector someone else turned off."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.paused_gc import paused_gc


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_off_inside_and_on_after_even_on_an_error() -> None:
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


@given(st.lists(st.booleans(), max_size=12))
def test_pauses_opened_and_closed_in_any_order_end_with_the_collector_on(
    opens: list[bool],
) -> None:
    """``True`` opens a pause, ``False`` closes the oldest still open (as threads may):
    the collector is off while any is open, and on once none is."""
    gc.enable()
    open_ = []
    for opening in opens:
        if opening:
            pause = paused_gc()
            pause.__enter__()
            open_.append(pause)
        elif open_:
            open_.pop(0).__exit__(None, None, None)
        assert gc.isenabled() == (not open_)
    while open_:
        open_.pop(0).__exit__(None, None, None)
    assert gc.isenabled()


def test_threads_pausing_at_once_leave_it_on_when_the_last_is_done() -> None:
    gc.enable()
    inside = threading.Barrier(3, timeout=10)
    seen: list[bool] = []

    def pause(after: threading.Event) -> None:
        with paused_gc():
            inside.wait()
            seen.append(gc.isenabled())
            after.wait()

    first_out, second_out = threading.Event(), threading.Event()
    threads = [threading.Thread(target=pause, args=(e,)) for e in (first_out, second_out)]
    for thread in threads:
        thread.start()
    inside.wait()  # both inside
    first_out.set()
    threads[0].join(timeout=10)
    assert not threads[0].is_alive() and not gc.isenabled()  # the second is still inside
    second_out.set()
    threads[1].join(timeout=10)
    assert not threads[1].is_alive()
    assert seen == [False, False] and gc.isenabled()


def test_a_child_forked_during_a_pause_has_the_collector_back() -> None:
    """The pause is held by a thread the child does not have (RQ forks its scheduler from
    a worker whose threads compact): the child starts with no pause held."""
    gc.enable()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with paused_gc():
            held.set()
            release.wait(timeout=10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(timeout=10) and not gc.isenabled()
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the child: what it finds, then a pause of its own
            seen = [gc.isenabled()]
            with paused_gc():
                seen.append(gc.isenabled())
            seen.append(gc.isenabled())
            os.write(write, bytes(seen))
            os._exit(0)
        os.close(write)
        said = os.read(read, 16)
        os.close(read)
        assert os.waitpid(child, 0)[1] == 0
        assert list(said) == [True, False, True]
        assert not gc.isenabled()  # the parent's pause still holds
    finally:
        release.set()
        holder.join(timeout=10)
    assert gc.isenabled()
