"""Routes of the core: the REST router, login, home, project and article pages (the queue API: ``queue.py``)."""
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter

from ..views import accounts, annotate, api_corpus, api_labels, api_projects, api_runs, api_tokens, pages

router = DefaultRouter()
router.register("projects", api_projects.ProjectViewSet, basename="project")
router.register("label-schemes", api_projects.LabelSchemeViewSet, basename="label-scheme")
router.register("articles", api_corpus.ArticleViewSet, basename="article")
router.register("documents", api_corpus.DocumentViewSet, basename="document")
router.register("runs", api_runs.AlignmentRunViewSet, basename="run")
router.register("jobs", api_runs.JobViewSet, basename="job")
router.register("pairs", api_runs.CandidatePairViewSet, basename="pair")
router.register("labels", api_labels.LabelViewSet, basename="label")

members = api_projects.MembershipViewSet.as_view({"get": "list", "post": "create"})
member = api_projects.MembershipViewSet.as_view({"delete": "destroy"})

api_patterns = [
    path("", include(router.urls)),
    path("projects/<int:project_pk>/members/", members, name="project-members"),
    path("projects/<int:project_pk>/members/<int:pk>/", member, name="project-member"),
    path("projects/<int:project_pk>/import/", api_corpus.CorpusUploadView.as_view(), name="project-import"),
    path("token/", api_tokens.TokenView.as_view(), name="api-token"),
    path("token/rotate/", api_tokens.RotateTokenView.as_view(), name="api-token-rotate"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
]

urlpatterns = [
    path("api/", include(api_patterns)),
    path("login/", accounts.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", pages.healthz, name="healthz"),
    path("", pages.home, name="home"),
    path("projects/new/", pages.create_project, name="project-create"),
    path("projects/<int:pk>/", pages.project_detail, name="project-detail"),
    path("projects/<int:pk>/import/", pages.project_import, name="project-import-page"),
    path("projects/<int:pk>/runs/", pages.start_run, name="project-start-run"),
    path("projects/<int:pk>/annotate/", annotate.annotate, name="project-annotate"),
    path("articles/<int:pk>/", pages.article_detail, name="article-detail"),
]
