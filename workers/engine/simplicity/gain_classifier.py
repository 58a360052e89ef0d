"""WIVICO step-2 simplicity-gain classifier (Ormaechea & Tsourakis 2023, §3.3, §4, Table 3).

Training data: reference simplification pairs split in two halves; the first half stays
complex → simple (positives), the second is swapped simple → complex (negatives), identical pairs
removed. Features are the gains of :class:`~.gain_features.GainFeaturizer`, standardised with the
training mean/std. Model: FFNN with four hidden layers of 256 ReLU units, dropout 0.5, sigmoid
output, batch size 64, 80:10:10 stratified split (early stopping on validation loss).

At use time the classifier gives P(simplification) per pair; :func:`cutoff_counts` counts the
pairs above lenient → strict cut-offs 0.5…0.9 (the paper's Table 3), optionally per n:m group.
Saved as a directory: ``model.pt`` (torch state dict) + ``gain_classifier.json`` (feature names,
standardisation, language, metrics).
"""
from __future__ import annotations

import json
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .gain_features import GainFeaturizer

__all__ = ["CUTOFFS", "GainClassifier", "build_training_set", "cutoff_counts"]

CUTOFFS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)


def build_training_set(
    pairs: Sequence[tuple[str, str]], seed: int = 0
) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Positives = first half as given, negatives = second half swapped; identical pairs dropped."""
    usable = [(c, s) for c, s in pairs if c.strip() != s.strip()]
    rng = random.Random(seed)
    rng.shuffle(usable)
    half = len(usable) // 2
    texts = usable[:half] + [(s, c) for c, s in usable[half:]]
    labels = np.array([1] * half + [0] * (len(usable) - half), dtype=np.float32)
    return texts, labels


def _stratified_split(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    tr, va, te = [], [], []
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        n_va = int(round(0.1 * len(idx)))
        n_te = int(round(0.1 * len(idx)))
        va += list(idx[:n_va])
        te += list(idx[n_va : n_va + n_te])
        tr += list(idx[n_va + n_te :])
    return np.array(tr, dtype=int), np.array(va, dtype=int), np.array(te, dtype=int)


def _network(n_features: int, hidden: int, layers: int, dropout: float):  # type: ignore[no-untyped-def]
    import torch.nn as nn

    mods: list[Any] = []
    width = n_features
    for _ in range(layers):
        mods += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout)]
        width = hidden
    mods.append(nn.Linear(width, 1))
    return nn.Sequential(*mods)


def _fit(net, xt, yt, tr: np.ndarray, va: np.ndarray, *, epochs: int, batch_size: int, lr: float,  # type: ignore[no-untyped-def]
         patience: int, seed: int) -> None:
    """Adam on the BCE loss over the ``tr`` rows, early stopping on the ``va`` loss (``tr`` without a
    validation split) after ``patience`` epochs without improvement; the best epoch's weights are kept."""
    import torch

    opt = torch.optim.Adam(net.parameters(), lr=lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    gen = torch.Generator().manual_seed(seed)
    best, best_state, bad = float("inf"), None, 0
    for _ in range(epochs):
        net.train()
        perm = tr[torch.randperm(len(tr), generator=gen).numpy()]
        for k in range(0, len(perm), batch_size):
            b = perm[k : k + batch_size]
            opt.zero_grad()
            loss = loss_fn(net(xt[b]).squeeze(-1), yt[b])
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            idx = va if len(va) else tr
            v = float(loss_fn(net(xt[idx]).squeeze(-1), yt[idx]))
        if v < best - 1e-6:
            best, bad = v, 0
            best_state = {k: t.clone() for k, t in net.state_dict().items()}
        else:
            bad += 1
            if bad >= patience:
                break
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()


@dataclass
class GainClassifier:
    """A trained gain classifier plus the featurizer settings it was trained with."""

    feature_names: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    net: Any
    language: str = "en"
    hidden: int = 256
    layers: int = 4
    dropout: float = 0.5
    metrics: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    _featurizer: GainFeaturizer | None = field(default=None, repr=False)

    @classmethod
    def train(
        cls,
        reference_pairs: Sequence[tuple[str, str]],
        *,
        featurizer: GainFeaturizer | None = None,
        language: str = "en",
        epochs: int = 50,
        batch_size: int = 64,
        lr: float = 1e-3,
        hidden: int = 256,
        layers: int = 4,
        dropout: float = 0.5,
        patience: int = 5,
        seed: int = 0,
    ) -> GainClassifier:
        """Train on (complex, simple) reference pairs (positives) and their swaps (negatives).

        Raises:
            ValueError: fewer than 10 usable (non-identical) pairs.
        """
        import torch

        fz = featurizer or GainFeaturizer(language)
        texts, y = build_training_set(reference_pairs, seed)
        if len(texts) < 10:
            raise ValueError(f"need at least 10 non-identical reference pairs, got {len(texts)}")
        x = fz.matrix(texts)
        tr, va, te = _stratified_split(y, seed)
        mean = x[tr].mean(axis=0)
        std = x[tr].std(axis=0)
        std[std == 0] = 1.0
        xs = (x - mean) / std
        torch.manual_seed(seed)
        net = _network(x.shape[1], hidden, layers, dropout)
        xt, yt = torch.from_numpy(xs.astype(np.float32)), torch.from_numpy(y)
        _fit(net, xt, yt, tr, va, epochs=epochs, batch_size=batch_size, lr=lr, patience=patience, seed=seed)
        clf = cls(fz.feature_names, mean, std, net, fz.language, hidden, layers, dropout,
                  skipped=dict(fz.skipped), _featurizer=fz)
        with torch.no_grad():
            prob = torch.sigmoid(net(xt).squeeze(-1)).numpy()
        for name, idx in (("train", tr), ("val", va), ("test", te)):
            if len(idx):
                clf.metrics[f"{name}_accuracy"] = float(((prob[idx] >= 0.5) == (y[idx] == 1)).mean())
        clf.metrics["n_pairs"] = float(len(texts))
        return clf

    @property
    def featurizer(self) -> GainFeaturizer:
        if self._featurizer is None:
            self._featurizer = GainFeaturizer(self.language)
        missing = set(self.feature_names) - set(self._featurizer.feature_names)
        if missing:
            raise ValueError(
                f"this classifier needs features {sorted(missing)} that cannot be computed here: "
                f"{ {k: self._featurizer.skipped.get(k, '?') for k in sorted(missing)} }"
            )
        return self._featurizer

    def predict_features(self, x: np.ndarray) -> np.ndarray:
        """P(simplification) for a feature matrix in :attr:`feature_names` order."""
        import torch

        xs = ((x - self.mean) / self.std).astype(np.float32)
        with torch.no_grad():
            return torch.sigmoid(self.net(torch.from_numpy(xs)).squeeze(-1)).numpy().reshape(len(x))

    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(target is a simplification of source) for (source, target) pairs."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        fz = self.featurizer
        x = fz.matrix(pairs)
        cols = [fz.feature_names.index(n) for n in self.feature_names]
        return self.predict_features(x[:, cols])

    def save(self, directory: str | Path) -> None:
        import torch

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        torch.save(self.net.state_dict(), d / "model.pt")
        meta = {
            "kind": "wivico_gain_classifier", "version": 1,
            "feature_names": list(self.feature_names), "mean": self.mean.tolist(), "std": self.std.tolist(),
            "language": self.language, "hidden": self.hidden, "layers": self.layers,
            "dropout": self.dropout, "metrics": self.metrics, "skipped": self.skipped,
        }
        (d / "gain_classifier.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, featurizer: GainFeaturizer | None = None) -> GainClassifier:
        """Load a saved classifier.

        Raises:
            ValueError: the directory holds no gain classifier.
        """
        import torch

        d = Path(directory)
        meta_path = d / "gain_classifier.json"
        if not meta_path.exists():
            raise ValueError(f"{d} has no gain_classifier.json")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        net = _network(len(meta["feature_names"]), meta["hidden"], meta["layers"], meta["dropout"])
        net.load_state_dict(torch.load(d / "model.pt", weights_only=True))
        net.eval()
        return cls(tuple(meta["feature_names"]), np.array(meta["mean"], dtype=np.float32),
                   np.array(meta["std"], dtype=np.float32), net, meta["language"], meta["hidden"],
                   meta["layers"], meta["dropout"], meta.get("metrics", {}), meta.get("skipped", {}),
                   featurizer)


def cutoff_counts(
    probabilities: Sequence[float],
    groups: Sequence[Hashable] | None = None,
    cutoffs: Sequence[float] = CUTOFFS,
) -> dict[str, Any]:
    """Counts of pairs with probability ≥ each cut-off (Table 3), overall and per group.

    Example:
        >>> cutoff_counts([0.55, 0.95, 0.2])["all"]
        {'0.5': 2, '0.6': 1, '0.7': 1, '0.8': 1, '0.9': 1}
    """
    probs = np.asarray(probabilities, dtype=np.float64)
    out: dict[str, Any] = {"all": {f"{c:g}": int((probs >= c).sum()) for c in cutoffs}}
    if groups is not None:
        if len(groups) != len(probs):
            raise ValueError("groups and probabilities differ in length")
        per: dict[str, Mapping[str, int]] = {}
        for g in dict.fromkeys(groups):
            mask = np.array([x == g for x in groups])
            per[str(g)] = {f"{c:g}": int((probs[mask] >= c).sum()) for c in cutoffs}
        out["groups"] = per
    return out
