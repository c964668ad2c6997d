"""The mutation log as a hash chain (tamper-evident): each record commit.lua appends carries
``chain`` = ``<n>:<hash>``, its number in the chain and the SHA-1 of its predecessor's hash
and its own fields (``links``). ``start`` says where the chain begins (record 1, or the link
the compaction mark kept, which also vouches for the checkpoint) and checks each record
against the one before it; ``verify`` walks the chain and names the first record that
breaks it; ``head`` signs the chain's head (HMAC-SHA256), with its start and the state at
it, so that it can be anchored outside Redis and checked later against the log; ``seal``
vouches once for a start an older release left unvouched."""

from core.state.chain.head import SIGNING_KEY_ENV, Head, HeadCheck, check_head, signing_key
from core.state.chain.links import Link, genesis, link_hash, parse_link
from core.state.chain.start import Break, ChainBroken, Start, read_start
from core.state.chain.verify import ChainReport, verify_chain

__all__ = [
    "SIGNING_KEY_ENV",
    "Break",
    "ChainBroken",
    "ChainReport",
    "Head",
    "HeadCheck",
    "Link",
    "Start",
    "check_head",
    "genesis",
    "link_hash",
    "parse_link",
    "read_start",
    "signing_key",
    "verify_chain",
]
