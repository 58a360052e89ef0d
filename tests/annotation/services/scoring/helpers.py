"""What the scoring tests share: hand-made pairs imported as a line-aligned corpus, a scoring job parsed and run
as the API and the command run it (no worker), a reference simplification corpus whose right answers are known."""
from __future__ import annotations

from annotation.models import CandidatePair, Job
from annotation.services.corpus.importing import import_files
from annotation.services.scoring import jobs as scoring
from workers.engine.types import AlignedPair, Alignment


def parallel(project, stem: str, pairs: list[tuple[str, str]]) -> list[CandidatePair]:
    """Import ``pairs`` as line-aligned ``stem.src``/``stem.dst`` files (imported 1:1 pairs)."""
    src = "\n".join(c for c, _ in pairs).encode()
    dst = "\n".join(s for _, s in pairs).encode()
    import_files(project, [(f"{stem}.src", src), (f"{stem}.dst", dst)], "parallel")
    return list(CandidatePair.objects.filter(article__project=project, article__title=stem).order_by("id"))


def start(project, kind: str, params: dict) -> Job:
    """A scoring job of ``kind`` parsed as the API and the command parse it, not queued."""
    return scoring.start_scoring(project, scoring.parse_request(project, kind, params), enqueue=False)


def run_job(project, kind: str, **params) -> Job:
    job = start(project, kind, params)
    scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    return job


def features(pair: CandidatePair) -> dict:
    pair.refresh_from_db()
    return pair.features


def alignment(links) -> Alignment:
    """A 1:1 alignment of ``(complex index, simple index)`` links, as a run would save it."""
    return Alignment("a", [AlignedPair(complex=(c,), simple=(s,), label="aligned", score=0.9) for c, s in links])


# A reference simplification corpus: complex-vocabulary passives → short sentences with common words.
ADJ_C = ["comprehensive", "substantial", "unprecedented", "controversial", "preliminary"]
NOUN_C = ["legislation", "infrastructure", "regulations", "negotiations", "expenditure"]
VERB_C = ["ratified", "promulgated", "scrutinized", "authorized", "postponed"]
ADJ_S = ["big", "new", "first", "hard", "early"]
NOUN_S = ["law", "roads", "rules", "talks", "costs"]
VERB_S = ["passed", "made", "checked", "allowed", "delayed"]
TAILS = ["", " following protracted deliberations", " despite considerable opposition from residents"]
REFERENCE = [
    (f"The {ADJ_C[i % 5]} {NOUN_C[(i // 5) % 5]} was {VERB_C[(2 * i) % 5]} by the municipal committee{TAILS[i % 3]}.",
     f"The city {VERB_S[(2 * i) % 5]} the {ADJ_S[i % 5] + ' ' if i % 2 else ''}{NOUN_S[(i // 5) % 5]}.")
    for i in range(30)
]
SIMPLIFICATION = ("The controversial legislation was ratified by the municipal committee following protracted deliberations.",
                  "The city passed the law.")
