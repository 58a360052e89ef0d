"""Server-rendered pages (a small JS module per page does the live parts)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from workers.engine import SUPPORTED_LANGUAGES

from .. import validation
from ..label_schemes import DEFAULT_SCHEME
from ..models import Article, LabelScheme, Project
from ..parsers import load_json
from ..permissions import can_create_projects, can_research, role_in, sees_predictions, visible_projects
from ..services.alignment import alignment_runs, run_options
from ..services.corpus import article_size, importing
from ..services.corpus.importing import formats as import_formats
from ..services.corpus.importing import gold_meanings
from ..services.corpus.importing import uploads as import_uploads
from ..services.corpus.importing.request import import_options
from ..services.editing import workflow
from ..services.projects import creation as project_service
from .common import researchers_only
from .forms import back_with_message, refuses_with


def _home(request: HttpRequest, *, new: dict | None = None, error: str = "", status: int = 200) -> HttpResponse:
    projects = visible_projects(request.user).annotate(article_count=Count("articles", distinct=True)).order_by("name")
    context = {"projects": [(p, role_in(request.user, p)) for p in projects],
               "can_create": can_create_projects(request.user), "new": new or {"language": "en"}, "error": error}
    if context["can_create"]:
        context.update(languages=SUPPORTED_LANGUAGES, schemes=LabelScheme.objects.order_by("name"),
                       default_scheme=DEFAULT_SCHEME)
    return render(request, "projects/home.html", context, status=status)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return _home(request)


def _new_project(request: HttpRequest) -> dict:
    return {name: request.POST.get(name, "") for name in ("name", "language", "label_scheme", "encoder", "guidelines")}


@login_required
@require_POST
@refuses_with(lambda request, error: _home(request, new=_new_project(request), error=str(error), status=error.status))
def create_project(request: HttpRequest) -> HttpResponse:
    """Admins and members of the researchers group; the creator becomes the project's first researcher."""
    if not can_create_projects(request.user):
        raise PermissionDenied("only admins and researchers create projects")
    project = project_service.create_project(request.user, **_new_project(request))
    messages.success(request, f"Project {project.name} created. Import a corpus and add members (Settings).")
    return redirect("project-detail", pk=project.pk)


def _project_for(request: HttpRequest, pk: int) -> Project:
    return get_object_or_404(visible_projects(request.user), pk=pk)


#: Articles per page of the project page.
ARTICLES_PER_PAGE = 50


@login_required
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The project, its recent runs and its articles, :data:`ARTICLES_PER_PAGE` at a time (``?page=``;
    a page that is not a number shows the first, one past the end the last), each with the user's
    state (to do / in progress / complete, ``services.editing.workflow``; ``?state=`` filters)."""
    project = _project_for(request, pk)
    state = request.GET.get("state", "")
    state = state if state in workflow.STATES else ""
    page = workflow.articles_page(project.articles.all(), request.user, state, request.GET.get("page"), ARTICLES_PER_PAGE,
                                  document_count=Count("documents", distinct=True))
    counts = workflow.state_counts(project.articles.all(), request.user)
    context = {
        "state": state,
        "states": [("", "All", counts["all"])] + [(s, workflow.STATE_NAMES[s], counts[s]) for s in workflow.STATES],
        "state_query": f"&state={state}" if state else "",
        "project": project,
        "role": role_in(request.user, project),
        "is_researcher": can_research(request.user, project),
        "articles": page,
        "page": page,
        "runs": project.runs.order_by("-created_at")[:20],
        "sees_runs": sees_predictions(request.user, project),  # blind annotators: no runs (their pairs are predictions)
        "methods": run_options.available_methods() if can_research(request.user, project) else [],
    }
    return render(request, "projects/detail.html", context)


@login_required
def article_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The article's versions side by side, ``ARTICLE_PAGE_SENTENCES`` sentences of each at a time:
    page n shows every document's sentences n·k … (n+1)·k − 1 in order (``?page=``, as on the
    project page), so a 300,000-sentence article costs no more than a short one."""
    article = get_object_or_404(Article.objects.filter(project__in=visible_projects(request.user)).select_related("project"),
                                pk=pk)
    size = article_size.page_sentences()
    documents = list(article.documents.annotate(sentence_count=Count("sentences")).order_by("rank"))
    longest = max((d.sentence_count for d in documents), default=0)
    page = Paginator(range(longest), size).get_page(request.GET.get("page"))
    first = page.start_index() - 1 if longest else 0
    shown = []
    for doc in documents:
        sentences = list(doc.sentences.select_related("paragraph").order_by("index")[first:first + size])
        shown.append((doc, sentences, {"from": first + 1, "to": first + len(sentences), "of": doc.sentence_count}))
    return render(request, "projects/article.html", {"article": article, "documents": shown, "page": page,
                                                     "is_researcher": can_research(request.user, article.project)})


