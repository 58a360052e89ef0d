"""Batched linear-chain dynamic programmes of the CRF (Jiang et al. 2020, Eq. 5–6).

Emissions ``E [B, M, L]`` (pair, simple sentence, label) and transitions ``T [L, L]`` (previous,
current label); ``m_lens [B]`` the number of simple sentences of each pair (the rest is padding).
Vectorised over the label axis and the batch: the only Python loop is over the M positions.
"""
from __future__ import annotations

import torch

__all__ = ["viterbi", "log_partition", "gold_score"]


def viterbi(E: torch.Tensor, T: torch.Tensor, m_lens: torch.Tensor) -> torch.Tensor:
    """Batched Viterbi: E [B, M, L], T [L, L] (prev, cur) → labels [B, M]."""
    B, M, L = E.shape
    delta = E[:, 0]
    back = torch.empty(B, M, L, dtype=torch.long, device=E.device)
    ident = torch.arange(L, device=E.device).expand(B, L)
    back[:, 0] = ident
    for i in range(1, M):
        best, arg = (delta[:, :, None] + T[None]).max(dim=1)
        live = (i < m_lens)[:, None]
        delta = torch.where(live, best + E[:, i], delta)
        back[:, i] = torch.where(live, arg, ident)
    out = torch.empty(B, M, dtype=torch.long, device=E.device)
    cur = delta.argmax(dim=-1)
    for i in range(M - 1, -1, -1):
        out[:, i] = cur
        cur = back[:, i].gather(1, cur[:, None]).squeeze(1)
    return out


def log_partition(E: torch.Tensor, T: torch.Tensor, m_lens: torch.Tensor) -> torch.Tensor:
    """Batched forward algorithm → log-partition [B] (pairs with m = 0 get 0)."""
    B, M, L = E.shape
    alpha = E[:, 0]
    for i in range(1, M):
        nxt = torch.logsumexp(alpha[:, :, None] + T[None], dim=1) + E[:, i]
        alpha = torch.where((i < m_lens)[:, None], nxt, alpha)
    logz = torch.logsumexp(alpha, dim=-1)
    return torch.where(m_lens > 0, logz, torch.zeros_like(logz))


def gold_score(E: torch.Tensor, T: torch.Tensor, a: torch.Tensor,
               m_lens: torch.Tensor) -> torch.Tensor:
    """Ψ(a) [B] of given labels ``a [B, M]`` (Eq. 2): emissions plus transitions, padding excluded."""
    B, M, L = E.shape
    pos = torch.arange(M, device=E.device)[None, :]
    live = pos < m_lens[:, None]
    emit = E.gather(2, a[:, :, None]).squeeze(-1)
    emit = torch.where(live, emit, torch.zeros_like(emit)).sum(dim=1)
    if M > 1:
        trans = T[a[:, :-1], a[:, 1:]]
        trans = torch.where(live[:, 1:], trans, torch.zeros_like(trans)).sum(dim=1)
    else:
        trans = torch.zeros(B, device=E.device)
    return emit + trans
