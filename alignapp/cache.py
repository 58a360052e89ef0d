"""The caches' backends.

``RedisCache``: Django's Redis cache, with one client per connection pool instead of one per call
(issue 37). Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` on every get/set/incr
(its constructor fills a table of about 170 response callbacks): three cache calls of a queue submit cost
more CPU than the rest of the cache work together. A ``redis.Redis`` is thread-safe (it borrows a
connection from its pool for each command), so one per pool serves every thread of the process.

``LockingDatabaseCache``: the cache of the sign-in limits when no Redis is configured: Django's database cache, shared by
every web process on the same database (the embedded SQLite file included), with an atomic ``incr``.

Django's own ``DatabaseCache.incr`` reads and writes in two steps, so two processes counting the same
failure at once could both write the same number; here the row is locked first (an ``UPDATE`` that
changes nothing: SQLite's write lock, PostgreSQL's row lock), then read and written in one transaction.
The table is made by ``createcachetable``, which runs after every ``migrate`` (see ``annotation.apps``).

It never evicts a live entry. Django's ``DatabaseCache`` culls a third of its rows (by key order) once
past ``MAX_ENTRIES`` (300): 330 sign-in attempts with made-up user names from one address reset a
victim's counter that way. Here a full table drops only expired rows, so the counters live out their
window; the table stays bounded by the rate of attempts times the window (every key has a TTL).
"""
from __future__ import annotations

import base64
import pickle
from typing import Any

from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from django.db import connections, router, transaction

#: The table of the shared cache (``CACHES["limits"]["LOCATION"]``).
TABLE = "alignapp_cache"


class _ClientPerPool(RedisCacheClient):
    """Django's Redis client that keeps the ``redis.Redis`` it builds for each connection pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:  # two threads may both build one: either is fine, the pool is the same
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` building one client per pool (module docstring)."""

    def __init__(self, server: str, params: dict) -> None:
        super().__init__(server, params)
        self._class = _ClientPerPool


class LockingDatabaseCache(DatabaseCache):
    """``DatabaseCache`` whose ``incr``/``decr`` hold the row's lock between reading and writing."""

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        db = router.db_for_write(self.cache_model_class)
        table = connections[db].ops.quote_name(self._table)
        stored_key = self.make_and_validate_key(key, version=version)
        with transaction.atomic(using=db):
            with connections[db].cursor() as cursor:
                cursor.execute(f"UPDATE {table} SET cache_key = cache_key WHERE cache_key = %s", [stored_key])
            value = self.get(key, version=version)
            if value is None:
                raise ValueError(f"Key '{key}' not found")
            new_value = value + delta
            with connections[db].cursor() as cursor:
                cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s",
                               [self._encoded(new_value), stored_key])
        return new_value

    def _cull(self, db: str, cursor: Any, now: Any, num: int) -> None:
        """Delete the expired rows only (never ``clear()``, never live rows by key order)."""
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        cursor.execute(f"DELETE FROM {table} WHERE {connection.ops.quote_name('expires')} < %s",
                       [connection.ops.adapt_datetimefield_value(now)])

    def _encoded(self, value: Any) -> str:
        return base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
