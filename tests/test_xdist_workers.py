"""Each pytest-xdist worker's own db on a shared server (tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import LOCAL_REDIS, worker_db_url


def test_worker_n_takes_the_db_n_below_the_url_s() -> None:
    assert worker_db_url(LOCAL_REDIS, 0) == LOCAL_REDIS  # alone, or gw0: as without xdist
    assert worker_db_url(LOCAL_REDIS, 1) == "redis://127.0.0.1:6379/14"
    assert worker_db_url("rediss://u:p@h:6380/8?ssl_cert_reqs=none", 3) == (
        "rediss://u:p@h:6380/5?ssl_cert_reqs=none"
    )
    assert worker_db_url("redis://h:6379?db=4", 1) == "redis://h:6379/3"
    assert worker_db_url("unix:///run/redis.sock?db=9", 2) == "unix:///run/redis.sock?db=7"


def test_no_db_below_zero() -> None:
    with pytest.raises(pytest.UsageError, match="gw1 takes db 0 - 1"):
        worker_db_url("redis://h:6379", 1)
