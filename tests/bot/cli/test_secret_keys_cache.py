"""``state get`` asks whether a key is secret of a cache (``bot.commands.secret_keys``) when
the config and what read it are as they were: a change to a config file, an include, a
variable it names or the cache itself is seen at the next command, and a config that has
become broken is still a configuration error. Run in this process, on a real Redis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.commands import secret_keys
from core.gateway.policy import Policy, PolicyConfig
from tests.bot.cli.process import run

TOKEN = "Zq-cached-s3cr3t"
SECRET = 'policy: {keys: [{pattern: "vault.*", type: string, secret: true}]}\n'
PLAIN = 'policy: {keys: [{pattern: "vault.*", type: string, secret: false}]}\n'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache directory, of this test alone; files count as settled at once (the
    tests change each file's size, which the times of a file written in the same clock tick
    would not show)."""
    monkeypatch.delenv("DELIBERATE_CACHE_DIR", raising=False)  # (the suite sets its own)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(secret_keys, "SETTLE_SEC", 0.0)
    return secret_keys.cache_file()


@pytest.fixture
def config(tmp_path: Path, capsys: pytest.CaptureFixture[str], workspace: str) -> Path:
    path = tmp_path / "vault.yaml"
    path.write_text(SECRET, encoding="utf-8")
    argv = ("--config", str(path), "state", "set", "vault.token", TOKEN, "--actor", "admin:a")
    assert run(capsys, workspace, *argv)[0] == 0
    return path


def get(capsys: pytest.CaptureFixture[str], workspace: str, config: Path) -> tuple[int, str]:
    code, out, err = run(capsys, workspace, "--config", str(config), "state", "get", "vault.token")
    return code, out + err


def test_the_answer_is_kept_and_read_again(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    for _ in range(2):  # the first computes it and keeps it, the second reads it
        code, said = get(capsys, workspace, config)
        assert code == 0 and TOKEN not in said and "(secret)" in said
    [entry] = json.loads(cache.read_text(encoding="utf-8"))["entries"].values()
    assert entry["rules"][0] == ["vault.*", True]
    assert str(config.absolute()) in entry["stamps"]
    assert any(path.endswith("default.yaml") for path in entry["stamps"])


def test_an_edited_config_is_read_again(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    assert TOKEN not in get(capsys, workspace, config)[1] and cache.exists()
    config.write_text(PLAIN, encoding="utf-8")
    assert TOKEN in get(capsys, workspace, config)[1]
    config.write_text(SECRET + "# secret again\n", encoding="utf-8")
    assert TOKEN not in get(capsys, workspace, config)[1]


def test_an_edited_include_is_read_again(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    included = config.with_name("included.yaml")
    included.write_text("version: 1\n", encoding="utf-8")
    config.write_text(f"include: [{included.name}]\n", encoding="utf-8")
    assert TOKEN in get(capsys, workspace, config)[1]  # the shipped policy: not secret
    assert str(included.absolute()) in cache.read_text(encoding="utf-8")
    included.write_text(SECRET, encoding="utf-8")
    assert TOKEN not in get(capsys, workspace, config)[1]


def test_a_config_broken_since_is_a_configuration_error_naming_the_field(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    assert get(capsys, workspace, config)[0] == 0 and cache.exists()
    config.write_text(SECRET.replace("true", "maybe"), encoding="utf-8")
    code, said = get(capsys, workspace, config)
    assert code == 2 and "configuration error" in said and TOKEN not in said
    assert f"{config}:1" in said and "secret" in said


def test_a_variable_the_config_names_is_read_again(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VAULT_SECRET", raising=False)
    config.write_text(SECRET.replace("true", '"${VAULT_SECRET:-true}"'), encoding="utf-8")
    code, said = get(capsys, workspace, config)
    assert code == 0 and TOKEN not in said and "(secret)" in said
    monkeypatch.setenv("VAULT_SECRET", "false")
    assert TOKEN in get(capsys, workspace, config)[1]
    monkeypatch.setenv("VAULT_SECRET", "true")
    assert TOKEN not in get(capsys, workspace, config)[1]
    [entry] = json.loads(cache.read_text(encoding="utf-8"))["entries"].values()
    assert "VAULT_SECRET" in entry["env"]["names"]  # its value's digest only, salted
    assert "true" not in json.dumps(entry["env"]) and "true" not in json.dumps(entry["stamps"])


def test_a_file_too_young_to_tell_apart_is_not_kept(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(secret_keys, "SETTLE_SEC", 3600.0)  # the config is younger than that
    assert TOKEN not in get(capsys, workspace, config)[1]
    assert not cache.exists()


@pytest.mark.parametrize(
    "spoiled",
    [
        "not json at all",
        json.dumps({"format": 1, "entries": {"x": "y"}}),
        json.dumps({"format": 1, "entries": []}),
        json.dumps([1, 2, 3]),
    ],
)
def test_a_spoiled_cache_is_ignored_and_written_anew(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path, spoiled: str
) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text(spoiled, encoding="utf-8")
    code, said = get(capsys, workspace, config)
    assert code == 0 and TOKEN not in said and "(secret)" in said
    assert json.loads(cache.read_text(encoding="utf-8"))["format"] == 1


def test_a_cache_that_says_otherwise_than_the_files_is_not_believed(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    """An entry whose stamps do not match the files (a module edited since, a file
    replaced) is read again from the config, whatever rules it holds."""
    assert TOKEN not in get(capsys, workspace, config)[1]
    kept = json.loads(cache.read_text(encoding="utf-8"))
    [entry] = kept["entries"].values()
    entry["rules"] = [["vault.*", False]]
    some_module = next(p for p in entry["stamps"] if p.endswith(".py"))
    entry["stamps"][some_module][1] -= 1  # its mtime
    cache.write_text(json.dumps(kept), encoding="utf-8")
    assert TOKEN not in get(capsys, workspace, config)[1]


def test_old_entries_give_way_to_new_ones(
    capsys: pytest.CaptureFixture[str], workspace: str, config: Path, cache: Path
) -> None:
    for n in range(secret_keys.CACHE_ENTRIES + 2):
        code, _, _ = run(capsys, f"{workspace}-{n}", "--config", str(config), "state", "get", "k")
        assert code == 1  # not set in that workspace
    assert (
        len(json.loads(cache.read_text(encoding="utf-8"))["entries"]) == secret_keys.CACHE_ENTRIES
    )


PATTERN = st.text("ab*?[]!", min_size=1, max_size=6)


@given(
    st.lists(st.tuples(PATTERN, st.booleans()), max_size=5),
    st.lists(st.text("ab]![", max_size=4), min_size=1, max_size=5),
)
def test_the_kept_rules_answer_as_the_policy_does(
    rules: list[tuple[str, bool]], keys: list[str]
) -> None:
    keys_config = [{"pattern": p, "type": "string", "secret": s} for p, s in rules]
    policy = Policy(PolicyConfig.model_validate({"keys": keys_config}))
    for key in keys:
        assert secret_keys._first_match(rules, key) == policy.is_secret(key)


def test_its_own_directory_wins_over_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("DELIBERATE_CACHE_DIR", str(tmp_path / "own"))
    assert secret_keys.cache_file() == tmp_path / "own" / "secret-keys.json"
    monkeypatch.delenv("DELIBERATE_CACHE_DIR")
    assert secret_keys.cache_file() == tmp_path / "xdg" / "deliberate" / "secret-keys.json"
