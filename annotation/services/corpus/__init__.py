"""Getting text in: imports, the demo corpus, documents and corpus statistics."""
