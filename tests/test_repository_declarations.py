"""One way to declare (issue 29, deliverable 4): one registry class behind every registry, and engine
configs built from their ``Option`` schema rather than checked by hand."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("annotation", "workers", "alignapp")
REGISTRY_CLASS = "workers/engine/registry.py:Registry"
CONFIG_BUILDERS = {  # the engine configs and the method that builds each from a dict
    "workers/engine/training_config.py": ("TrainConfig", "build"),
    "workers/engine/methods/crf_config.py": ("CRFAlignerConfig", "build"),
    "workers/engine/threshold.py": ("ThresholdConfig", "build"),
    "workers/engine/mining/config.py": ("MiningConfig", "from_dict"),
    "workers/engine/crf/model.py": ("CRFConfig", "from_dict"),
}


def product_modules(root: Path):
    for top in PRODUCT:
        for path in sorted((root / top).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def registry_problems(root: Path) -> list[str]:
    """Registry classes other than the one, and module-level dicts a ``register*`` function fills."""
    problems = []
    for shown, tree in product_modules(root):
        problems += [f"{shown}:{node.name} is another registry class" for node in ast.walk(tree)
                     if isinstance(node, ast.ClassDef) and node.name.endswith("Registry")
                     and f"{shown}:{node.name}" != REGISTRY_CLASS]
        dicts = {t.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
                 and isinstance(node.value, ast.Dict)
                 for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef) and func.name.startswith("register"):
                problems += [f"{shown}:{node.lineno} {func.name}() fills the module dict {node.value.id}"
                             for node in ast.walk(func) if isinstance(node, ast.Subscript)
                             and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                             and node.value.id in dicts]
    return problems


def hand_check_problems(root: Path) -> list[str]:
    """Config builders that do not build through the schema (``build_config``) or compare an option
    with a number (a range checked by hand)."""
    problems = []
    for shown, (cls, method) in CONFIG_BUILDERS.items():
        tree = ast.parse((root / shown).read_text(encoding="utf-8"))
        [body] = [f for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == cls
                  for f in c.body if isinstance(f, ast.FunctionDef) and f.name == method]
        calls = {getattr(n.func, "id", getattr(n.func, "attr", "")) for n in ast.walk(body) if isinstance(n, ast.Call)}
        if "build_config" not in calls:
            problems.append(f"{shown}: {cls}.{method} does not build through its Option schema (build_config)")
        problems += [f"{shown}:{n.lineno} {cls}.{method} checks a range by hand" for n in ast.walk(body)
                     if isinstance(n, ast.Compare) and any(isinstance(o, ast.Lt | ast.LtE | ast.Gt | ast.GtE)
                                                           for o in n.ops)
                     and any(isinstance(side, ast.Constant) and isinstance(side.value, int | float)
                             for side in (n.left, *n.comparators))]
    return problems


def test_there_is_one_registry_class_and_no_hand_filled_registry_dict():
    assert registry_problems(ROOT) == []


def test_the_registries_are_instances_of_the_one_class():
    from annotation import label_schemes
    from annotation.plugins import Registry
    from annotation.services.corpus.importing import formats as import_formats
    from annotation.services.export import formats as export_formats
    from workers.engine import methods

    found = [name for module in (label_schemes, import_formats, export_formats, methods)
             for name, value in vars(module).items() if isinstance(value, Registry)]
    assert len(found) == 4, found


def test_engine_configs_are_built_from_their_option_schema_without_hand_range_checks():
    assert hand_check_problems(ROOT) == []


def test_reading_the_option_schemas_imports_no_model_library():
    """The Models page and the training API read the training options in the web process, which loads no model
    (the training package imports torch: its options live outside it, in ``training_config``)."""
    import subprocess
    import sys

    code = ("import sys; from workers.engine import MINING_PARAMS, TRAIN_PARAMS, TrainConfig; "
            "TrainConfig.build({'epochs': 3}); print(sorted(m for m in ('torch', 'transformers', "
            "'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_each_engine_config_has_exactly_the_fields_its_schema_declares_with_its_defaults():
    from dataclasses import MISSING, fields

    from workers.engine import MINING_PARAMS, TRAIN_PARAMS, MiningConfig, TrainConfig
    from workers.engine.crf.model import CRF_PARAMS, CRFConfig
    from workers.engine.methods.crf_config import PARAMS, CRFAlignerConfig

    for cls, schema in ((TrainConfig, TRAIN_PARAMS), (MiningConfig, MINING_PARAMS), (CRFConfig, CRF_PARAMS),
                        (CRFAlignerConfig, PARAMS)):
        declared = {o.name: o.default for o in schema}
        built = {f.name: f.default if f.default is not MISSING else f.default_factory() for f in fields(cls)}
        if cls is MiningConfig:
            built["evaluation_set"] = list(built["evaluation_set"])  # a tuple in the frozen dataclass
        assert built == declared, cls.__name__
