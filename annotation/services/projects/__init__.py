"""Projects and people: creating projects, settings, members and accounts, guidelines."""
