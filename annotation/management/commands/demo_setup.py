from django.core.management.base import BaseCommand, CommandError

from annotation.services.corpus.demo import DEMO_ACCOUNTS, DemoRefused, ensure_demo


class Command(BaseCommand):
    help = ("Create the demo accounts and project and import the bundled demo corpus (idempotent). "
            "Refused when ALIGNAPP_ENV=production: the demo accounts' passwords are public.")

    def handle(self, *args, **options) -> None:
        try:
            project, created = ensure_demo()
        except DemoRefused as exc:
            raise CommandError(str(exc)) from exc
        state = "created and imported" if created else "already present"
        self.stdout.write(f"demo project '{project.name}' {state}: {project.articles.count()} articles")
        self.stdout.write("demo accounts (username / password, role):")
        for account in DEMO_ACCOUNTS:
            self.stdout.write(f"  {account.username:<11} / {account.password:<11} {account.role}")
