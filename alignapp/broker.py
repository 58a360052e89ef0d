"""kombu's filesystem transport with atomic publishing, for the embedded default's broker.

kombu writes a message file in place (open, lock, write); a worker polling the folder renames the
file away without taking the lock, so it can take a file that is still empty, fail to decode it and
stop ("Unrecoverable error: JSONDecodeError") — and the message is lost. Here a message is written
under a temporary name the reader ignores and renamed into place when complete (``os.replace`` is
atomic), so a reader only ever sees whole messages. Registered for ``filesystem://`` URLs by
:mod:`alignapp.celery`.
"""
from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".part"  # "<n>_<uuid>.<queue>.msg.part": not "<queue>.msg", so readers skip it
        try:
            with open(partial, "wb") as fh:
                fh.write(dumps(payload).encode("utf-8"))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
