"""The layers import downwards only (pages → ui → figures → core; i18n beside them), inside core the
tokenizers and the loaders keep to their rooms, and no two modules import each other, even inside a
function (such a pair was ui/caches/cache.py ↔ ui/page/sidebar.py)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "figures", "ui", "i18n")
BELOW = {"core": set(), "figures": {"core", "i18n"}, "i18n": set(), "ui": {"core", "figures", "i18n"}}


def imports() -> dict[str, set[str]]:
    """module name -> the project modules it imports (anywhere in its file)."""
    graph = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module]
                else:
                    continue
                found.update(n for n in names if n.split(".")[0] in PACKAGES)
            graph[module] = found
    return graph


def test_each_layer_imports_only_the_layers_below_it():
    for module, targets in imports().items():
        layer = module.split(".")[0]
        for target in targets:
            assert target.split(".")[0] in BELOW[layer] | {layer}, f"{module} imports {target}"


def test_no_two_modules_import_each_other():
    graph = imports()
    pairs = {(a, b) for a, targets in graph.items() for b in targets if a in graph.get(b, set()) and a < b}
    assert not pairs, pairs


def test_tokenizers_import_nothing_of_the_rest_of_core():
    """A tokenizer is text -> ids: it knows no model, no loader, no training."""
    for module, targets in imports().items():
        if module.startswith("core.tokenizers"):
            outside = {t for t in targets if not t.startswith("core.tokenizers")}
            assert not outside, f"{module} imports {outside}"


def test_loading_is_imported_only_by_the_pipelines():
    """The model and the tokenizers know nothing of where pretrained weights come from: inside core,
    only the loaders themselves and core.tracing.pipeline (the path a page or a notebook takes) read them."""
    for module, targets in imports().items():
        if module.startswith("core.") and not module.startswith(("core.loading", "core.tracing.pipeline")):
            loading = {t for t in targets if t.startswith("core.loading")}
            assert not loading, f"{module} imports {loading}"


def test_the_model_imports_nothing_of_loading_training_teaching_or_tracing():
    """core.model is the paper's Transformer (it reads the tokenizers' special ids): where weights come
    from, how they are trained, what a class is asked and how a page runs a sentence build on it,
    never the other way round."""
    above = ("core.loading", "core.training", "core.teaching", "core.tracing")
    for module, targets in imports().items():
        if module.startswith("core.model"):
            outside = {t for t in targets if t.startswith(above)}
            assert not outside, f"{module} imports {outside}"


def test_the_drawing_helpers_know_no_stage_of_the_paper():
    """figures.drawing is how any figure is drawn; the stages' figures build on it, never the other way."""
    for module, targets in imports().items():
        if module.startswith("figures.drawing"):
            stages = {t for t in targets if t.startswith("figures.") and not t.startswith("figures.drawing")}
            assert not stages, f"{module} imports {stages}"


def test_no_folder_holds_more_than_twelve_modules():
    """Packages named for concepts: a folder that grows past a dozen modules is split by concept."""
    for package in ("core", "ui", "figures"):
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            assert len(modules) <= 12, f"{folder.relative_to(ROOT)}: {len(modules)} modules"


def test_the_ui_facade_is_the_pages_door_and_only_theirs():
    """``import ui`` hands the pages their dozen names (``ui.page_setup``, ``ui.t``…): pages and their
    sections take those names from the facade, never from their home; the rest of ui takes them from
    their home, never from the facade. One path per name, fixed by the importer's layer."""
    facade = {
        alias.asname or alias.name
        for node in ast.parse((ROOT / "ui" / "__init__.py").read_text(encoding="utf-8")).body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    found = []
    for folder in ("pages", "ui"):
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative == "ui/__init__.py":
                continue
            above = relative.startswith(("pages/", "ui/sections/"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                plain = isinstance(node, ast.Import) and any(a.name == "ui" for a in node.names)
                named = isinstance(node, ast.ImportFrom) and node.module == "ui" and not node.level
                facade_import = plain or named
                if facade_import and not above:
                    found.append(f"{relative} imports the ui facade: import the home module")
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ui."):
                    homes = {a.name for a in node.names} & facade
                    if above and homes:
                        found.append(f"{relative} imports {homes} from {node.module}: use ui.")
    assert not found, found
