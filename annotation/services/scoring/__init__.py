"""Scoring the pairs and calibrating thresholds from gold: the scoring jobs (one module per kind:
access, sum4simp, wivico, gain, pivot; ``jobs`` checks, queues and runs them) and calibration."""
