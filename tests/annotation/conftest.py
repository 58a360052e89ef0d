"""Fixtures shared by the annotation app's tests in more than one area."""
from __future__ import annotations

import pytest


@pytest.fixture
def import_dir(settings, tmp_path):
    """Uploads and work folders under this test's tmp_path (to check nothing is left behind); the modules that
    upload ask for it with ``pytest.mark.usefixtures("import_dir")``. Modules with another layout define their own."""
    folder = tmp_path / "imports"
    folder.mkdir()
    settings.IMPORT_DIR = folder
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    return folder
