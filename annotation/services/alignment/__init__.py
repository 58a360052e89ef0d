"""Alignment runs and what they produce: runs, run options, whole-article and paragraph alignment,
calibration, scoring/filtering jobs, mining, comparing and deleting runs, pair filters."""
