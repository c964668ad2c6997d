"""A real Redis Cluster of three primaries for the module, whatever DELIBERATE_TEST_CLUSTER
says: these tests are about the cluster itself."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.redis_cluster import LocalCluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"), masters=3)
    yield cluster
    cluster.stop()
