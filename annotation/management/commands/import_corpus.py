"""``manage.py import_corpus PROJECT PATH``: import a file, folder or archive into a project."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.label_schemes import DEFAULT_SCHEME
from annotation.management.progress import showing
from annotation.models import AuditEvent, LabelScheme, Project
from annotation.services import audit
from annotation.services.corpus.importing import CorpusImportError, ImportRequest, gold_meanings, import_inputs, path_inputs
from annotation.services.corpus.importing.base import language_problem
from annotation.services.corpus.importing.request import import_options
from annotation.services.projects.creation import add_researcher, command_researcher, find_project


class Command(BaseCommand):
    help = (
        "Import a corpus (a file, a folder, or a .zip/.tar.gz archive) into a project. Formats: engine "
        "JSONL, <Title>-<level>.txt levels, CNN/DailyMail .story files, line-aligned .src/.dst files. "
        "Nothing is written unless every file is valid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project name (or id)")
        parser.add_argument("path", help="file, folder or archive to import")
        declared = {o.name: o for o in import_options()}  # the flags' choices and help: the import's declarations
        parser.add_argument("--format", default="auto", choices=declared["format"].choices,
                            help=declared["format"].help)
        parser.add_argument("--language", help=declared["language"].help)
        parser.add_argument("--create", action="store_true", help=f"create the project if it does not exist (scheme {DEFAULT_SCHEME!r})")
        parser.add_argument("--researcher", metavar="USERNAME",
                            help="with --create: the account that becomes the new project's researcher (default: the "
                                 "only non-admin account in the researchers group, if there is exactly one)")
        for name in ("on_conflict", "gold_meaning"):
            parser.add_argument("--" + name.replace("_", "-"), default=declared[name].default,
                                choices=declared[name].choices, help=declared[name].help)
        parser.add_argument("--columns", metavar="COMPLEX,SIMPLE[,LABEL]", help=declared["columns"].help)
        parser.add_argument("--test-questions", action="store_true", help=declared["test_questions"].help)

    def handle(self, *args: object, **options: object) -> None:
        name = str(options["project"])
        # The import streams the input and writes in batches (on SQLite, each its own short
        # transaction, so annotators keep labelling meanwhile); a project created here is removed
        # again when the import is refused, so a failed command leaves nothing behind.
        project, created, researcher = self._project(name, create=bool(options["create"]), language=options["language"],
                                                     researcher=options.get("researcher"))
        created_event = audit.record("project.create", project=project, target=project.name, language=project.language,
                                     label_scheme=project.label_scheme.slug,
                                     **({"researcher": researcher.username} if researcher else {})) if created else None
        try:
            request = ImportRequest.parse({o.name: options[o.name] for o in import_options() if options.get(o.name)})
            with showing(self.stdout, "import") as display:
                result = import_inputs(project, path_inputs(str(options["path"])), request, progress=display)
        except CorpusImportError as exc:
            if created:
                _undo_creation(project, created_event)
            for problem in exc.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"nothing imported: {len(exc.problems)} problem(s)") from exc
        except BaseException:
            if created:
                _undo_creation(project, created_event)
            raise
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(f"imported {result.describe()} into {project.name!r}")
        if result.gold or result.gold_meaning != gold_meanings.DEFAULT_MEANING:  # the file had gold links
            self.stdout.write(f"gold: {result.gold_summary()}" + (f" (alignment run #{result.run})" if result.run else ""))
        if created and researcher is not None:
            self.stdout.write(f"researcher of the new project: {researcher.username}")
        elif created:
            self.stderr.write(f"warning: project {project.name!r} has no members: only admins see it until one adds a "
                              "researcher (pass --researcher USERNAME with --create)")

    def _project(self, name: str, *, create: bool, language: object, researcher: object) -> tuple[Project, bool, object]:
        """The project, whether this command created it, and (created) its researcher, a member now."""
        try:
            project = find_project(name)
        except ValueError:
            pass
        else:
            if researcher:
                self.stderr.write(f"warning: --researcher is used only when --create creates the project; "
                                  f"{project.name!r} exists (add members on its settings page)")
            return project, False, None
        if not create:
            raise CommandError(f"no project named {name!r}; pass --create to create it")
        if language:
            message = language_problem(str(language))
            if message:
                raise CommandError(message)
        try:
            member = command_researcher(str(researcher) if researcher else None)
        except ValueError as exc:
            raise CommandError(f"{exc}; nothing imported") from exc
        project = Project.objects.create(
            name=name, language=str(language or "en"), label_scheme=LabelScheme.objects.get(slug=DEFAULT_SCHEME)
        )
        if member is not None:
            add_researcher(project, member)
        return project, True, member


def _undo_creation(project: Project, event: AuditEvent | None) -> None:
    """A refused import leaves nothing behind: the project it created, and the event saying so
    (the project never existed for anyone; an orphan ``project.create`` would name a project
    that is not there)."""
    if event is not None:
        AuditEvent.objects.filter(pk=event.pk).delete()
    project.delete()
