"""Scoring the pairs and calibrating thresholds from gold: the scoring jobs (``jobs`` parses a request once,
queues and runs it; ``kinds/`` is the registry of scoring kinds, one module per kind: access, sum4simp, wivico,
gain, pivot) and calibration."""
