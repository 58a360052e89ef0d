"""Annotators' paragraph corrections as proposals: stored without changing anything, then accepted
(applied like a researcher's save) or rejected by a researcher."""
from __future__ import annotations

import pytest

from annotation.models import CandidatePair, ParagraphAlignment, ParagraphProposal, Prediction
from annotation.services.editing import paragraph_correction as pc
from annotation.services.editing import paragraph_proposals as proposals
from annotation.services.editing.article_alignment import AlignmentInputError, resolve_documents
from tests import factories
from tests.annotation.services.editing.test_paragraph_correction import COMPLEX, SIMPLE, active_links, candidates

MOVED = [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}, {"complex": 2, "simple": 1}]  # ¶2 → ¶1, not ¶2


@pytest.fixture
def article(project):
    return factories.make_article(project, "News", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return resolve_documents(article, None, None)


def test_an_annotators_save_is_a_proposal_and_changes_no_link(users, article, docs):
    saved = pc.save_paragraph_links(users["anna"], article, *docs, MOVED)
    assert saved["applied"] is False and (saved["added"], saved["removed"], saved["links"]) == (1, 1, 3)
    proposal = ParagraphProposal.objects.get()
    assert saved["proposal"]["id"] == proposal.pk and proposal.status == ParagraphProposal.PENDING
    assert proposal.links == [[0, 0], [1, 1], [2, 1]] and proposal.proposed_by == users["anna"]
    assert (proposal.complex_document, proposal.simple_document) == docs
    assert not ParagraphAlignment.objects.exists() and not Prediction.objects.exists()
    assert not CandidatePair.objects.exists()
    assert pc.paragraph_state(article, *docs)["origin"] == "computed"


def test_saving_again_replaces_the_pending_proposal_and_saving_the_links_in_force_withdraws_it(users, article, docs):
    pc.save_paragraph_links(users["anna"], article, *docs, MOVED)
    again = pc.save_paragraph_links(users["anna"], article, *docs, [{"complex": 0, "simple": 0}])
    assert ParagraphProposal.objects.get().links == [[0, 0]] and again["removed"] == 2
    same = pc.save_paragraph_links(users["anna"], article, *docs, [{"complex": c, "simple": c} for c in range(3)])
    assert same["proposal"] is None
    withdrawn = ParagraphProposal.objects.get()
    assert withdrawn.status == ParagraphProposal.REJECTED and "withdrawn" in withdrawn.note


def test_a_pending_proposal_shows_its_diff_against_the_links_in_force(users, article, docs):
    pc.save_paragraph_links(users["anna"], article, *docs, MOVED)
    [proposal] = proposals.proposals(article.project)
    assert proposals.diff(proposal) == {"added": [[2, 1]], "removed": [[2, 2]], "kept": 2}
    assert proposals.payload(proposal)["diff"]["added"] == [[2, 1]]
    assert list(proposals.proposals(article.project, proposed_by=users["rita"])) == []
    c, s = docs
    assert list(proposals.proposals(article.project, article_id=article.pk, complex_id=c.pk, simple_id=s.pk)) == [
        proposal]
    assert list(proposals.proposals(article.project, simple_id=c.pk)) == []  # the complex side is no simple one
    with pytest.raises(proposals.ProposalError, match="pending, accepted, rejected"):
        proposals.proposals(article.project, status="open")


def test_accepting_applies_the_links_as_a_direct_save_and_regenerates_candidates(users, article, docs):
    pc.save_paragraph_links(users["anna"], article, *docs, MOVED)
    proposal = ParagraphProposal.objects.get()
    result = proposals.accept(proposal, users["rita"], "right, ¶2 is simplified into ¶1")
    assert (result["saved"]["added"], result["saved"]["removed"]) == (1, 1)
    assert active_links(docs) == {(0, 0), (1, 1), (2, 1)}
    added = ParagraphAlignment.objects.get(complex_paragraph__index=2, simple_paragraph__index=1)
    assert added.source == ParagraphAlignment.MANUAL and added.created_by == users["anna"]  # credited to the annotator
    # simple ¶1 = sentences 2-3; complex ¶0 = 0-1, ¶1 = 2-3, ¶2 = 4-6
    assert len(candidates(article.project, docs)) == 4 + 4 + 6 == result["saved"]["candidates"]["pairs"]
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by, proposal.note) == (ParagraphProposal.ACCEPTED, users["rita"],
                                                                     "right, ¶2 is simplified into ¶1")
    assert proposal.decided_at is not None and result["proposal"]["status"] == "accepted"
    with pytest.raises(proposals.ProposalError, match="already accepted by rita"):
        proposals.reject(proposal, users["admin"])


def test_rejecting_leaves_the_links_as_they_were(users, article, docs):
    pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": c, "simple": c} for c in range(3)])
    before = list(ParagraphAlignment.objects.order_by("pk").values_list("pk", "active", "source"))
    predictions = Prediction.objects.count()
    pc.save_paragraph_links(users["anna"], article, *docs, MOVED)
    proposal = ParagraphProposal.objects.get()
    proposals.reject(proposal, users["rita"], "¶2 still matches ¶2")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by, proposal.note) == (ParagraphProposal.REJECTED, users["rita"],
                                                                     "¶2 still matches ¶2")
    assert list(ParagraphAlignment.objects.order_by("pk").values_list("pk", "active", "source")) == before
    assert Prediction.objects.count() == predictions
    with pytest.raises(proposals.ProposalError, match="already rejected"):
        proposals.accept(proposal, users["rita"])


def test_a_proposal_naming_a_paragraph_that_no_longer_exists_is_refused_and_stays_pending(users, article, docs):
    proposal = ParagraphProposal.objects.create(article=article, complex_document=docs[0], simple_document=docs[1],
                                                links=[[0, 0], [9, 0]], proposed_by=users["anna"])
    with pytest.raises(AlignmentInputError, match="complex paragraph 9 does not exist"):
        proposals.accept(proposal, users["rita"])
    proposal.refresh_from_db()
    assert proposal.status == ParagraphProposal.PENDING and not ParagraphAlignment.objects.exists()
