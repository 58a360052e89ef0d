"""Training the aligner on the project's labels: training data, training jobs, model versions."""
