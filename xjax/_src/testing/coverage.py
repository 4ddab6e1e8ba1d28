"""How much of JAX's public API xjax has: ``python -m xjax._src.testing.coverage``.

Reads the checklist of JAX 0.10.2's public names (``module<TAB>name<TAB>kind``; by default
``../shared/api/jax-0.10.2-public-names.tsv`` beside the repository, or ``--names PATH``) and
sorts every name of every module into one status:

works
    the name exists and no ``raise NotImplementedError`` was found for it;
stub
    the name exists but raises ``NotImplementedError`` whatever it is given: it carries the
    marker of :func:`xjax.core.stubs.not_implemented`, or (found statically, "unmarked") its
    body raises ``NotImplementedError``, or calls a function that does, at its top level
    with no ``return`` anywhere;
partial
    the name exists and works, but ``raise NotImplementedError(...)`` appears in its source
    or in the source of the private helpers (``_name``) it calls by name, one level down,
    passing one of its own parameters other than the first: the messages are listed. A
    static scan: it finds messages, not which arguments reach them, and misses raises deeper
    in the call graph. Some are JAX's own refusals (``out=`` of reductions);

missing
    ``xjax.<module>`` has no such attribute.

Stubs of names that JAX also defines only to raise (``jnp.fromfile``) count as working (they
behave as JAX's) and are listed as such.

The ``tested`` column is a static scan of ``tests/**/*.py``: a name counts as tested where a
test file spells it through an imported alias of its module (``jnp.sin``, ``lax.add``,
``xjax.numpy.linalg.norm``, ``from xjax.numpy import sin`` then ``sin``), or, in a file
that calls ``getattr`` on that module's alias, as a string literal (name-parametrized tests).
It says a test mentions the name, not that every argument is covered.

The headline is the share of the callables (kind ``function``) of ``jax.numpy``,
``jax.numpy.linalg``, ``jax.numpy.fft``, ``jax.nn`` and ``jax.scipy.special`` that exist
and work (``works`` + ``partial`` + stubs as in JAX); the share that works for every
argument (no ``partial``) is printed beside it.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import os
import pathlib
import sys
import textwrap
import types

from xjax._src.core.stubs import AS_JAX_ATTR, stub_reason

MODULES = ("jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn",
           "jax.nn.initializers", "jax.scipy.special", "jax.scipy.linalg",
           "jax.scipy.stats.norm", "jax.lax", "jax.random", "jax.tree_util", "jax.tree",
           "jax.dtypes", "jax.errors", "jax.debug")
HEADLINE_MODULES = ("jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn",
                    "jax.scipy.special")
STATUSES = ("works", "stub", "partial", "missing")
REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
DEFAULT_NAMES = REPO_ROOT.parent / "shared" / "api" / "jax-0.10.2-public-names.tsv"
METHOD = ("stub: marker of xjax.core.stubs.not_implemented, or a body that raises "
          "NotImplementedError unconditionally (static); partial: a static scan for "
          "`raise NotImplementedError(` in the function and in the private helpers it calls "
          "by name passing one of its parameters other than the first (one level); tested: a "
          "static scan of tests/ for the name through an imported alias of its module (or as "
          "a string in files that getattr that module)")


# --------------------------------------------------------------------------------------------
# the checklist


def read_names(path) -> list[tuple[str, str, str]]:
    """``(module, name, kind)`` rows of the checklist at ``path`` (comments and blank lines
    skipped)."""
    rows = []
    for lineno, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"{path}:{lineno}: expected module<TAB>name<TAB>kind, got {line!r}")
        rows.append(tuple(parts))
    return rows


def xjax_module(module: str):
    """``xjax``'s counterpart of the JAX module named ``module`` (None if it does not
    exist)."""
    name = "x" + module
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    obj = importlib.import_module("xjax")  # e.g. jax.scipy.stats.norm reached by attribute
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# --------------------------------------------------------------------------------------------
# static analysis of a function's source


def _function_node(fn):
    """The ``FunctionDef`` of ``fn`` and the function itself after unwrapping, or
    ``(None, fn)`` where its source cannot be read (builtins, classes' instances)."""
    try:
        fn = inspect.unwrap(fn)
    except ValueError:
        pass
    if not isinstance(fn, types.FunctionType):
        return None, fn
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None, fn
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, fn
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node, fn
    return None, fn  # a lambda assigned to a name


def _is_nie_raise(node) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _message(node) -> str:
    if isinstance(node.exc, ast.Call) and node.exc.args:
        arg = node.exc.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.JoinedStr):  # f"...{name}...": the text with its fields
            return "".join(v.value if isinstance(v, ast.Constant) else
                           "{" + ast.unparse(v.value) + "}" for v in arg.values)
        return ast.unparse(arg)
    return "NotImplementedError"


