"""An upload's file names in its staged folder: a folder uploaded as a folder keeps its relative paths
(the import page's folder picker, the API's ``paths``, the client's folder upload), so an HF ``save_to_disk``
folder, the hub converter's ``manual/dev/0000.parquet`` and every folder alignapp exports import as they are."""
from __future__ import annotations

from pathlib import Path

from annotation.services.corpus.importing.problems import CorpusImportError


def upload_names(uploads, paths: list[str] | None = None) -> list[str]:
    """Each upload's name in the staged folder: its relative path when ``paths`` gives them (a folder
    uploaded as a folder: the page's folder picker, the API's ``paths``, the client), else its file name.

    Raises:
        CorpusImportError: a path that is not a plain relative one, ``paths`` not one per file, or two
        files with one name (named as the problem it most likely is: a folder sent without its paths).
    """
    if paths:
        if len(paths) != len(uploads):
            raise CorpusImportError.one("", f"'paths' gives {len(paths)} relative paths for {len(uploads)} files; "
                                            "give one per file, in the order of 'files'")
        names = [_relative(str(p)) for p in paths]
    else:
        names = [Path(u.name or "").name for u in uploads]
    bad = [n for n in names if n in ("", ".", "..")]
    if bad:
        raise CorpusImportError.one("", "an uploaded file has no usable name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated and paths:
        raise CorpusImportError.one(repeated[0], "two uploaded files have this path; send each file once")
    if repeated:
        raise CorpusImportError.one(repeated[0], "two uploaded files have this name: files of different folders? Upload "
                                                 "the folder as a folder (the page's folder choice, the API's 'paths' "
                                                 "with each file's relative path, the client's upload of a folder) or "
                                                 "as a zip")
    parents = {str(Path(n).parent) for n in names}
    clash = sorted(n for n in names if n in parents)
    if clash:
        raise CorpusImportError.one(clash[0], "is a file and a folder of the upload; rename one of them")
    return names


def _relative(path: str) -> str:
    """A relative upload path, cleaned (``./a//b`` → ``a/b``); one leaving the folder is refused."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith(("/", "\\")) or ".." in parts or not parts or any(":" in p or "\x00" in p for p in parts):
        raise CorpusImportError.one(path[:200], "is not a relative path inside the uploaded folder")
    return "/".join(parts)
