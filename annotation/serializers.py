"""DRF serializers: shape and validate data only; writes that matter go through services."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from workers.engine import SUPPORTED_LANGUAGES

from . import models
from .label_schemes import kinds
from .permissions import can_research
from .services.background import jobs, liveness
from .services.background.registry import Queue
from .services.review import adjudication
from .services.scoring import calibration
from .validation import MAX_ID

User = get_user_model()

#: What annotators see instead of a failed run's error text.
HIDDEN_ERROR = "The run failed; the project's researchers can see why."


class LabelSchemeSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=[])  # the registered kinds (annotation/label_schemes/), set per instance

    class Meta:
        model = models.LabelScheme
        fields = ["id", "slug", "name", "kind", "values", "dimensions", "builtin"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k.name, k.label) for k in kinds()]


class ProjectSerializer(serializers.ModelSerializer):
    label_scheme = serializers.SlugRelatedField(slug_field="slug", queryset=models.LabelScheme.objects.all())
    role = serializers.SerializerMethodField()

    class Meta:
        model = models.Project
        fields = ["id", "name", "description", "language", "label_scheme", "config", "created_at", "role"]
        read_only_fields = ["created_at"]

    def get_role(self, project: models.Project) -> str | None:
        from .permissions import role_in

        request = self.context.get("request")
        return role_in(request.user, project) if request else None

    def validate_language(self, value: str) -> str:
        if value not in SUPPORTED_LANGUAGES:
            raise serializers.ValidationError(f"unsupported language; choose one of {', '.join(SUPPORTED_LANGUAGES)}")
        return value

    def validate_config(self, value) -> dict:
        """The settings page's schema (``services.settings.config_schema``): each bad key and why."""
        from .services.settings import config_schema

        if self.partial:  # a JSON merge patch: the merged config is checked by project_settings.update_project
            if not isinstance(value, dict):
                raise serializers.ValidationError("a partial update's config must be a JSON object (a merge patch)")
            return value
        problems = config_schema.problems(value)
        if problems:
            raise serializers.ValidationError(problems)
        return value


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.SlugRelatedField(source="user", slug_field="username", queryset=User.objects.all())

    class Meta:
        model = models.Membership
        fields = ["id", "username", "role", "created_at"]
        read_only_fields = ["created_at"]


class SentenceSerializer(serializers.ModelSerializer):
    paragraph = serializers.IntegerField(source="paragraph.index", read_only=True)

    class Meta:
        model = models.Sentence
        fields = ["id", "index", "paragraph", "text"]


class DocumentSerializer(serializers.ModelSerializer):
    sentence_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = models.Document
        fields = ["id", "article", "level", "rank", "sentence_count"]


class DocumentDetailSerializer(DocumentSerializer):
    """A document with one page of its sentences (``views.api_corpus.DocumentViewSet.retrieve`` sets
    ``page_sentences``, ``offset`` and ``next_offset``: the ``?offset=`` of the next page, or null)."""

    sentences = SentenceSerializer(source="page_sentences", many=True, read_only=True)
    offset = serializers.IntegerField(read_only=True)
    next_offset = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta(DocumentSerializer.Meta):
        fields = DocumentSerializer.Meta.fields + ["sentences", "offset", "next_offset"]


class ArticleSerializer(serializers.ModelSerializer):
    documents = DocumentSerializer(many=True, read_only=True)

    class Meta:
        model = models.Article
        fields = ["id", "project", "title", "source", "meta", "created_at", "documents"]
        read_only_fields = ["created_at"]


class AlignmentRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = models.AlignmentRun
        fields = [
            "id", "project", "method", "params", "level_pairs", "model_version", "queue", "status", "progress",
            "message", "error", "result", "timings", "attempts", "articles_total", "articles_done", "pair_count",
            "created_at", "started_at", "finished_at", "heartbeat_at", "worker", "worker_lost", "retryable", "chunks",
            "scores",
        ]
        read_only_fields = [f for f in fields if f not in ("project", "method", "params", "level_pairs", "model_version",
                                                           "queue")]

    queue = serializers.ChoiceField(choices=[q.value for q in Queue], default=Queue.GPU.value,
                                    help_text="the worker queue: gpu (falls back to CPU) or cpu")

    worker_lost = serializers.SerializerMethodField(help_text="running, but its worker stopped stamping its heartbeat")

    chunks = serializers.SerializerMethodField(help_text="a chunked run: chunks done/total, pairs written, workers that ran chunks")

    def get_chunks(self, run: models.AlignmentRun) -> dict:
        from .services.alignment.run_chunks import chunk_summary

        return chunk_summary(run.pk)

    retryable = serializers.SerializerMethodField(help_text="POST retry/ would queue it again now")

    scores = serializers.SerializerMethodField(help_text=(
        "Task 1/Task 2 precision, recall and F1 against the project's exhaustive gold, with the number of articles and "
        "whether they are too few to trust (services/training/run_scores.py); only in a run's detail, null in lists"))

    def get_scores(self, run: models.AlignmentRun) -> dict | None:
        if not self.context.get("scores"):
            return None
        from .services.training.run_scores import api_scores

        return api_scores(run)  # a big project's: kept, with as_of/current; none kept yet: 202 (BeingComputed)

    def get_worker_lost(self, run: models.AlignmentRun) -> bool:
        return liveness.is_lost(run)

    def get_retryable(self, run: models.AlignmentRun) -> bool:
        return jobs.can_retry(run)

    def to_representation(self, run: models.AlignmentRun) -> dict:
        """A failed run's ``error`` (a traceback, often) only for the project's researchers and admins."""
        data = super().to_representation(run)
        request = self.context.get("request")
        if data.get("error") and request is not None and not can_research(request.user, run.project_id):
            data["error"] = HIDDEN_ERROR
        return data


class JobSerializer(serializers.ModelSerializer):
    class Meta:
        model = models.Job
        fields = ["id", "project", "kind", "params", "status", "progress", "message", "error", "result", "timings",
                  "created_at", "started_at", "finished_at", "attempts", "heartbeat_at", "worker", "checkpoint",
                  "worker_lost", "retryable"]
        read_only_fields = fields

    worker_lost = serializers.SerializerMethodField(help_text="running, but its worker stopped stamping its heartbeat")

    retryable = serializers.SerializerMethodField(help_text="POST retry/ would queue it again now")

    def get_worker_lost(self, job: models.Job) -> bool:
        return liveness.is_lost(job)

    def get_retryable(self, job: models.Job) -> bool:
        return jobs.can_retry(job)


