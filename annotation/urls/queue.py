"""Routes of the labelling queue's API, first of all routes: the labelling loop's requests are the most
frequent, and Django tries the patterns in order (issue 37: behind every other area and the REST router's
patterns, resolving a submit cost about 0.5 ms of CPU)."""
from django.urls import path

from ..views import api_queue

urlpatterns = [
    path("api/projects/<int:project_pk>/queue/next/", api_queue.NextItemView.as_view(), name="queue-next"),
    path("api/projects/<int:project_pk>/queue/submit/", api_queue.SubmitView.as_view(), name="queue-submit"),
    path("api/projects/<int:project_pk>/queue/skip/", api_queue.SkipView.as_view(), name="queue-skip"),
    path("api/projects/<int:project_pk>/queue/undo/", api_queue.UndoView.as_view(), name="queue-undo"),
    path("api/projects/<int:project_pk>/queue/context/<int:pair_pk>/", api_queue.ContextView.as_view(),
         name="queue-context"),
]
