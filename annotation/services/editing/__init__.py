"""People editing alignments: whole-article links (labels through the review gate), completion,
paragraph-link corrections and the proposals a researcher accepts or rejects."""
