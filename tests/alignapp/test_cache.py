"""The sign-in limits' database cache (``alignapp/cache.py``) keeps its counters whatever else is stored
(issue 36 item 12): Django's ``DatabaseCache`` culled a third of its rows past 300 entries, so flooding
made-up user names reset a victim's counter and let 18 more passwords be tried where 2 were allowed."""
from __future__ import annotations

import pytest
from django.core.cache import caches

from alignapp.cache import LockingDatabaseCache
from annotation.services.projects import accounts


@pytest.fixture
def limits(settings, db):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 5
    settings.LOGIN_FAILURE_WINDOW_MINUTES = 15
    settings.LOGIN_DELAY_SECONDS = 10
    settings.LOGIN_DELAY_MAX_SECONDS = 40
    cache = caches["limits"]
    if not isinstance(cache, LockingDatabaseCache):
        pytest.skip("CACHE_URL is set: the sign-in limits are in Redis here")  # pragma: no cover - CI unsets it
    cache.clear()
    yield cache
    cache.clear()


def fail(username: str, address: str) -> int:
    wait = accounts.begin_sign_in(address, username)
    if wait == 0:
        accounts.login_failed(address, username)
    return wait


def test_flooding_made_up_user_names_does_not_reset_a_victims_counter(limits):
    for _ in range(3):
        assert fail("victim", "10.0.0.1") == 0
    assert accounts.login_blocked_for("10.0.0.9", "victim") > 0  # the victim's limit is reached
    for k in range(500):  # 500 made-up names (from many addresses): 1,000+ keys, past MAX_ENTRIES=300
        fail(f"made-up-{k}", f"10.1.{k // 250}.{k % 250}")
    assert limits._max_entries < 1000 <= 2 * 500
    assert accounts.login_blocked_for("10.0.0.9", "victim") > 0
    assert accounts.begin_sign_in("10.0.0.9", "victim") > 0  # the next password is not checked


def test_expired_rows_are_still_removed_when_the_table_is_full(limits, settings):
    limits.set("old", 1, timeout=0.001)
    import time

    time.sleep(0.01)
    for k in range(limits._max_entries + 5):
        limits.set(f"k{k}", k, timeout=60)
    assert limits.get("old") is None and limits.get("k0") == 0  # the live ones all kept
    assert all(limits.get(f"k{k}") == k for k in range(0, limits._max_entries + 5, 37))


# --- RedisCache: one client per pool (issue 37) ---------------------------------------------------------

def test_the_redis_cache_builds_one_client_per_pool_and_shares_it_across_threads(redis_url):
    """Django's backend built a ``redis.Redis`` on every call (a third of a queue submit's cache CPU): ours
    keeps one per pool, and it still reads and writes, from every thread, on a real Redis."""
    import threading

    from alignapp.cache import RedisCache

    cache = RedisCache(redis_url, {"KEY_PREFIX": "test-client-per-pool"})
    cache.clear()
    first = cache._cache.get_client()
    assert cache._cache.get_client() is first and cache._cache.get_client(write=True) is first
    cache.set("k", 1)
    seen = []

    def work() -> None:
        seen.append((cache.incr("k"), cache._cache.get_client() is first))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(n for n, _ in seen) == list(range(2, 10)) and all(same for _, same in seen)
    assert cache.get("k") == 9
    cache.clear()

