"""Routes of the review area (included from annotation/urls/__init__.py): adjudication, agreement,
dashboard and threshold calibration — pages and their API."""
from django.urls import include, path

from ..views import api_review, review

api = "api/projects/<int:project_pk>/"

urlpatterns: list = [
    path("projects/<int:pk>/adjudicate/", review.adjudicate, name="project-adjudicate"),
    path("projects/<int:pk>/dashboard/", review.dashboard_page, name="project-dashboard"),
    path(api + "adjudication/", include([
        path("", api_review.AdjudicationView.as_view(), name="review-adjudication"),
        path("decided/", api_review.DecidedView.as_view(), name="review-decided"),
        path("<int:pair_pk>/", api_review.PairReviewView.as_view(), name="review-pair"),
        path("<int:pair_pk>/revert/", api_review.RevertView.as_view(), name="review-revert"),
    ])),
    path(api + "gold/", api_review.AutoGoldView.as_view(), name="review-gold"),
    path(api + "agreement/", api_review.AgreementView.as_view(), name="review-agreement"),
    path(api + "dashboard/", api_review.DashboardView.as_view(), name="review-dashboard"),
    path(api + "score-distribution/", api_review.ScoreDistributionView.as_view(), name="review-score-distribution"),
    path(api + "calibrate/", api_review.CalibrateView.as_view(), name="review-calibrate"),
]
