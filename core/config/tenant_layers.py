"""A tenant's own layer: what a listed Slack team or Discord server writes under its entry
(``policy``, ``beats``, ``rules``, ``actions``, ``deliberation``, ``perception``) merged on top
of the whole configuration, by the same rules as a file (``layers.py``), for that tenant's
workspace alone::

    tenants:
      slack:
        teams:
          - id: T0123ABCD
            roles: {moderator: {members: [slack:U0SARA]}}     # bindings of this team (tenants.py)
            policy:
              keys:
                - pattern: "decision.*"                 # before the shipped one: it decides
                  type: string
                  approval: {people: true, quorum: 2}
            rules:
                - id: announce
                when: {key: decision.*, op: set}
                then: [{action: log.write, args: {message: "{{ mutation.value }}"}}]

Every value keeps the file and line it came from, so an error in a tenant's section names
them, and the field as that file spells it (``tenants.slack.teams[0].policy.keys[0].type``)."""

from __future__ import annotations

from collections.abc import Iterator

from core.config.layers import Layer, Node, merge

__all__ = ["OWN_SECTIONS", "TenantAt", "tenant_layers"]

TenantAt = tuple[str, str, int]  # ("slack", "teams", 0): which entry of which listing

# what a tenant may set for its workspace alone (its role bindings are its ``roles``)
OWN_SECTIONS = ("policy", "beats", "rules", "actions", "deliberation", "perception")
_LISTS = (("discord", "servers"), ("slack", "teams"))


def tenant_layers(merged: Layer) -> Iterator[tuple[TenantAt, Layer]]:
    """For each listed tenant that writes a section of its own: where its entry is in
    ``merged`` and the whole configuration with its sections merged on top."""
    tenants = _child(merged.root, "tenants")
    for platform, listing in _LISTS:
        entries = _child(_child(tenants, platform), listing)
        if entries is None or not isinstance(entries.value, list):
            continue
        for index, entry in enumerate(entries.value):
            if not isinstance(entry.value, dict):
                continue  # an id alone
            own = {k: node for k, node in entry.value.items() if k in OWN_SECTIONS}
            if own:
                over = Layer(Node(own, entry.origin, source=entry.source))
                yield (platform, listing, index), merge(merged, over)


def _child(node: Node | None, key: str) -> Node | None:
    if node is None or not isinstance(node.value, dict):
        return None
    child = node.value.get(key)
    return child if isinstance(child, Node) else None
