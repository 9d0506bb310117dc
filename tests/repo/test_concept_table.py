"""docs/contracts.md's table "the paper, one hop from its code": every function or class it names is
defined in the file it names, and the concepts the structure issue listed are all there."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONCEPTS = ["scaled dot-product attention", "multi-head attention", "the causal", "the padding mask",
            "sinusoidal positional encoding", "RoPE", "ALiBi", "the BPE merge loop", "residual + LayerNorm",
            "feed-forward", "greedy decoding", "label smoothing"]


def table_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    section = text.split("## The paper, one hop from its code", 1)[1].split("\n## ", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]


def defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(f"{node.name}.{n.name}" for n in node.body if isinstance(n, ast.FunctionDef))
    return names


def test_every_name_in_the_table_is_defined_in_its_file():
    rows = table_rows()
    assert len(rows) >= len(CONCEPTS)
    for concept, files, names in rows:
        paths = [ROOT / f for f in re.findall(r"`([\w/]+\.py)`", files)]
        assert paths, concept
        defined = set().union(*(defined_names(p) for p in paths))
        for name in re.findall(r"`([\w.]+)`", names):
            assert name in defined, f"{concept}: {name} is not defined in {files}"


def test_the_table_has_every_concept_the_issue_names():
    concepts = " ".join(row[0] for row in table_rows())
    for concept in CONCEPTS:
        assert concept in concepts, concept
