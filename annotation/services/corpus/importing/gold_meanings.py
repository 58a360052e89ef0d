"""What an import's gold links mean (issue 18 §3), asked on the page, the API and the command.

* ``exhaustive`` — complete article pairs: every sentence pair the file does not link is "not
  aligned". The article pairs count as exhaustively annotated (``review.exhaustive``): training
  and the test metrics of model versions use them.
* ``sparse`` (the default) — the listed links are true; nothing is said about the others. The
  links are imported gold, but no article counts as complete.
* ``predictions`` — the links are an aligner's output: they become the predictions of an
  alignment run named after the file (``method`` ``import``), reviewed like any run; no gold.

``gold_labels`` (aligned / partial) are honoured; a link without one is stored as
:data:`~annotation.label_schemes.UNKNOWN_KIND` (Task 1 only), never as "aligned". Imported gold
becomes hidden test questions only with ``test_questions`` (default off).
"""
from __future__ import annotations

from collections import Counter

from django.utils import timezone

from annotation.label_schemes import UNKNOWN_KIND
from annotation.models import AlignmentRun, Project, Status
from annotation.services.corpus.importing.problems import CorpusImportError

EXHAUSTIVE, SPARSE, PREDICTIONS = "exhaustive", "sparse", "predictions"
GOLD_MEANINGS: tuple[str, ...] = (SPARSE, EXHAUSTIVE, PREDICTIONS)
DEFAULT_MEANING = SPARSE
IMPORT_METHOD = "import"  # the method of an alignment run that holds imported predictions

HELP = {
    SPARSE: "sparse: the listed links are true, nothing is said about the others (no article counts as complete)",
    EXHAUSTIVE: "exhaustive: complete article pairs, every unlinked sentence pair is not aligned",
    PREDICTIONS: "predictions: an aligner's output, stored as an alignment run named after the file (no gold)",
}


def check_meaning(meaning: str) -> None:
    """Raises CorpusImportError for a meaning not in :data:`GOLD_MEANINGS`."""
    if meaning not in GOLD_MEANINGS:
        raise CorpusImportError.one("", f"unknown gold_meaning {meaning!r}; choose one of: {', '.join(GOLD_MEANINGS)}",
                                    field="gold_meaning")


def truthy(value) -> bool:
    """A form's or a JSON body's yes (``true``, ``1``, ``on``, ``yes``, True)."""
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "true", "on", "yes")


def start_run(project: Project, names: list[str], token: str, actor=None) -> AlignmentRun:
    """The run that holds an import's predictions, named after the file(s)."""
    name = names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1} files)" if names else "import"
    return AlignmentRun.objects.create(project=project, method=IMPORT_METHOD, params={"file": name[:300], "import": token},
                                       queue="", status=Status.SUCCEEDED, progress=100.0, message=f"imported from {name}"[:500],
                                       created_by=actor, started_at=timezone.now(), finished_at=timezone.now())


def finish_run(run_id: int, articles: int, pairs: int) -> None:
    AlignmentRun.objects.filter(pk=run_id).update(pair_count=pairs, articles_total=articles, articles_done=articles)


def drop_run(project: Project, token: str) -> None:
    """Remove the run of a failed import's predictions."""
    AlignmentRun.objects.filter(project=project, method=IMPORT_METHOD, params__import=token).delete()


def summary(meaning: str, test_questions: bool, counts: Counter | dict,
            applied: dict[str, dict[str, int]] | None = None) -> str:
    """What was stored as what, under the meaning each article got (``applied``: meaning →
    ``{"articles", "links"}``, see ``writer.applied_meanings``), e.g. ``"215 links as sparse gold
    (Task 1 only: 150 without a kind), 0 articles complete, 0 test questions"``. Where the file
    states its own meaning (a wiki-manual article listed whole, a JSONL record's ``complete``) and
    that is not the one chosen, it says so: ``"… as exhaustive gold (…), as the file states
    (sparse was chosen), 12 articles complete, …"`` — or, for several, how many articles and links
    got each."""
    counts = Counter(counts)
    if meaning == PREDICTIONS:
        return f"{counts['predictions']} links as predictions of an alignment run (no gold), 0 articles complete, 0 test questions"
    links = sum(n for key, n in counts.items() if key not in ("complete", "tests", "predictions"))
    unknown = counts[UNKNOWN_KIND]
    kinds = ", ".join(f"{n} {value}" for value, n in sorted(counts.items())
                      if value not in ("complete", "tests", "predictions", UNKNOWN_KIND) and n)
    detail = []
    if kinds:
        detail.append(kinds)
    if unknown:
        detail.append(f"Task 1 only: {unknown} without a kind")
    shown = f" ({'; '.join(detail)})" if detail else ""
    tail = f"{counts['complete']} articles complete, {counts['tests'] if test_questions else 0} test questions"
    applied = {m: row for m, row in (applied or {}).items() if row.get("articles")}
    if set(applied) <= {meaning}:
        return f"{links} links as {meaning} gold{shown}, {tail}"
    if len(applied) == 1:
        return f"{links} links as {next(iter(applied))} gold{shown}, as the file states ({meaning} was chosen), {tail}"
    each = "; ".join(f"{m} in {row['articles']} articles ({row['links']} links)" for m, row in sorted(applied.items()))
    return f"{links} links as gold{shown}, as the file states per article ({meaning} was chosen): {each}; {tail}"


__all__ = ["DEFAULT_MEANING", "EXHAUSTIVE", "GOLD_MEANINGS", "HELP", "IMPORT_METHOD", "PREDICTIONS", "SPARSE",
           "check_meaning", "drop_run", "finish_run", "start_run", "summary", "truthy"]
