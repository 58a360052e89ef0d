"""``train-aligner``: retrain the aligner (pair model + CRF) on the project's annotations."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("train-aligner", Work(task_name("train_aligner"), "annotation.services.training.versions.run_training_job",
                                   Queue.GPU, "Retrain the aligner (pair model + CRF) on the project's annotations."))