def _body(node):
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def _own_nodes(node):
    """The nodes of a function's body (or of a statement), not descending into nested
    functions or classes."""
    is_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    stack = list(node.body) if is_function else [node]
    while stack:
        item = stack.pop()
        yield item
        for child in ast.iter_child_nodes(item):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                      ast.Lambda)):
                stack.append(child)


def _called_functions(node, fn, private_only=False):
    """The Python functions ``fn`` calls by a plain name (resolved in its globals); with
    ``private_only``, only ``_helpers`` (argument checks such as ``_check_out``; public
    functions called inside are called with the caller's own fixed arguments)."""
    out = []
    for item in _own_nodes(node):
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Name):
            if private_only and not item.func.id.startswith("_"):
                continue
            target = fn.__globals__.get(item.func.id)
            if isinstance(target, types.FunctionType) and target is not fn:
                out.append((item, target))
    return out


def _raises_unconditionally(node, fn, depth=1) -> str | None:
    """The message when ``fn`` (parsed as ``node``) raises NotImplementedError at its top
    level (or calls, at its top level, a function that does) and returns nowhere."""
    if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in _own_nodes(node)):
        return None
    for statement in _body(node):
        if _is_nie_raise(statement):
            return _message(statement)
        if depth and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            for call, target in _called_functions(statement, fn):
                if call is statement.value:
                    sub_node, sub_fn = _function_node(target)
                    if sub_node is not None:
                        found = _raises_unconditionally(sub_node, sub_fn, depth - 1)
                        if found is not None:
                            return found
    return None


def _partial_messages(node, fn) -> list[str]:
    """Messages of the ``raise NotImplementedError`` statements in ``fn`` and in the private
    helpers it calls by name (one level)."""
    messages = [_message(n) for n in _own_nodes(node) if _is_nie_raise(n)]
    params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    options = set(params[1:]) | {a.arg for a in (node.args.vararg, node.args.kwarg) if a}
    for call, target in _called_functions(node, fn, private_only=True):
        passed = {n.id for a in call.args + [k.value for k in call.keywords]
                  for n in ast.walk(a) if isinstance(n, ast.Name)}
        if not passed & options:  # the helper sees none of the caller's options
            continue
        sub_node, _ = _function_node(target)
        if sub_node is not None:
            messages += [_message(n) for n in _own_nodes(sub_node) if _is_nie_raise(n)]
    return list(dict.fromkeys(messages))


def classify(obj):
    """``(status, detail)`` of an existing public object: ``("works", None)``,
    ``("stub", reason)``, ``("stub-as-jax", reason)`` or ``("partial", [messages])``."""
    reason = stub_reason(obj)
    if reason is not None:
        return ("stub-as-jax" if getattr(obj, AS_JAX_ATTR, False) else "stub"), reason
    if isinstance(obj, types.ModuleType) or inspect.isclass(obj) or not callable(obj):
        return "works", None
    node, fn = _function_node(obj)
    if node is None:
        return "works", None
    reason = _raises_unconditionally(node, fn)
    if reason is not None:
        return "stub", f"(unmarked) {reason}"
    messages = _partial_messages(node, fn)
    if messages:
        return "partial", messages
    return "works", None


