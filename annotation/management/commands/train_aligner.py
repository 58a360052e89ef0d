import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.arguments import json_object
from annotation.management.progress import showing_row
from annotation.models import Job, ModelVersion
from annotation.services.projects.creation import find_project
from annotation.services.training import versions as training
from annotation.services.training.request import TrainRequest


class Command(BaseCommand):
    help = ("Retrain the aligner (pair model + CRF) on a project's annotations. By default the job is "
            "queued for a worker (gpu queue); --now trains in this process and waits.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="project name or id")
        parser.add_argument("--config", default="{}", help='training options as a JSON object, e.g. {"epochs": 2}')
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--base", type=int, default=None, help="model version id to start from")
        parser.add_argument("--now", action="store_true", help="train here instead of queueing for a worker")

    def handle(self, *args, project: str, config: str, seed: int, base: int | None, now: bool, **options):
        try:
            request = TrainRequest.parse({"config": json_object(config, "--config"), "seed": seed,
                                          "base_version": base})
            target = find_project(project)
            if base is not None and not training.model_versions(target).filter(pk=base).exists():
                raise CommandError(f"--base: no model version {base} in this project")
            job = training.start_training(target, request, enqueue=not now)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not now:
            self.stdout.write(f"queued training job #{job.pk} for '{target.name}' on the gpu queue")
            return
        try:
            with showing_row(self.stdout, f"training #{job.pk}", Job, job.pk):
                training.run_training_job(job.pk)
        except Exception as exc:  # noqa: BLE001 - the job row holds the details
            raise CommandError(f"training job #{job.pk} failed: {exc}") from exc
        job = Job.objects.get(pk=job.pk)
        version = ModelVersion.objects.get(pk=job.result["model_version"])
        self.stdout.write(f"training job #{job.pk} succeeded: model version #{version.pk} {version.name} "
                          f"({json.dumps(version.metrics.get('test') or version.metrics.get('dev'))})")
