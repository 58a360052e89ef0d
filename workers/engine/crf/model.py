"""The neural CRF model: emissions, the transition network, and persistence (Jiang et al. 2020,
§2.2–2.3, Eq. 1–4; the package docstring of :mod:`workers.engine.crf` describes the model).

Example:
    >>> crf = NeuralCRF()
    >>> crf.transitions(3).shape
    torch.Size([3, 3])
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..errors import EngineError
from ..options import Option, build_config, option_fields
from .chain import gold_score, log_partition, viterbi

__all__ = ["CRFConfig", "NeuralCRF", "transition_features"]

_NEG = -1e9  # score of impossible labels (padding); finite so logsumexp never sees inf − inf


@contextmanager
def _cpu_single_thread(device: torch.device) -> Iterator[None]:
    """Run the per-position loop with one intra-op thread on CPU.

    Each step is a small [B, L, L] operation; splitting it over threads costs more than it saves
    and, on a busy machine, made n = 200 decoding ~100× slower (threads waiting for cores).
    """
    if device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


CRF_PARAMS: tuple[Option, ...] = (
    Option("hidden", "int", 8, 1, None, "hidden units of the transition FFNN"),
    Option("sim_scale", "float", 10.0, help="initial multiplier of the similarity in the emission score"),
    Option("null_threshold", "float", 0.35, help="initial null emission (times sim_scale)"),
    Option("same_cost", "float", 0.3, help="initial cost of two simple sentences on one complex sentence"),
    Option("jump_cost", "float", 0.4, help="initial cost per complex sentence skipped"),
    Option("max_jump", "int", 5, 0, None, "distance after which a jump costs no more"),
    Option("null_enter_cost", "float", 0.5, help="initial cost of entering the null state (g2)"),
    Option("null_exit_cost", "float", 0.5, help="initial cost of leaving the null state (g3)"),
    Option("null_stay_cost", "float", 0.0, help="initial cost of staying in the null state (g4)"),
    Option("null_margin", "float", 0.1, help="relative null criterion (null = off)", nullable=True),
    Option("null_floor", "float", 0.15, help="lowest similarity the relative criterion may align"),
)
"""The CRF's hyper-parameters (the ``crf`` method's ``crf`` option): types, defaults and help."""


@dataclass
@option_fields(CRF_PARAMS)
class CRFConfig:
    """Hyper-parameters and hand-set initial values of :class:`NeuralCRF`.

    Attributes:
        hidden: hidden units of the transition FFNN.
        sim_scale: initial multiplier of the similarity in the emission score.
        null_threshold: initial null emission = ``sim_scale · null_threshold``: a simple sentence
            whose best similarity is below it tends to stay unaligned.
        same_cost: initial cost of two consecutive simple sentences on the same complex sentence.
        jump_cost: initial cost per complex sentence skipped (g1 − 1), up to ``max_jump``.
        max_jump: distance after which a jump costs no more.
        null_enter_cost, null_exit_cost, null_stay_cost: initial costs of g2, g3, g4.
        null_margin: relative null criterion (``None`` = off): the null emission of a simple
            sentence is ``min(null_score, scale · max(null_floor, second + null_margin))`` with
            ``second`` its second-best complex similarity, so a sentence whose best match stands
            out from all other complex sentences by more than the margin can be aligned even
            below the absolute ``null_threshold`` — short split fragments ("He was sick with a
            fever.") have low absolute similarity to their long source sentence but a clear best
            match. On the ASSET-based dev set (exhaustive gold) it raised Task 1 F1 from 0.991 to
            0.996 at unchanged precision (recall 0.982 → 0.992; margins 0.075–0.15 all
            0.994–0.996, 0 gives 0.989); the OneStop sets are unchanged (tuned F1 identical). Not
            applied to articles with a single complex sentence.
        null_floor: lowest similarity at which the relative criterion may align a sentence.
    """


    @classmethod
    def from_dict(cls, d: dict[str, object]) -> CRFConfig:
        """A config from ``d`` checked against :data:`CRF_PARAMS` (an unknown key or a bad value is an
        :class:`~workers.engine.options.OptionError`, a ``ValueError``)."""
        return build_config(cls, "CRF", CRF_PARAMS, d)


def transition_features(n_labels: int) -> torch.Tensor:
    """Features ``[L, L, 4]`` (prev label, current label) = (g1, g2, g3, g4) of Eq. 3."""
    idx = torch.arange(n_labels)
    prev, cur = idx[:, None].expand(n_labels, n_labels), idx[None, :].expand(n_labels, n_labels)
    both = (prev > 0) & (cur > 0)
    g1 = torch.where(both, (cur - prev).abs(), torch.zeros_like(cur)).float()
    g2 = ((cur == 0) & (prev > 0)).float()
    g3 = ((cur > 0) & (prev == 0)).float()
    g4 = ((cur == 0) & (prev == 0)).float()
    return torch.stack([g1, g2, g3, g4], dim=-1)


class NeuralCRF(nn.Module):
    """The CRF: emission parameters, the transition FFNN, Viterbi and the forward algorithm.

    Similarity matrices are given per article pair as arrays ``[n_complex, n_simple]`` (the
    engine-wide orientation); labels are returned per simple sentence, 1-based (0 = null).
    """

    def __init__(self, config: CRFConfig | None = None) -> None:
        super().__init__()
        self.config = config or CRFConfig()
        h = self.config.hidden
        if h < 6:
            raise ValueError("hidden must be at least 6 (the hand-set defaults use 6 units)")
        self.sim_scale = nn.Parameter(torch.tensor(0.0))
        self.null_score = nn.Parameter(torch.tensor(0.0))
        self.ffnn = nn.Sequential(nn.Linear(4, h), nn.ReLU(), nn.Linear(h, 1))
        self._feat_cache: dict[int, torch.Tensor] = {}
        self.reset_to_defaults()

    @torch.no_grad()
    def reset_to_defaults(self) -> None:
        """Hand-set parameters implementing the costs of :class:`CRFConfig`.

        Hidden units (ReLU): u0 = 1(same non-null label) = relu(1 − g1 − g2 − g3 − g4),
        u1 = relu(g1 − 1) (sentences skipped), u2 = relu(g1 − 1 − max_jump) (cancels u1 beyond
        the cap), u3..u5 = g2, g3, g4; further units start near zero, free for training.
        """
        c = self.config
        self.sim_scale.fill_(c.sim_scale)
        self.null_score.fill_(c.sim_scale * c.null_threshold)
        lin1, lin2 = self.ffnn[0], self.ffnn[2]
        g = torch.Generator().manual_seed(0)
        lin1.weight.copy_(torch.randn(lin1.weight.shape, generator=g) * 0.01)
        lin1.bias.zero_()
        lin2.weight.zero_()
        lin2.bias.zero_()
        lin1.weight[0] = torch.tensor([-1.0, -1.0, -1.0, -1.0])
        lin1.bias[0] = 1.0
        lin1.weight[1] = torch.tensor([1.0, 0.0, 0.0, 0.0])
        lin1.bias[1] = -1.0
        lin1.weight[2] = torch.tensor([1.0, 0.0, 0.0, 0.0])
        lin1.bias[2] = -1.0 - c.max_jump
        for k in range(3):
            lin1.weight[3 + k] = torch.eye(4)[1 + k]
            lin1.bias[3 + k] = 0.0
        lin2.weight[0, :6] = torch.tensor([-c.same_cost, -c.jump_cost, c.jump_cost,
                                           -c.null_enter_cost, -c.null_exit_cost,
                                           -c.null_stay_cost])
        self._feat_cache.clear()

    # ----------------------------------------------------------------- scores
    def transitions(self, n_labels: int) -> torch.Tensor:
        """T ``[L, L]``: T[prev, cur] for labels 0..L−1 (Eq. 4)."""
        feats = self._feat_cache.get(n_labels)
        if feats is None:
            feats = transition_features(n_labels)
            if len(self._feat_cache) > 16:
                self._feat_cache.clear()
            self._feat_cache[n_labels] = feats
        feats = feats.to(self.sim_scale.device)
        return self.ffnn(feats).squeeze(-1)

    def emissions(
        self, sims: Sequence[np.ndarray | torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Batch emission scores.

        Returns:
            ``(E [B, M, L], m_lens [B], n_lens [B])`` with M = max m, L = max n + 1; impossible
            labels (beyond a pair's n) score ``-1e9``.
        """
        dev = self.sim_scale.device
        mats = [torch.as_tensor(np.asarray(s, dtype=np.float32) if not torch.is_tensor(s) else s,
                                dtype=torch.float32, device=dev) for s in sims]
        for s in mats:
            if s.dim() != 2:
                raise ValueError("every similarity matrix must be 2-D [n_complex, n_simple]")
        n_lens = torch.tensor([s.shape[0] for s in mats], dtype=torch.long, device=dev)
        m_lens = torch.tensor([s.shape[1] for s in mats], dtype=torch.long, device=dev)
        B = len(mats)
        M = int(m_lens.max()) if B else 0
        L = int(n_lens.max()) + 1 if B else 1
        sim = torch.zeros(B, max(M, 1), L - 1, device=dev)
        for b, s in enumerate(mats):
            sim[b, : s.shape[1], : s.shape[0]] = s.T
        null = self.null_score.expand(B, max(M, 1), 1)
        margin = self.config.null_margin
        if margin is not None and L > 2:
            # relative null (see CRFConfig.null_margin): the null score of s_i is lowered to
            # scale·max(null_floor, second-best sim of s_i + margin) when that is below it
            pad = torch.arange(L - 1, device=dev)[None, :] >= n_lens[:, None]  # [B, L-1]
            second = sim.masked_fill(pad[:, None, :], float("-inf")).topk(2, dim=-1).values[..., 1:]
            second = torch.where(torch.isfinite(second), second, torch.full_like(second, 1e4))
            rel = self.sim_scale * (second + margin).clamp(min=self.config.null_floor)
            null = torch.minimum(null, rel)
        E = torch.cat([null, self.sim_scale * sim], dim=-1)
        invalid = torch.arange(L, device=dev)[None, :] > n_lens[:, None]  # [B, L]
        E = E.masked_fill(invalid[:, None, :], _NEG)
        return E[:, :M] if M else E[:, :0], m_lens, n_lens

    # -------------------------------------------------------------- inference
    @torch.no_grad()
    def decode(self, sims: Sequence[np.ndarray | torch.Tensor]) -> list[np.ndarray]:
        """Viterbi labels (Eq. 5) for a batch of similarity matrices ``[n_i, m_i]``.

        Returns:
            one int array of length m_i per pair; values in 0..n_i (0 = null, j = c_{j−1}).
        """
        if len(sims) == 0:
            return []
        E, m_lens, _ = self.emissions(sims)
        B, M, L = E.shape
        if M == 0:
            return [np.zeros(0, dtype=np.int64) for _ in range(B)]
        T = self.transitions(L)
        with _cpu_single_thread(E.device):
            labels = viterbi(E, T, m_lens)
        return [labels[b, : int(m_lens[b])].cpu().numpy() for b in range(B)]

    def log_partition(self, sims: Sequence[np.ndarray | torch.Tensor]) -> torch.Tensor:
        """log Σ_a exp Ψ(a) per pair (forward algorithm, Eq. 6); 0 for an empty simple side."""
        E, m_lens, _ = self.emissions(sims)
        B, M, L = E.shape
        if M == 0:
            return torch.zeros(B, device=E.device)
        with _cpu_single_thread(E.device):
            return log_partition(E, self.transitions(L), m_lens)

    def score(self, sims: Sequence[np.ndarray | torch.Tensor],
              labels: Sequence[Sequence[int]]) -> torch.Tensor:
        """Ψ(a) of given label sequences, per pair."""
        E, m_lens, _ = self.emissions(sims)
        B, M, L = E.shape
        if M == 0:
            return torch.zeros(B, device=E.device)
        a = torch.zeros(B, M, dtype=torch.long, device=E.device)
        for b, lab in enumerate(labels):
            if len(lab) != int(m_lens[b]):
                raise ValueError(f"pair {b}: {len(lab)} labels for {int(m_lens[b])} sentences")
            if len(lab):
                a[b, : len(lab)] = torch.as_tensor(np.asarray(lab, dtype=np.int64))
        return gold_score(E, self.transitions(L), a, m_lens)

    def log_likelihood(self, sims: Sequence[np.ndarray | torch.Tensor],
                       labels: Sequence[Sequence[int]]) -> torch.Tensor:
        """log P(a* | S, C) per pair (Eq. 6)."""
        return self.score(sims, labels) - self.log_partition(sims)

    # ------------------------------------------------------------- persistence
    def save(self, directory: str | Path, extra: dict[str, object] | None = None) -> Path:
        """Write ``crf.json`` (config + ``extra`` settings) and ``crf.pt`` (state dict)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        meta = {"format": "alignapp-neural-crf", "version": 1, "config": asdict(self.config),
                "extra": dict(extra or {})}
        (d / "crf.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        torch.save(self.state_dict(), d / "crf.pt")
        return d

    @classmethod
    def load(cls, directory: str | Path) -> tuple[NeuralCRF, dict[str, object]]:
        """Load a model written by :meth:`save`; returns ``(model, extra)``.

        Raises:
            EngineError: not a saved CRF directory.
        """
        d = Path(directory)
        try:
            meta = json.loads((d / "crf.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise EngineError(f"{d} is not a saved CRF model (crf.json): {exc}") from exc
        if meta.get("format") != "alignapp-neural-crf":
            raise EngineError(f"{d / 'crf.json'} is not an alignapp CRF model")
        model = cls(CRFConfig.from_dict(meta["config"]))
        state = torch.load(d / "crf.pt", map_location="cpu", weights_only=True)
        model.load_state_dict(state)
        return model, dict(meta.get("extra") or {})