# --------------------------------------------------------------------------------------------
# which names the tests mention


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def tested_names(tests_dir) -> set[tuple[str, str]]:
    """``(jax module, name)`` pairs the test files under ``tests_dir`` spell (see the module
    docstring for the method)."""
    found = set()
    for path in sorted(pathlib.Path(tests_dir).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        aliases = {}   # local name -> dotted xjax module path
        direct = {}    # local name -> (module, name) imported from an xjax module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "xjax" or a.name.startswith("xjax."):
                        if a.asname:
                            aliases[a.asname] = a.name
                        else:
                            aliases[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                    node.module == "xjax" or node.module.startswith("xjax.")):
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    direct[a.asname or a.name] = (node.module, a.name)
        for node in ast.walk(tree):  # LA = jnp.linalg
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                    isinstance(node.targets[0], ast.Name)):
                parts = _dotted(node.value)
                if parts and len(parts) > 1 and parts[0] in aliases:
                    aliases[node.targets[0].id] = ".".join(aliases[parts[0]].split(".") +
                                                           parts[1:])
        getattr_modules = set()
        strings = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts = _dotted(node)
                if parts and parts[0] in aliases:
                    full = aliases[parts[0]].split(".") + parts[1:]
                    for cut in range(1, len(full)):
                        found.add(("." .join(full[:cut]), full[cut]))
            elif isinstance(node, ast.Name) and node.id in direct:
                found.add(direct[node.id])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
                  node.func.id == "getattr" and node.args):
                parts = _dotted(node.args[0])
                if parts and parts[0] in aliases:
                    getattr_modules.add(".".join(aliases[parts[0]].split(".") + parts[1:]))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
        found |= {(module, s) for module in getattr_modules for s in strings
                  if s.isidentifier()}
        found |= {direct_target for direct_target in direct.values()}
    return {(m[1:], n) for m, n in found if m.startswith("xjax")}


# --------------------------------------------------------------------------------------------
# the report


def build_report(names_path, tests_dir=None, modules=MODULES) -> dict:
    """The coverage report as a dict: per module, each name's kind, status, detail and
    whether a test mentions it; and the headline numbers."""
    rows = read_names(names_path)
    tested = tested_names(tests_dir or REPO_ROOT / "tests")
    report = {"names_file": str(names_path), "method": METHOD, "modules": {}}
    for module in modules:
        xmod = xjax_module(module)
        entries = []
        for mod, name, kind in rows:
            if mod != module:
                continue
            obj = getattr(xmod, name, _MISSING) if xmod is not None else _MISSING
            if obj is _MISSING:
                status, detail = "missing", None
            else:
                status, detail = classify(obj)
            entries.append({"name": name, "kind": kind, "status": status, "detail": detail,
                            "tested": (module, name) in tested})
        report["modules"][module] = entries
    report["headline"] = headline(report)
    return report


_MISSING = object()


def _counts(entries):
    counts = dict.fromkeys(STATUSES + ("stub-as-jax",), 0)
    for e in entries:
        counts[e["status"]] += 1
    counts["total"] = len(entries)
    counts["tested"] = sum(e["tested"] for e in entries)
    return counts


def headline(report) -> dict:
    """Callables (kind ``function``) of the headline modules: how many, how many work
    (``works``, ``partial``, stubs as in JAX), how many work for every argument."""
    entries = [e for m in HEADLINE_MODULES for e in report["modules"].get(m, ())
               if e["kind"] == "function"]
    working = sum(e["status"] in ("works", "partial", "stub-as-jax") for e in entries)
    fully = sum(e["status"] in ("works", "stub-as-jax") for e in entries)
    total = len(entries)
    return {"modules": list(HEADLINE_MODULES), "callables": total, "working": working,
            "fully_working": fully,
            "percent_working": round(100.0 * working / total, 1) if total else 0.0,
            "percent_fully_working": round(100.0 * fully / total, 1) if total else 0.0}


def _summary_rows(report):
    rows = []
    for module, entries in report["modules"].items():
        c = _counts(entries)
        rows.append([module, c["total"], c["works"] + c["stub-as-jax"], c["partial"], c["stub"],
                     c["missing"], c["tested"]])
    return rows


_HEADER = ["module", "names", "works", "partial", "stub", "missing", "tested"]


