"""Getting text in: imports, the demo corpus, corpus statistics and the project's language tools."""
