"""The votes agreement reads (SPEC §6, issue 34 §3): the counted labels, plus the "not aligned" each completion of
a document pair implies on every cell its completer left unlabelled — the same evidence the gold reads
(:mod:`annotation.services.review.gold_reading`), so two completions of one article are compared on every cell
both saw. Rows for the project-wide statistics (:func:`vote_rows`), and each completer's class of every cell of
the document pairs two or more completed (:func:`completed_cells`)."""
from __future__ import annotations

from collections import defaultdict
from sys import intern

from django.db.models import Count

from annotation.label_schemes import value_classes
from annotation.models import Adjudication, ArticleCompletion, CandidatePair, Membership, Project, Sentence
from annotation.services.review.gold_reading import DocKey, counted_labels, not_value


def _sentence_counts(documents: set[int]) -> defaultdict[int, int]:
    """Sentences per document of ``documents`` (0 for a document without any)."""
    return defaultdict(int, Sentence.objects.filter(document_id__in=documents).order_by().values_list("document_id")
                       .annotate(n=Count("id")))


def counted_rows(project: Project) -> list[tuple]:
    """The counted labels as agreement rows ``(pair id, annotator, value, ratings)`` (a scheme without
    gold classes: no completion implies anything). Read in batches, each username and value one string
    object however many rows hold it (``sys.intern``; a million labels' rows: hundreds of MB less)."""
    return [(pid, intern(user), intern(value), ratings)
            for pid, user, value, ratings in counted_labels(project).values_list(
                "pair_id", "annotator__username", "value", "ratings").iterator(chunk_size=20_000)]


def vote_rows(project: Project) -> list[tuple]:
    """Every vote the gold reads, explicit and implied, as agreement rows ``(item, annotator, value,
    ratings)``: the counted labels (item: the pair id) plus, for each completion of a document pair,
    the completer's implied "not" on every cell they gave no label — a pair with someone's label (item:
    its id) or a sentence pair nobody labelled (item: ``"c<complex doc>-s<simple doc>:<ci>,<si>"``).
    Agreement over these counts the cells two completers both saw, not aligned included (issue 34 §3).

    Issue 37: at a million gold votes this held 1.1 GB; each pair's labellers are a tuple (not a set), each
    document pair's covered cells one integer's bits (not a set of index pairs)."""
    from annotation.models import key_indices

    rows = counted_rows(project)
    completions: dict[DocKey, list[str]] = defaultdict(list)
    for c, s, user in (ArticleCompletion.objects.filter(article__project=project)
                       .exclude(annotator_id__in=Membership.objects.excluded(project))
                       .values_list("complex_document_id", "simple_document_id", "annotator__username")):
        completions[(c, s)].append(intern(user))
    if not completions:
        return rows
    implied = not_value(project)
    labelled: dict[int, tuple[str, ...]] = {}
    for pid, user, *_ in rows:
        labelled[pid] = labelled.get(pid, ()) + (user,)
    sizes = _sentence_counts({d for key in completions for d in key})
    covered: dict[DocKey, int] = defaultdict(int)  # bit ci * (simple size) + si: the cell has a pair with evidence
    adjudicated = set(Adjudication.objects.filter(pair__article__project=project).values_list("pair_id", flat=True))
    # the completed document pairs' sentence pairs (by their complex documents: an index read), not every pair
    # with evidence by id (an IN list of the project's every labelled pair: 2 s at 1M)
    for pid, c, s, complex_key, simple_key in (CandidatePair.objects.filter(complex_document_id__in={c for c, _ in completions})
                                               .values_list("pk", "complex_document_id", "simple_document_id",
                                                            "complex_key", "simple_key").iterator(chunk_size=20_000)):
        if (c, s) not in completions or (pid not in labelled and pid not in adjudicated):
            continue
        width = sizes[s]
        for ci in key_indices(complex_key):
            for si in key_indices(simple_key):
                if ci < sizes[c] and si < width:  # (an index past its document's end covers no cell)
                    covered[(c, s)] |= 1 << (ci * width + si)
        already = labelled.get(pid, ())
        rows.extend((pid, user, implied, None) for user in completions[(c, s)] if user not in already)
    for (c, s), users in completions.items():
        width, bits = sizes[s], covered.get((c, s), 0)
        for ci in range(sizes[c]):
            for si in range(width):
                if not bits >> (ci * width + si) & 1:
                    rows.extend((f"c{c}-s{s}:{ci},{si}", user, implied, None) for user in users)
    return rows


def completed_cells(project: Project) -> dict[DocKey, dict[tuple[int, int], dict[str, str]]]:
    """``{(complex doc, simple doc): {(ci, si): {completer: class}}}`` of every document pair two or
    more annotators completed: each completer's class of every sentence pair — their label's (a 1:1
    pair's over an n:m one's), else the "not" their completion implies. Per-document-pair agreement
    reads it (issue 34 §3)."""
    from annotation.models import key_indices

    completers: dict[DocKey, dict[int, str]] = defaultdict(dict)
    for c, s, user_id, user in (ArticleCompletion.objects.filter(article__project=project)
                                .exclude(annotator_id__in=Membership.objects.excluded(project))
                                .values_list("complex_document_id", "simple_document_id", "annotator_id",
                                             "annotator__username")):
        completers[(c, s)][user_id] = user
    completers = {key: users for key, users in completers.items() if len(users) >= 2}
    if not completers:
        return {}
    classes = value_classes(project.label_scheme)
    sizes = _sentence_counts({d for key in completers for d in key})
    out = {key: {(ci, si): {user: "not" for user in users.values()} for ci in range(sizes[key[0]])
                 for si in range(sizes[key[1]])} for key, users in completers.items()}
    rows = (counted_labels(project).filter(pair__complex_document_id__in={k[0] for k in completers})
            .values_list("pair__complex_document_id", "pair__simple_document_id", "annotator_id", "pair__complex_key",
                         "pair__simple_key", "value"))
    for c, s, user_id, complex_key, simple_key, value in sorted(rows, key=lambda r: len(r[3]) + len(r[4]),
                                                                reverse=True):  # 1:1 pairs last: they decide
        user = completers.get((c, s), {}).get(user_id)
        if user is None:
            continue
        for ci in key_indices(complex_key):
            for si in key_indices(simple_key):
                if (ci, si) in out[(c, s)]:
                    out[(c, s)][(ci, si)][user] = classes.get(value, "not")
    return out
