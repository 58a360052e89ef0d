"""Small builders for test data (plain functions; no factory library needed at this size)."""
from __future__ import annotations

from django.contrib.auth import get_user_model

from annotation.models import Article, Document, LabelScheme, Membership, Paragraph, Project, Sentence

User = get_user_model()


def make_user(username: str, *, staff: bool = False, researcher: bool = False) -> User:
    from django.contrib.auth.models import Group

    from annotation.permissions import RESEARCHERS_GROUP

    user = User.objects.create_user(username=username, password="pw-" + username, is_staff=staff, is_superuser=staff)
    if researcher:
        user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    return user


def make_project(name: str = "P", *, scheme: str = "aligned-partial-not", language: str = "en", **members: str) -> Project:
    """``make_project("P", alice="researcher", bob="annotator")`` (users must exist)."""
    project = Project.objects.create(name=name, language=language, label_scheme=LabelScheme.objects.get(slug=scheme))
    for username, role in members.items():
        Membership.objects.create(project=project, user=User.objects.get(username=username), role=role)
    return project


def make_document(article: Article, level: str, paragraphs: list[list[str]], rank: int = 0) -> Document:
    doc = Document.objects.create(article=article, level=level, rank=rank)
    index = 0
    for p_index, sentences in enumerate(paragraphs):
        paragraph = Paragraph.objects.create(document=doc, index=p_index)
        for text in sentences:
            Sentence.objects.create(document=doc, paragraph=paragraph, index=index, text=text)
            index += 1
    return doc


def make_article(project: Project, title: str, levels: dict[str, list[list[str]]]) -> Article:
    """``levels`` maps level name → paragraphs of sentences, most complex first."""
    article = Article.objects.create(project=project, title=title)
    for rank, (level, paragraphs) in enumerate(levels.items()):
        make_document(article, level, paragraphs, rank=rank)
    return article


def make_pair(run=None, **fields):
    """A sentence pair (``fields`` as for ``CandidatePair``); with ``run``, that run predicts it with
    the given score and label (the pair then shows them, as after a run). An existing pair with the
    same identity is reused."""
    from annotation.models import CandidatePair, Prediction

    identity = {k: fields.pop(k) for k in ("complex_document", "simple_document", "complex_key", "simple_key")}
    pair, created = CandidatePair.objects.get_or_create(**identity, defaults=fields)
    if run is not None:
        predicted = {"score": fields.get("score", pair.score), "predicted_label": fields.get("predicted_label", pair.predicted_label)}
        Prediction.objects.update_or_create(run=run, pair=pair, defaults={**predicted, "features": fields.get("features", {})})
        if not created:
            CandidatePair.objects.filter(pk=pair.pk).update(**predicted)
            pair.refresh_from_db()
    return pair


def predict(run, pairs) -> list:
    """``run`` predicts each of ``pairs`` (saved pairs) with the pair's own score and label."""
    from annotation.models import Prediction

    pairs = list(pairs)
    Prediction.objects.bulk_create([Prediction(run=run, pair=p, score=p.score, predicted_label=p.predicted_label,
                                               features=p.features) for p in pairs], ignore_conflicts=True)
    return pairs