class CandidatePairSerializer(serializers.ModelSerializer):
    complex = serializers.ListField(source="complex_indices", child=serializers.IntegerField(), read_only=True)
    simple = serializers.ListField(source="simple_indices", child=serializers.IntegerField(), read_only=True)
    complex_text = serializers.SerializerMethodField()
    simple_text = serializers.SerializerMethodField()
    origin = serializers.CharField(read_only=True, allow_null=True,
                                   help_text="model, candidate, manual, derived, import, mined; null for annotators")
    article_title = serializers.CharField(source="article.title", read_only=True)

    class Meta:
        model = models.CandidatePair
        fields = ["id", "article", "article_title", "complex_document", "simple_document", "complex", "simple", "complex_text",
                  "simple_text", "score", "predicted_label", "features", "origin", "identical", "created_at"]
        read_only_fields = fields

    def to_representation(self, pair: models.CandidatePair) -> dict:
        data = super().to_representation(pair)
        if pair.article.project_id in self.context.get("annotator_only_projects", ()):
            data["origin"] = None  # it could single out the hidden test questions (e.g. imported gold pairs)
        if pair.article.project_id in self.context.get("blind_projects", ()):
            data["score"] = None
            data["predicted_label"] = ""
            data["features"] = {}  # model scores and filter outputs would reveal the prediction
            data["predictions"] = []
        else:
            # every run's prediction of this sentence pair, oldest run first
            rows = self.context.get("predictions")  # a list page's rows (services.alignment.pair_rows)
            data["predictions"] = list(rows.get(pair.pk, ())) if rows is not None else [
                {"run": p.run_id, "method": p.run.method, "score": p.score, "label": p.predicted_label}
                for p in sorted(pair.predictions.all(), key=lambda p: p.run_id)]
            run = self.context.get("run")
            own = next((p for p in data["predictions"] if p["run"] == run), None) if run is not None else None
            if own is not None:  # a run's pair list shows what that run produced
                data["score"], data["predicted_label"] = own["score"], own["label"]
        return data

    def _text(self, pair: models.CandidatePair, side: str) -> str:
        texts = self.context.get("texts")  # a list page's rows (services.alignment.pair_rows)
        if texts is not None:
            return texts.get(pair.pk, {}).get(side, "")
        sentences = [m.sentence for m in pair.members.all() if m.side == side]
        return " ".join(s.text for s in sorted(sentences, key=lambda s: s.index))

    def get_complex_text(self, pair: models.CandidatePair) -> str:
        return self._text(pair, models.Side.COMPLEX)

    def get_simple_text(self, pair: models.CandidatePair) -> str:
        return self._text(pair, models.Side.SIMPLE)


def pair_list_rows(pairs: list[dict], context: dict) -> list[dict]:
    """What :class:`CandidatePairSerializer` answers for each of a list page's ``pairs`` (rows of
    :data:`annotation.services.alignment.pair_rows.LIST_COLUMNS`; the same keys and values:
    ``tests/annotation/views/test_pair_list_rows.py``), built as plain dicts from the page's
    ``texts`` and ``predictions`` rows (:func:`annotation.services.alignment.pair_rows.texts_and_predictions`).
    The serializer's fields cost about 0.2 ms a pair, most of the time of a page of 1,000 (issue 37: the
    client reads a million pairs); here a pair is one dict."""
    created = serializers.DateTimeField()
    blind, hidden_origin = context.get("blind_projects", ()), context.get("annotator_only_projects", ())
    texts, predictions, run = context.get("texts", {}), context.get("predictions", {}), context.get("run")
    complex_side, simple_side = str(models.Side.COMPLEX), str(models.Side.SIMPLE)
    key_indices = models.key_indices
    out = []
    for pair in pairs:
        pk, project, score, origin = pair["id"], pair["article__project_id"], pair["score"], pair["origin"]
        sides = texts.get(pk, {})
        row = {"id": pk, "article": pair["article_id"], "article_title": pair["article__title"],
               "complex_document": pair["complex_document_id"], "simple_document": pair["simple_document_id"],
               "complex": key_indices(pair["complex_key"]), "simple": key_indices(pair["simple_key"]),
               "complex_text": sides.get(complex_side, ""), "simple_text": sides.get(simple_side, ""),
               "score": None if score is None else float(score), "predicted_label": str(pair["predicted_label"]),
               "features": pair["features"], "origin": None if origin is None or project in hidden_origin
               else str(origin), "identical": bool(pair["identical"]),
               "created_at": created.to_representation(pair["created_at"]) if pair["created_at"] else None}
        if project in blind:
            row.update(score=None, predicted_label="", features={}, predictions=[])
        else:
            row["predictions"] = list(predictions.get(pk, ()))
            own = next((p for p in row["predictions"] if p["run"] == run), None) if run is not None else None
            if own is not None:
                row["score"], row["predicted_label"] = own["score"], own["label"]
        out.append(row)
    return out


