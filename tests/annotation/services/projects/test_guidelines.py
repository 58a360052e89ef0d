"""Guidelines: built-in defaults per scheme, safe Markdown, saved in project.config."""
from __future__ import annotations

import pytest

from annotation.label_schemes import BUILTIN_SCHEMES
from annotation.models import LabelScheme
from annotation.services.projects import guidelines


@pytest.mark.django_db
@pytest.mark.parametrize("slug", [s["slug"] for s in BUILTIN_SCHEMES])
def test_every_builtin_scheme_has_guidelines_defining_each_label(slug):
    scheme = LabelScheme.objects.get(slug=slug)
    text = guidelines.default_guidelines(scheme)
    names = [str(v["name"]) for v in scheme.values] if scheme.kind != "likert" else ["**1**", "**5**"]
    for name in names:
        assert name in text, name
    for dimension in scheme.dimensions or []:
        assert dimension.capitalize() in text


def test_markdown_with_script_renders_escaped():
    html = guidelines.render("# Title\n\n<script>alert('x')</script>\n\n**bold** <img src=x onerror=alert(1)>")
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "<strong>bold</strong>" in html and "<h1>Title</h1>" in html


def test_javascript_links_are_not_made_into_links():
    assert "href" not in guidelines.render("[click](javascript:alert(1))")


def test_a_project_uses_its_schemes_defaults_until_it_has_its_own(project):
    assert guidelines.project_guidelines(project) == guidelines.default_guidelines(project.label_scheme)
    guidelines.update(project, "# Ours\r\n\r\nLabel **aligned** when…  ")
    project.refresh_from_db()
    assert project.config["guidelines"] == "# Ours\n\nLabel **aligned** when…\n"
    assert guidelines.project_guidelines(project).startswith("# Ours")


def test_blank_or_default_text_goes_back_to_the_defaults(project):
    guidelines.update(project, "# Ours")
    guidelines.update(project, "   ")
    project.refresh_from_db()
    assert "guidelines" not in project.config
    guidelines.update(project, guidelines.default_guidelines(project.label_scheme))
    project.refresh_from_db()
    assert "guidelines" not in project.config


def test_too_long_guidelines_are_refused(project):
    with pytest.raises(guidelines.GuidelinesError, match="at most"):
        guidelines.update(project, "x" * (guidelines.MAX_LENGTH + 1))


def test_the_version_changes_with_the_text():
    assert guidelines.version("a") != guidelines.version("b")
    assert guidelines.version("a") == guidelines.version("a")
