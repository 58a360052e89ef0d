"""Human review: the annotation queue, the label gate, quality control, adjudication, agreement,
the dashboard and the word diff shown beside a pair."""
