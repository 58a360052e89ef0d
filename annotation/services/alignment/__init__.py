"""Alignment runs and what they produce: runs, run options, automatic paragraph alignment and its
candidates, mining, comparing and deleting runs, pair filters."""
