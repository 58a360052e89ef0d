from django.contrib import admin

from . import models


class MembershipInline(admin.TabularInline):
    model = models.Membership
    extra = 0


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "language", "label_scheme", "created_at")
    inlines = [MembershipInline]


@admin.register(models.Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("title", "project", "source", "created_at")
    list_filter = ("project",)
    search_fields = ("title",)


def _listed(model: type, **options: object) -> None:
    """Register ``model`` with a plain ``ModelAdmin`` that only says which columns to list, filter and search."""
    admin.site.register(model, type(f"{model.__name__}Admin", (admin.ModelAdmin,), options))


_listed(models.Document, list_display=("article", "level", "rank"), list_filter=("article__project",))
_listed(models.Sentence, list_display=("document", "index", "text"), list_select_related=("document__article",))
_listed(models.AlignmentRun, list_display=("id", "project", "method", "status", "progress", "pair_count", "created_at"),
        list_filter=("status", "method"))
_listed(models.CandidatePair,
        list_display=("id", "article", "complex_key", "simple_key", "score", "predicted_label", "origin", "identical"),
        list_filter=("origin", "predicted_label", "identical"), raw_id_fields=("article", "complex_document", "simple_document"))
_listed(models.Prediction, list_display=("id", "run", "pair", "score", "predicted_label", "rank"), raw_id_fields=("run", "pair"))
_listed(models.LabelChange, list_display=("pair", "annotator", "old_value", "new_value", "source", "changed_by", "created_at"),
        raw_id_fields=("pair", "label"))
_listed(models.Label, list_display=("pair", "annotator", "value", "seconds", "is_test_question", "created_at"), raw_id_fields=("pair",))
admin.site.register(models.LabelScheme)
admin.site.register(models.Membership)
admin.site.register(models.ParagraphAlignment)
admin.site.register(models.ModelVersion)
admin.site.register(models.Job)
admin.site.register(models.Assignment)
admin.site.register(models.AdjudicationChange)
admin.site.register(models.ArticleCompletion)
admin.site.register(models.ParagraphProposal)
admin.site.register(models.Adjudication)
admin.site.register(models.Split)
