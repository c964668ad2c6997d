"""The workspaces a process keeps: each tenant's app and runtime built once, the most
recently used kept and no more; the directory that ``deliberate workspaces`` reads."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.app import App
from bot.chat.workspaces import Workspaces
from core.config.tenants import Tenant
from core.recently_used import Recent
from tests.conftest import delete_workspace


@given(st.lists(st.sampled_from("abcdefgh"), max_size=40), st.integers(1, 4))
def test_recent_keeps_the_most_recently_used(names: list[str], size: int) -> None:
    recent: Recent[int] = Recent(size)
    used: list[str] = []
    for index, name in enumerate(names):
        if recent.get(name) is None:
            recent.put(name, index)
        used = [n for n in used if n != name] + [name]
    assert len(recent) == min(size, len(set(names)))
    assert all(recent.get(name) is not None for name in used[-size:])


def test_a_workspace_is_built_once_and_strangers_do_not_pile_up(app: App) -> None:
    workspaces = Workspaces(app, use_env=False)
    workspaces._apps.size = workspaces._runtimes.size = 3
    tenants = [Tenant("discord", f"dm-{i}", f"{app.store.workspace}-dm-{i}") for i in range(6)]
    try:
        first = workspaces.runtime(tenants[0])
        assert workspaces.runtime(tenants[0]) is first
        for tenant in tenants[1:]:
            workspaces.runtime(tenant)
        assert len(workspaces._apps) == 3 and len(workspaces._runtimes) == 3
        seen = {w.workspace for w in workspaces.directory.seen()}
        assert {t.workspace for t in tenants} <= seen  # every one is listed, none kept
    finally:
        for tenant in tenants:
            delete_workspace(app.redis, tenant.workspace)


def test_rules_follow_the_config_not_what_the_directory_remembers(app: App) -> None:
    """A tenant listed once, touched, then delisted runs no rule: the directory records
    activity, never whether rules run."""
    gone = Tenant("discord", "130000000000000077", f"{app.store.workspace}-gone", configured=True)
    try:
        Workspaces(app, use_env=False).app(gone)
        assert gone.workspace not in app.rule_workspaces()
        assert app.rule_workspaces() == [app.store.workspace]  # the shipped config lists none
    finally:
        delete_workspace(app.redis, gone.workspace)