def format_text(report, details=True) -> str:
    """The report as plain text."""
    h = report["headline"]
    lines = [f"xjax API coverage against {report['names_file']}", ""]
    widths = [max(len(str(r[i])) for r in _summary_rows(report) + [_HEADER])
              for i in range(len(_HEADER))]
    fmt = "  ".join("{:<%d}" % w if i == 0 else "{:>%d}" % w for i, w in enumerate(widths))
    lines.append(fmt.format(*_HEADER))
    for row in _summary_rows(report):
        lines.append(fmt.format(*row))
    lines += ["", _headline_text(h), "", f"method: {report['method']}"]
    if details:
        for module, entries in report["modules"].items():
            lines += ["", f"== {module} =="]
            lines += _details(entries, bullet="  ")
    return "\n".join(lines)


def _headline_text(h):
    return (f"headline: {h['working']}/{h['callables']} callables ({h['percent_working']}%) "
            f"of {', '.join(h['modules'])} exist and work; {h['fully_working']} "
            f"({h['percent_fully_working']}%) with no NotImplementedError for any argument")


def _details(entries, bullet, code=lambda s: s):
    lines = []
    for status, title in (("works", "works"), ("stub-as-jax", "stub, as in JAX (counted as "
                                                               "working)"),
                          ("partial", "partial (NotImplementedError for some arguments)"),
                          ("stub", "stub (NotImplementedError for every input)"),
                          ("missing", "missing")):
        chosen = [e for e in entries if e["status"] == status]
        if not chosen:
            continue
        lines.append(f"{title}: {len(chosen)}")
        if status == "works":
            names = [code(e["name"]) + ("" if e["tested"] else " (untested)") for e in chosen]
            lines.append(bullet + ", ".join(names))
            continue
        for e in chosen:
            tag = "" if e["tested"] or status == "missing" else " (untested)"
            detail = e["detail"]
            if isinstance(detail, list):
                detail = "; ".join(detail)
            lines.append(f"{bullet}{code(e['name'])} [{e['kind']}]{tag}"
                         + (f": {detail}" if detail else ""))
    return lines


def format_markdown(report, details=True) -> str:
    """The report as Markdown (for notes and issues)."""
    lines = [f"# xjax API coverage", "", f"Checklist: `{report['names_file']}`", ""]
    lines.append("| " + " | ".join(_HEADER) + " |")
    lines.append("|" + "---|" * len(_HEADER))
    for row in _summary_rows(report):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    lines += ["", f"**{_headline_text(report['headline'])}**", "", f"Method: {report['method']}"]
    for module, entries in (report["modules"].items() if details else ()):
        lines += ["", f"## {module}", ""]
        lines += [f"- {line.strip()}" if not line.startswith("  ") else f"  - {line.strip()}"
                  for line in _details(entries, bullet="  ", code=lambda s: f"`{s}`")]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Print the coverage report; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m xjax._src.testing.coverage",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=pathlib.Path, default=DEFAULT_NAMES,
                        help="the checklist (module<TAB>name<TAB>kind); default: %(default)s")
    parser.add_argument("--tests", type=pathlib.Path, default=REPO_ROOT / "tests",
                        help="the test-suite scanned for the tested column")
    parser.add_argument("--module", action="append", choices=MODULES,
                        help="report only this module (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--summary", action="store_true",
                        help="only the table and the headline, not the name lists")
    args = parser.parse_args(argv)
    if not args.names.is_file():
        print(f"error: the checklist of JAX's public names was not found at {args.names}; "
              "pass its path with --names (it lives in the project's shared workspace, "
              "shared/api/jax-0.10.2-public-names.tsv; tests/data holds a copy)", file=sys.stderr)
        return 2
    report = build_report(args.names, args.tests, tuple(args.module or MODULES))
    if args.module:  # the headline is about the headline modules, whatever was selected
        report["headline"] = headline(build_report(args.names, args.tests, HEADLINE_MODULES))
    if args.json:
        print(json.dumps(report, indent=1))
    elif args.markdown:
        print(format_markdown(report, details=not args.summary))
    else:
        print(format_text(report, details=not args.summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
