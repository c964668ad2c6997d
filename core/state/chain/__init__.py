"""The mutation log as a hash chain (tamper-evident): each record commit.lua appends carries
``chain`` = ``<n>:<hash>``, its number in the chain and the SHA-1 of its predecessor's hash
and its own fields (``links``); the compaction mark keeps the link of the last record
trimmed. ``verify`` walks the chain and names the first record that breaks it; ``head``
signs the chain's head (HMAC-SHA256) so that it can be anchored outside Redis and checked
later against the log."""

from core.state.chain.head import SIGNING_KEY_ENV, Head, HeadCheck, check_head, signing_key
from core.state.chain.links import Link, genesis, link_hash, parse_link
from core.state.chain.verify import Break, ChainReport, verify_chain

__all__ = [
    "SIGNING_KEY_ENV",
    "Break",
    "ChainReport",
    "Head",
    "HeadCheck",
    "Link",
    "check_head",
    "genesis",
    "link_hash",
    "parse_link",
    "signing_key",
    "verify_chain",
]
