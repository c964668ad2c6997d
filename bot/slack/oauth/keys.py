"""Every Redis key name of Slack's installations and OAuth states, built in one place.

All share the hash tag ``{deliberate:slack}`` (one Redis Cluster slot, so a transaction may
span them), then the app's client id, so two Slack apps on one Redis never meet:

    {deliberate:slack}:<client_id>:team:<enterprise_id>:<team_id>:history   hash of records
    {deliberate:slack}:<client_id>:team:<enterprise_id>:<team_id>:latest    hash, derived
    {deliberate:slack}:<client_id>:state:<state>                             string, with PX
    {deliberate:slack}:<client_id>:states            sorted set: state -> expiry (ms), with PX

An absent id is the empty string (an org-wide install has no team; a team outside Enterprise
Grid no enterprise). Ids are percent-encoded, so no id can reach into another's keys."""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["TAG", "OAuthKeys"]

TAG = "{deliberate:slack}"


def _part(value: str | None) -> str:
    return quote(value or "", safe="")


class OAuthKeys:
    def __init__(self, client_id: str) -> None:
        if not client_id:
            raise ValueError("a Slack client id is needed to name the installation keys")
        self.prefix = f"{TAG}:{_part(client_id)}"

    @property
    def every_key(self) -> str:
        """SCAN MATCH pattern of all this app's keys (the tag's braces escaped)."""
        return self.prefix.replace("{", "\\{").replace("}", "\\}") + ":*"

    def team(self, enterprise_id: str | None, team_id: str | None) -> tuple[str, str]:
        """The installation (team or org) hashes: (latest, history)."""
        base = f"{self.prefix}:team:{_part(enterprise_id)}:{_part(team_id)}"
        return f"{base}:latest", f"{base}:history"

    def state(self, state: str) -> str:
        return f"{self.prefix}:state:{state}"

    @property
    def states(self) -> str:
        """The index of the outstanding states, by expiry (``RedisOAuthStateStore``)."""
        return f"{self.prefix}:states"