class LabelInputFields(serializers.Serializer):
    """A label's input fields, declared once for every endpoint that writes a label (the queue's submit,
    ``POST`` and ``PATCH /api/labels/``): their JSON types only. Trimming, the scheme's values and text
    limits are :meth:`annotation.services.review.label_input.LabelInput.from_data`'s, one rule for all."""

    value = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)
    ratings = serializers.DictField(required=False, default=dict)
    comment = serializers.CharField(required=False, allow_blank=True, allow_null=True, default=None,
                                    trim_whitespace=False, help_text="null or left out: empty (an edit keeps it)")
    seconds = serializers.FloatField(required=False, default=0.0)
    client_token = serializers.UUIDField(required=False, allow_null=True, default=None)
    change = serializers.BooleanField(write_only=True, required=False, default=False,
                                      help_text="change a label given before (else a different value answers 409)")


class LabelSerializer(LabelInputFields, serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    article = serializers.IntegerField(source="pair.article_id", read_only=True)
    article_title = serializers.CharField(source="pair.article.title", read_only=True)
    is_test_question = serializers.BooleanField(read_only=True, allow_null=True,
                                                help_text="a hidden test question's answer; null for annotators")

    class Meta:
        model = models.Label
        fields = ["id", "pair", "article", "article_title", "annotator", "value", "ratings", "comment", "seconds",
                  "server_seconds", "source", "is_test_question", "client_token", "change", "created_at", "updated_at"]
        read_only_fields = ["annotator", "server_seconds", "source", "is_test_question", "created_at", "updated_at"]

    def to_representation(self, label: models.Label) -> dict:
        data = super().to_representation(label)
        if label.pair.article.project_id in self.context.get("annotator_only_projects", ()):
            data["is_test_question"] = None  # test questions are hidden from annotators, before and after
        return data


class LabelEdit(LabelInputFields):
    """An edit of one's own label: the value, ratings and comment (no timing, no token)."""

    seconds = None
    client_token = None
    change = None


class MyLabelSerializer(LabelSerializer):
    """One's own label with its pair's two sides' text (the "My labels" page)."""

    complex_text = serializers.SerializerMethodField()
    simple_text = serializers.SerializerMethodField()

    class Meta(LabelSerializer.Meta):
        fields = LabelSerializer.Meta.fields + ["complex_text", "simple_text"]

    @staticmethod
    def _text(label: models.Label, side: str) -> str:
        members = sorted((m.sentence for m in label.pair.members.all() if m.side == side), key=lambda s: s.index)
        return " ".join(s.text for s in members)

    def get_complex_text(self, label: models.Label) -> str:
        return self._text(label, models.Side.COMPLEX)

    def get_simple_text(self, label: models.Label) -> str:
        return self._text(label, models.Side.SIMPLE)


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)
    action_text = serializers.SerializerMethodField(help_text="the action in words")

    class Meta:
        model = models.AuditEvent
        fields = ["id", "created_at", "actor", "project", "action", "action_text", "target", "details"]
        read_only_fields = fields

    def get_action_text(self, event: models.AuditEvent) -> str:
        from .services.audit import ACTIONS

        return ACTIONS.get(event.action, event.action)


# --- Request bodies of the API views (input only) ----------------------------------------------


class ProposalDecisionInput(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class DecisionInput(serializers.Serializer):
    pair = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    value = serializers.CharField(max_length=50)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class AutoGoldInput(serializers.Serializer):
    policy = serializers.ChoiceField(choices=adjudication.POLICIES, default="majority")
    confirm = serializers.BooleanField(required=False, default=False)
    expected = serializers.IntegerField(required=False, min_value=0, max_value=MAX_ID, allow_null=True, default=None)


class CalibrateInput(serializers.Serializer):
    method = serializers.ChoiceField(choices=calibration.METHODS)
    run = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=MAX_ID)


class Credentials(serializers.Serializer):
    username = serializers.CharField(max_length=150, trim_whitespace=False)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class PromoteInput(serializers.Serializer):
    confirm = serializers.BooleanField(required=False, default=False)


class SubmitInput(LabelInputFields):
    pair = serializers.IntegerField(min_value=1, max_value=MAX_ID)


class PairInput(serializers.Serializer):
    pair = serializers.IntegerField(min_value=1, max_value=MAX_ID)
