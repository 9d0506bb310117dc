"""The layers import downwards only (pages → ui → figures → core; i18n beside them), inside core the
tokenizers and the loaders keep to their rooms, and no two modules import each other, even inside a
function (such a pair was ui/cache.py ↔ ui/sidebar.py)."""

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
    only the loaders themselves and core.pipeline (the path a page or a notebook takes) read them."""
    for module, targets in imports().items():
        if module.startswith("core.") and not module.startswith(("core.loading", "core.pipeline")):
            loading = {t for t in targets if t.startswith("core.loading")}
            assert not loading, f"{module} imports {loading}"
