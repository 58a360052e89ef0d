"""Loading a model prints nothing of the libraries' own: their carriage-return bars ("Loading
weights…") broke into a command's progress line and landed in non-terminal logs (issue 28 item 5)."""
from __future__ import annotations

from workers.engine import encoders


def test_loading_a_sentence_model_draws_no_library_progress_bar(minilm_path, capfd):
    capfd.readouterr()
    model = encoders._load_sentence_transformer.__wrapped__(minilm_path, "cpu")  # a real load, not the cached one
    out, err = capfd.readouterr()
    assert model is not None
    assert "Loading weights" not in out + err and "\r" not in out + err, err[-500:]
