"""The architecture holds (docs/architecture.md): each module of ``xjax/_src`` imports only
from its own layer or lower ones at module level; function-local imports are few and say
why; the public modules only re-export; no module assigns another module's attributes.

The checks read the source (``ast``), so they see every module, loaded or not.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "xjax"
SRC = PACKAGE / "_src"

# Lowest first; a module may import from its own layer and the layers before it.
LAYERS = [
    ("runtime", {"runtime"}),
    ("core", {"core"}),
    ("lowering", {"lowering"}),
    ("lax", {"lax"}),
    ("interpreters", {"interpreters"}),
    ("higher_order", {"higher_order"}),
    ("transformations", {"transformations"}),
    ("numpy", {"numpy"}),
    ("libraries", {"random", "nn", "scipy", "image", "example_libraries", "experimental",
                   "extend", "api", "testing", "jax_adapters"}),
]
RANK = {folder: rank for rank, (_, folders) in enumerate(LAYERS) for folder in folders}
MAX_LOCAL_IMPORTS = 100
# Programs run with ``python -m`` that load the whole public package on purpose, and the
# import hook, whose ``jax`` module forwards to the public package.
MAY_IMPORT_PUBLIC = {"xjax._src.testing.rule_matrix", "xjax._src.jax_adapters.import_hook"}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root):
    return {_module_name(p): p for p in sorted(root.rglob("*.py"))}


SRC_MODULES = _modules(SRC)


def _layer(module: str):
    parts = module.split(".")
    if parts[:2] != ["xjax", "_src"] or len(parts) < 3:
        return None
    return RANK.get(parts[2])


def _imports(tree):
    """(node, imported module names, is function-local) for each xjax import."""
    out = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names if a.name.split(".")[0] == "xjax"]
                if names:
                    out.append((child, names, local))
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0 \
                    and child.module.split(".")[0] == "xjax":
                targets = [f"{child.module}.{a.name}" if f"{child.module}.{a.name}" in
                           SRC_MODULES else child.module for a in child.names]
                out.append((child, targets, local))
            visit(child, local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda)))
    visit(tree, False)
    return out


PARSED = {m: (p, ast.parse(p.read_text(), str(p))) for m, p in SRC_MODULES.items()}


def test_every_src_folder_has_a_layer():
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - set(RANK) == set(), "give each folder of xjax/_src a layer"
    loose = sorted(p.name for p in SRC.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules of xjax/_src belong in a layer's folder: {loose}"


@pytest.mark.parametrize("module", sorted(SRC_MODULES))
def test_module_level_imports_point_down(module):
    path, tree = PARSED[module]
    rank = _layer(module)
    wrong = []
    for node, targets, local in _imports(tree):
        if local:
            continue
        for target in targets:
            if not target.startswith("xjax._src"):
                if module not in MAY_IMPORT_PUBLIC:
                    wrong.append(f"line {node.lineno}: {target} is public; import from _src")
            elif _layer(target) is not None and rank is not None and _layer(target) > rank:
                wrong.append(f"line {node.lineno}: {target} is in a higher layer")
    assert wrong == [], f"{module}: " + "; ".join(wrong)


def _local_imports():
    found = []
    for module, (path, tree) in PARSED.items():
        lines = path.read_text().splitlines()
        for node, targets, local in _imports(tree):
            if local:
                found.append((module, node.lineno, lines[node.end_lineno - 1]))
    return found


def test_function_local_imports_are_few_and_give_a_reason():
    found = _local_imports()
    silent = [f"{m}:{line}" for m, line, text in found if "#" not in text]
    assert silent == [], "a function-local import needs a one-line '# reason': " + \
        ", ".join(silent)
    assert len(found) < MAX_LOCAL_IMPORTS, f"{len(found)} function-local imports"


def _public_modules():
    return {m: p for m, p in _modules(PACKAGE).items() if not m.startswith("xjax._src")}


def _is_main_guard(statement) -> bool:
    """``if __name__ == "__main__": main()``: one call of an imported function."""
    return (isinstance(statement, ast.If) and ast.unparse(statement.test) ==
            "__name__ == '__main__'" and not statement.orelse and len(statement.body) == 1
            and isinstance(statement.body[0], ast.Expr)
            and isinstance(statement.body[0].value, ast.Call))


@pytest.mark.parametrize("module", sorted(_public_modules()))
def test_public_modules_only_reexport(module):
    tree = ast.parse(_public_modules()[module].read_text())
    logic = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # the docstring
        if _is_main_guard(statement):
            continue  # the entry point of ``python -m xjax.run``
        logic.append(f"line {statement.lineno}: {type(statement).__name__}")
    assert logic == [], f"{module} holds more than re-exports: {logic}"


def _imported_names(tree):
    names = set()
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        elif isinstance(statement, ast.ImportFrom):
            names.update(a.asname or a.name for a in statement.names)
    return names


@pytest.mark.parametrize("module", sorted(SRC_MODULES))
def test_no_module_assigns_another_modules_attributes(module):
    path, tree = PARSED[module]
    imported = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id in imported:
                found.append(f"line {node.lineno}: {target.value.id}.{target.attr} = ...")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in imported:
            found.append(f"line {node.lineno}: {node.func.id}({node.args[0].id}, ...)")
    assert found == [], f"{module} changes what another module owns: {found}"
