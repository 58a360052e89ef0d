"""Routes of the article area: whole-article alignment, paragraph-alignment correction, the
curation of two annotators' alignments and an annotator's articles by state (included from
annotation/urls/__init__.py, before the API router)."""
from django.urls import path

from ..views import api_articles, api_curation, api_paragraph_proposals, articles

urlpatterns = [
    path("articles/<int:pk>/align/", articles.align, name="article-align"),
    path("articles/<int:pk>/paragraphs/", articles.paragraphs, name="article-paragraphs"),
    path("articles/<int:pk>/curate/", articles.curate, name="article-curate"),
    path("api/articles/<int:pk>/curation/", api_curation.CurationView.as_view(), name="article-curation-api"),
    path("api/projects/<int:project_pk>/my-articles/", api_curation.MyArticlesView.as_view(), name="project-my-articles"),
    path("api/articles/<int:pk>/alignment/", api_articles.AlignmentView.as_view(), name="article-alignment-api"),
    path("api/articles/<int:pk>/alignment/completion/", api_articles.CompletionView.as_view(),
         name="article-completion-api"),
    path("api/articles/<int:pk>/paragraphs/", api_articles.ParagraphsView.as_view(), name="article-paragraphs-api"),
    path("api/projects/<int:project_pk>/paragraph-alignment/", api_articles.ProjectParagraphJobView.as_view(),
         name="project-paragraph-job"),
    path("api/projects/<int:project_pk>/paragraph-proposals/", api_paragraph_proposals.ProjectProposalsView.as_view(),
         name="project-paragraph-proposals"),
    path("api/paragraph-proposals/<int:pk>/", api_paragraph_proposals.ProposalView.as_view(), name="paragraph-proposal"),
    path("api/paragraph-proposals/<int:pk>/accept/", api_paragraph_proposals.AcceptView.as_view(),
         name="paragraph-proposal-accept"),
    path("api/paragraph-proposals/<int:pk>/reject/", api_paragraph_proposals.RejectView.as_view(),
         name="paragraph-proposal-reject"),
]
