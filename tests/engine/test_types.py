from __future__ import annotations

from workers.engine.types import AlignedPair, Alignment, ArticlePair, Document


def test_a_document_flattens_its_paragraphs_in_order():
    d = Document(paragraphs=(("a", "b"), (), ("c",)))
    assert d.sentences == ("a", "b", "c")
    assert d.paragraph_index == (0, 0, 2)
    assert len(d) == 3


def test_an_empty_document_has_no_sentences():
    d = Document(paragraphs=())
    assert d.sentences == () and len(d) == 0 and d.paragraph_index == ()


def test_a_group_stands_for_all_its_links():
    p = AlignedPair((3, 4), (1, 2), "partial", 0.5)
    assert sorted(p.links()) == [(3, 1), (3, 2), (4, 1), (4, 2)]


def test_article_pairs_default_to_no_gold_labels_and_no_identical_pairs():
    p = ArticlePair("x", Document((("a",),)), Document((("b",),)))
    assert p.gold is None and p.gold_labels is None and p.identical == ()
    assert Alignment("x", []).meta == {}


def test_the_engine_imports_neither_django_nor_celery():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, workers.engine as e; from workers.engine.methods import available_methods;"
            "available_methods(); e.get_similarity; e.train_crf_aligner;"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'celery')];"
            "assert not bad, bad; print(sorted(e.__all__)[:3])")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
