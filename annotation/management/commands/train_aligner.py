import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.arguments import json_object, refused_as_command_error
from annotation.management.progress import run_here
from annotation.models import ModelVersion
from annotation.services.projects.creation import find_project
from annotation.services.training import versions as training
from annotation.services.training.request import TRAIN_REQUEST_OPTIONS, TrainRequest


class Command(BaseCommand):
    help = ("Retrain the aligner (pair model + CRF) on a project's annotations. By default the job is "
            "queued for a worker (gpu queue); --now trains in this process and waits.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="project name or id")
        declared = {o.name: o for o in TRAIN_REQUEST_OPTIONS}  # the API's and the Models page's declarations
        parser.add_argument("--config", default="{}",
                            help=declared["config"].help + ', a JSON object, e.g. {"epochs": 2}')
        for flag, name in (("--seed", "seed"), ("--base", "base_version")):
            parser.add_argument(flag, type=int, default=declared[name].default, help=declared[name].help)
        parser.add_argument("--now", action="store_true", help="train here instead of queueing for a worker")

    def handle(self, *args, project: str, config: str, seed: int, base: int | None, now: bool, **options):
        with refused_as_command_error():
            request = TrainRequest.parse({"config": json_object(config, "--config"), "seed": seed,
                                          "base_version": base})
            target = find_project(project)
            if base is not None and not training.model_versions(target).filter(pk=base).exists():
                raise CommandError(f"--base: no model version {base} in this project")
            job = training.start_training(target, request, enqueue=not now)
        if not now:
            self.stdout.write(f"queued training job #{job.pk} for '{target.name}' on the gpu queue")
            return
        job = run_here(self.stdout, f"training #{job.pk}", job, training.run_training_job,
                       failed=f"training job #{job.pk}")
        version = ModelVersion.objects.get(pk=job.result["model_version"])
        self.stdout.write(f"training job #{job.pk} succeeded: model version #{version.pk} {version.name} "
                          f"({json.dumps(version.metrics.get('test') or version.metrics.get('dev'))})")
