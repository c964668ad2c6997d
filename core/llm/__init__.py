"""Stateless model calls: every call is one PromptFrame, sent as exactly one system and one
user message, checked by a guard and audited. No transcript ever reaches a model.

The client lives in ``core.llm.chat`` (it imports ``openai``, which takes a second to load:
import it where a model is actually used)."""

from core.llm.frame import PromptFrame, TranscriptReplay, guard

__all__ = ["PromptFrame", "TranscriptReplay", "guard"]
