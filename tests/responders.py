"""A responder for tests that need an answer asked for as a model's is: the offline one's
answer, said not to be made in this process, so the runtime hears the save before it first
and nothing waits for the save after it (``Runtime._made_here``)."""

from __future__ import annotations

from core.llm.offline_responder import OfflineResponder

__all__ = ["AsAModel"]


class AsAModel(OfflineResponder):
    """The offline responder, asked for its answer as a model is."""

    in_process = False
