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