def _import_form(request: HttpRequest, project: Project) -> dict:
    """The import page's context: each option of the import as its declaration says (:func:`import_options`: its
    choices, default and help), its ``value`` the raw text the user typed (a POST) or the default's. Nothing here
    reads a value: ``ImportRequest.parse`` does, once; a bool's ``checked`` is the declaration's own reading of the
    text (an unticked box is not sent, so a POST shows its default: unticked)."""
    typed = request.POST if request.method == "POST" else {}
    fields = {}
    for option in import_options():
        value = typed[option.name] if option.name in typed else ("" if option.default in (None, False) else str(option.default))
        fields[option.name] = {"value": value, "choices": option.choices, "help": option.help,
                               "checked": option.type == "bool" and option.from_text(value) is True}
    meanings = fields["gold_meaning"]["choices"]
    return {"project": project, "fields": fields, "format_help": import_formats.formats(), "problems": [],
            "result": None, "job": None, "limits": importing.Limits.from_settings(),
            "gold_meanings": [(value, gold_meanings.HELP[value]) for value in meanings]}


def _import_refused(request: HttpRequest, error: Exception, project: Project) -> HttpResponse:
    """Nothing imported: the form again with every problem (413 when the upload is over a size limit)."""
    context = {**_import_form(request, project), "problems": [str(p) for p in getattr(error, "problems", [error])]}
    return render(request, "projects/import.html", context, status=error.status)


@login_required
@researchers_only("only researchers import corpora")
@refuses_with(_import_refused)
def project_import(request: HttpRequest, project: Project) -> HttpResponse:
    context = _import_form(request, project)
    if request.method != "POST":
        return render(request, "projects/import.html", context)
    uploads = request.FILES.getlist("files")
    cut_off = import_uploads.upload_problem(request)
    submitted = {o.name: request.POST.get(o.name, "") for o in import_options() if o.name in request.POST}
    options = importing.ImportRequest.parse(submitted, text=True)
    if cut_off is not None:
        raise importing.CorpusImportError(cut_off)
    if not uploads:
        raise importing.CorpusImportError.one("", "Choose at least one file.")
    received = import_uploads.receive(project, uploads, options, user=request.user,
                                      paths=request.POST.getlist("paths") or None)
    context["result"], context["job"] = received.result, received.job
    if received.job is not None:  # static/js/import.js polls the job until it ends
        context["job_page"] = {"job": received.job.pk, "job_api": reverse("job-detail", args=[received.job.pk]),
                               "cancel_api": reverse("job-cancel", args=[received.job.pk]),
                               "project_url": reverse("project-detail", args=[project.pk])}
    return render(request, "projects/import.html", context, status=202 if received.job is not None else 200)


@login_required
@require_POST
@researchers_only("only researchers start alignment runs")
@refuses_with(back_with_message("project-detail", prefix="Run not started: ", pk_of=lambda project: project.pk),
              also=(validation.InputError,))  # the params field's JSON; the run's refusals are DomainErrors
def start_run(request: HttpRequest, project: Project) -> HttpResponse:
    params = load_json(request.POST.get("params") or "{}", what="params")
    run = alignment_runs.start_run(project, request.POST.get("method", ""), params=params, user=request.user)
    # the run-<id> tag lets static/js/project.js clear the message once the run has finished
    messages.success(request, f"Alignment run #{run.pk} ({run.method}) queued.", extra_tags=f"run-{run.pk}")
    return redirect("project-detail", pk=project.pk)


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness + database check for load balancers and docker-compose."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")
