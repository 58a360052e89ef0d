"""Domain errors: the refusals a client can act on, each carrying its HTTP status and code.

Services raise them (``class AdjudicationError(DomainError, ValueError)``: the ``ValueError`` base keeps
older ``except ValueError`` callers working); the API's one exception handler
(:func:`annotation.views.refusals.exception_handler`) answers them with :meth:`DomainError.payload`
and :attr:`DomainError.status`, so no view catches them. No Django or DRF import here: services,
commands and workers import this module.
"""
from __future__ import annotations


class DomainError(Exception):
    """A refusal with the message shown to the client.

    ``status``: the HTTP status (400 unless a subclass says otherwise); ``code``: a stable machine
    code, in the body as ``"code"`` when set (None: the body has none, as the API always answered).
    """

    status: int = 400
    code: str | None = None

    def __init__(self, *args: object, code: str | None = None) -> None:
        """``code``: this refusal's own code, where one class refuses for several reasons (the class's otherwise)."""
        super().__init__(*args)
        if code is not None:
            self.code = code

    def payload(self) -> dict:
        """The response body: ``{"detail": message}``, ``"code"`` when the class has one."""
        body: dict = {"detail": str(self)}
        if self.code:
            body["code"] = self.code
        return body

    def field_message(self):
        """What the body says under an input's name when a view names the input this error is about
        (``{"mode": message}``, DRF's shape of a field error)."""
        return str(self)


class StoredConfigError(DomainError, ValueError):
    """A value of a project's stored config that the code reading it cannot use (stored before its key was checked);
    the project's settings page fixes it. The ``ValueError`` base keeps older ``except ValueError`` callers working."""

    code = "bad_project_config"


class ListedError(DomainError):
    """A refusal with several problems: ``messages`` lists them; the body carries ``errors`` too."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("; ".join(self.messages))

    def payload(self) -> dict:
        return {**super().payload(), "errors": list(self.messages)}


class BeingComputed(Exception):  # noqa: N818 - not an error: the answer of a request that a background job computes
    """A big project's figures that nothing has computed yet for the data as they are: a background job computes
    them (issue 37: seconds at a million pairs, which no request computes while it answers). Not a refusal: the API's
    one exception handler answers ``202 Accepted`` with :meth:`payload` and ``Retry-After``, and a page shows
    "computing … (started at …)" until the job has kept them.

    ``what``: the figures, as a sentence's subject ("the dashboard's figures"); ``job``: ``{"id", "kind",
    "status", "created_at", "started_at"}`` of the job computing them (times as ISO text or None)."""

    retry_after_s: int = 2

    def __init__(self, what: str, job: dict) -> None:
        super().__init__(f"{what} are being computed (job #{job['id']}, started at {job['created_at']}); ask again shortly")
        self.what = what
        self.job = job

    def payload(self) -> dict:
        """The 202 body: ``{"status": "computing", "detail", "job", "retry_after"}``."""
        return {"status": "computing", "detail": str(self), "job": self.job, "retry_after": self.retry_after_s}
