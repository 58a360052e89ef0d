"""A project's settings: the one config schema and the settings page's service (the top layer: it
reads every area's options, and no area imports it)."""
