"""``deliberate slack manifest``: the app's manifest is what Slack's app-manifest schema
(version 1) accepts, asks for the scope of every Web API method the code calls and every
event it takes (found in the code, not listed by hand), and sends every request to the one
path the server takes them on; Socket Mode has no URLs; a missing or unfit address is one
line and exit 2."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.slack.bolt import EVENTS
from bot.slack.manifest.scopes import BOT_EVENTS, COMMAND, FEATURES, NO_SCOPE, SCOPES, bot_scopes
from bot.slack.oauth.settings import DEFAULT_SCOPES, REDIRECT_PATH
from bot.slack.serve import EVENTS_PATH
from tests.bot.cli.process import run

ROOT = Path(__file__).resolve().parents[3]
URL = "https://bot.example.com"

# Slack's app-manifest schema, version 1: the fields each object may hold (it allows no
# others), and those it requires
ALLOWED = {
    "": {"display_information", "features", "oauth_config", "settings", "_metadata"},
    "display_information": {"name", "description", "background_color", "long_description"},
    "features": {"app_home", "bot_user", "shortcuts", "slash_commands", "unfurl_domains"},
    "features.app_home": {"home_tab_enabled", "messages_tab_enabled",
                          "messages_tab_read_only_enabled"},
    "features.bot_user": {"display_name", "always_online"},
    "oauth_config": {"redirect_urls", "scopes", "token_management_enabled", "pkce_enabled"},
    "oauth_config.scopes": {"bot", "user", "bot_optional", "user_optional"},
    "settings": {"allowed_ip_address_ranges", "event_subscriptions", "incoming_webhooks",
                 "interactivity", "org_deploy_enabled", "socket_mode_enabled",
                 "token_rotation_enabled"},
    "settings.event_subscriptions": {"request_url", "bot_events", "user_events"},
    "settings.interactivity": {"is_enabled", "request_url", "message_menu_options_url"},
}  # fmt: skip
COMMAND_FIELDS = {"command", "url", "description", "usage_hint", "should_escape"}


def slack_accepts(manifest: dict[str, Any]) -> list[str]:
    """What Slack's schema would refuse in ``manifest``, each as a line (none: it is fit)."""
    problems = []
    for where, allowed in ALLOWED.items():
        node: Any = manifest
        for part in filter(None, where.split(".")):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            problems.append(f"{where}: not a mapping")
        elif node is not None and set(node) - allowed:
            problems.append(f"{where or 'top'}: unknown {sorted(set(node) - allowed)}")
    name = manifest.get("display_information", {}).get("name", "")
    if not isinstance(name, str) or not 1 <= len(name) <= 35:
        problems.append("display_information.name: 1 to 35 characters, required")
    bot_user = manifest.get("features", {}).get("bot_user", {})
    if bot_user and not 1 <= len(bot_user.get("display_name", "")) <= 80:
        problems.append("features.bot_user.display_name: 1 to 80 characters, required")
    for command in manifest.get("features", {}).get("slash_commands", []):
        if set(command) - COMMAND_FIELDS or not {"command", "description"} <= set(command):
            problems.append(f"slash command {command}: fields")
        if not re.fullmatch(r"/\S{1,31}", command.get("command", "")):
            problems.append("slash command: /NAME, 2 to 32 characters")
    urls = [
        *[c.get("url") for c in manifest.get("features", {}).get("slash_commands", [])],
        manifest.get("settings", {}).get("event_subscriptions", {}).get("request_url"),
        manifest.get("settings", {}).get("interactivity", {}).get("request_url"),
    ]
    problems += [f"{u}: not http(s)" for u in urls if u and not re.match(r"https?://", u)]
    if "is_enabled" not in manifest.get("settings", {}).get("interactivity", {"is_enabled": 1}):
        problems.append("settings.interactivity.is_enabled: required")
    for scope in [s for kind in manifest["oauth_config"]["scopes"].values() for s in kind]:
        if not isinstance(scope, str) or len(scope) > 50:
            problems.append(f"scope {scope!r}")
    return problems


