from django.core.management.base import BaseCommand, CommandError

from annotation.management.arguments import checked, json_object
from annotation.management.progress import run_here
from annotation.services.alignment import alignment_runs
from annotation.services.projects.creation import find_project


class Command(BaseCommand):
    help = ("Align a project's corpus. By default the run is queued for a worker (gpu queue); "
            "--now runs it in this process and waits.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="project name or id")
        parser.add_argument("--method", default="crf", help="crf, sbert, tfidf, jaccard, charngram, sum4simp, wivico, muss, "
                                                            "or muss-corpus (mining across every document of the project)")
        parser.add_argument("--params", default="{}", help="method parameters as a JSON object")
        parser.add_argument("--levels", action="append", default=[], metavar="COMPLEX:SIMPLE",
                            help="level pair to align (repeatable); default: each adjacent pair of levels")
        parser.add_argument("--queue", default="gpu", choices=["gpu", "cpu"])
        parser.add_argument("--now", action="store_true", help="run here instead of queueing for a worker")

    def handle(self, *args, project: str, method: str, params: str, levels: list[str], queue: str, now: bool, **options):
        try:
            target = find_project(project)
            parsed = json_object(params, "--params")
            level_pairs = checked([lv.split(":", 1) for lv in levels], "--levels")
            if any(len(p) != 2 for p in level_pairs):
                raise ValueError("--levels takes COMPLEX:SIMPLE, e.g. --levels adv:ele")
            run = alignment_runs.start_run(target, method, params=parsed, level_pairs=level_pairs, queue=queue,
                                           enqueue=not now)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not now:
            self.stdout.write(f"queued alignment run #{run.pk} ({method}) for '{target.name}' on the {queue} queue")
            return
        # the run's whole plan here, chunk after chunk
        run = run_here(self.stdout, f"run #{run.pk}", run, alignment_runs.execute_run,
                       failed=f"alignment run #{run.pk}")
        self.stdout.write(f"alignment run #{run.pk} ({method}) succeeded: {run.pair_count} pairs over "
                          f"{run.articles_done} document pairs in {run.timings.get('total_s')} s")
