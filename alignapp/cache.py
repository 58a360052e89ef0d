"""The cache of the sign-in limits when no Redis is configured: Django's database cache, shared by
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
from django.db import connections, router, transaction

#: The table of the shared cache (``CACHES["limits"]["LOCATION"]``).
TABLE = "alignapp_cache"


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
