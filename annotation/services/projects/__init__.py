"""Projects and people: creating projects, members and accounts, guidelines, the project's language tools."""