def manifest_of(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run(capsys, "local", "slack", "manifest", *argv)
    assert (code, err) == (0, "")
    return yaml.safe_load(out)  # type: ignore[no-any-return]


def web_api_calls() -> set[str]:
    """Every Web API method the code calls on a Slack client (``client.chat_postMessage(``
    is ``chat.postMessage``), found in its source."""
    found = set()
    for folder in ("bot", "connectors", "rules"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                family, _, method = node.func.attr.partition("_")
                known = {"chat", "users", "conversations", "usergroups", "team", "views",
                         "auth", "reactions", "files", "pins", "bookmarks", "emoji"}  # fmt: skip
                if family in known and method and method[0].islower():
                    found.add(f"{family}.{method}")
    return found


def test_the_code_calls_the_methods_the_scan_finds() -> None:
    # the scan works: these are called today
    assert {"chat.postMessage", "chat.update", "team.info", "views.open"} <= web_api_calls()


def test_every_web_api_method_the_code_calls_has_its_scope() -> None:
    unmapped = web_api_calls() - set(SCOPES) - set(NO_SCOPE)
    assert unmapped == set(), (
        f"add these to bot/slack/manifest/scopes.py's SCOPES: {sorted(unmapped)}"
    )
    used = {SCOPES[m] for m in web_api_calls() if m in SCOPES}
    assert used <= set(bot_scopes()) == set(DEFAULT_SCOPES)


def test_it_subscribes_to_every_event_the_adapter_takes(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = manifest_of(capsys, "--url", URL)
    subscribed = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    for event in EVENTS:
        assert any(s == event or s.startswith(f"{event}.") for s in subscribed), event
    assert subscribed == set(BOT_EVENTS)
    granted = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {SCOPES[event] for event in subscribed} | {SCOPES[COMMAND]} <= granted


def test_http_mode_sends_commands_clicks_and_events_to_the_events_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = manifest_of(capsys, "--url", URL + "/")
    assert slack_accepts(manifest) == []
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == COMMAND
    urls = {
        command["url"],
        manifest["settings"]["event_subscriptions"]["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
    }
    assert urls == {URL + EVENTS_PATH}
    assert manifest["settings"]["socket_mode_enabled"] is False
    assert "redirect_urls" not in manifest["oauth_config"]  # one team: no install redirect
    assert manifest["oauth_config"]["scopes"] == {"bot": list(DEFAULT_SCOPES)}


def test_socket_mode_has_no_url(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = manifest_of(capsys, "--socket", "--json")  # no address needed
    assert slack_accepts(manifest) == []
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert "http" not in json.dumps(manifest)


def test_an_app_many_teams_install_and_sign_in_add_their_redirects_and_scopes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = manifest_of(
        capsys, "--url", URL, "--oauth", "--signin", "--web-url", "https://web.example.com"
    )
    assert slack_accepts(manifest) == []
    oauth = manifest["oauth_config"]
    assert oauth["redirect_urls"] == [
        URL + REDIRECT_PATH,
        "https://web.example.com/signin/slack/callback",
    ]
    assert oauth["scopes"]["user"] == ["openid", "profile"]


def test_a_feature_left_out_leaves_out_its_scopes(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = manifest_of(capsys, "--url", URL, "--without", "groups", "--without", "orgs")
    granted = manifest["oauth_config"]["scopes"]["bot"]
    assert "usergroups:read" not in granted and "team:read" not in granted
    assert {SCOPES[m] for m in FEATURES["dms"]} <= set(granted)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ((), "HTTP mode needs the bot's public address"),
        (("--url", "http://bot.example.com"), "Slack sends requests to https addresses only"),
        (("--url", "bot.example.com"), "is not a web address"),
        (("--url", URL + "/slack/events"), "give the base address alone"),
        (("--socket", "--signin"), "--signin needs the web's address"),
        (("--url", URL, "--name", "x" * 36), "--name: Slack takes 1 to 35 characters"),
    ],
)
def test_a_missing_or_unfit_address_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...],
    said: str,
) -> None:  # fmt: skip
    monkeypatch.delenv("DELIBERATE_WEB_URL", raising=False)
    code, out, err = run(capsys, "local", "slack", "manifest", *argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and said in err


def test_a_loopback_address_may_be_plain_http(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = manifest_of(capsys, "--url", "http://127.0.0.1:3000")
    assert (
        manifest["settings"]["interactivity"]["request_url"] == "http://127.0.0.1:3000/slack/events"
    )


def test_the_checker_sees_what_slack_refuses() -> None:
    bad = {
        "display_information": {"name": ""},
        "features": {"slash_commands": [{"command": "deliberate"}], "extra": 1},
        "oauth_config": {"scopes": {"bot": ["x" * 51]}},
        "settings": {"interactivity": {"request_url": "ftp://x"}},
    }
    assert len(slack_accepts(bad)) == 7
