import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.arguments import checked, json_object
from annotation.management.progress import showing_row
from annotation.models import Job, Status
from annotation.services.projects.creation import find_project
from annotation.services.scoring import jobs as scoring
from annotation.services.scoring import kinds


class Command(BaseCommand):
    help = ("Score a project's candidate pairs with a seed-paper filter (--kind: one of the registered scoring "
            "kinds). Queued for a worker by default; --now runs it here.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="project name or id")
        parser.add_argument("--kind", required=True, choices=kinds.names(),
                            help="; ".join(f"{k.name}: {k.doc}" for k in kinds.kinds()))
        parser.add_argument("--reference-project", help="imported pair corpus to fit/train on (sum4simp-filter, gain-classifier)")
        parser.add_argument("--refs-project", help="imported corpus of reference simplifications for SARI (sum4simp-filter)")
        parser.add_argument("--run", type=int, help="score only the pairs of this alignment run")
        parser.add_argument("--params", default="{}", help="further parameters as a JSON object")
        parser.add_argument("--now", action="store_true", help="run here instead of queueing for a worker")

    def handle(self, *args, project: str, kind: str, reference_project: str | None, refs_project: str | None,
               run: int | None, params: str, now: bool, **options):
        try:
            target = find_project(project)
            parsed = json_object(params, "--params")
            for name, value in (("reference_project", reference_project), ("refs_project", refs_project), ("run", run)):
                if value is not None:
                    parsed[name] = value
            request = scoring.parse_request(target, kind, checked(parsed, "--params"))
            job = scoring.start_scoring(target, request, enqueue=not now)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not now:
            self.stdout.write(f"queued {kind} job #{job.pk} for '{target.name}'")
            return
        try:
            with showing_row(self.stdout, f"{kind} #{job.pk}", Job, job.pk):
                scoring.run_scoring_job(job.pk)
        except Exception as exc:  # noqa: BLE001 - the job row holds the details
            raise CommandError(f"{kind} job #{job.pk} failed: {exc}") from exc
        job = Job.objects.get(pk=job.pk)
        if job.status != Status.SUCCEEDED:
            raise CommandError(f"{kind} job #{job.pk} did not run (status {job.status})")
        summary = {k: job.result[k] for k in ("pairs", "kept", "keep_rate", "pass_rate", "threshold", "model_version")
                   if k in job.result}
        self.stdout.write(f"{kind} job #{job.pk} succeeded in {job.timings.get('total_s')} s: {json.dumps(summary)}")
