"""The package's structure, checked (issue 15): import cycles, long functions, modules per layer.

    python -m cryptobench.devtools.structure [ROOT] [--json] [--no-fail] [--max-lines N]

ROOT is a package directory (default: the cryptobench package this file is part of). Every
module is read with `ast` and nothing is imported, so the check needs none of the package's
dependencies and a module that fails to import cannot hide its own imports.

Import cycles. Each `import` / `from ... import` naming a module of the package (absolute or
relative, `from . import x` included) is an edge. An import inside a function runs only when
the function is called: it is "deferred". A deferred import still closes a cycle (the two
modules still need each other), but it is marked, since that is how cycles get hidden. Imports
under `if TYPE_CHECKING:` never run and are left out. Every strongly connected component of
more than one module is printed (Tarjan). Not seen: `importlib.import_module(name)` with a
computed name, and the implicit import of a parent package's `__init__` (counting it would put
every package whose `__init__` re-exports its submodules in a cycle).

Long functions. A def / async def longer than --max-lines (60), counted from the def line to
the last line of the body (decorators out, docstring in). A function says why it is long with
a comment `# long: <reason>` on its def line or alone on the line just above it (or above its
first decorator).

Layers. The package's folders are its layers: LAYERS names them from low to high, and a module's
layer is the folder it sits in at the top of the package (the package's own `__init__` is the
lowest layer's). A module may import its own layer and the ones below it. An import from a lower
layer into a higher one is an upward import, and a module outside every layer folder is
"unassigned"; either fails the check, so the folders keep saying what the code does.

Sub-layers. A layer may order its own parts too (SUBLAYERS: module prefixes from low to high, a
module in the part of its longest prefix): inside `targets`, the simulator sits below the
transports that use it and above the board data it reads, and `verify` below every transport.
An import from a lower part into a higher one is a back-arrow and fails the check like an
upward import.

Faces. A package named in FACES is used from outside through its `__init__` only (its face): an
import of one of its modules by a module outside it is an import past the face, and fails.

Exit status 1 when there is an import cycle, a long function without a reason, an upward import,
a back-arrow, an import past a face or an unassigned module (0 with --no-fail), so it can run as
a CI check.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import textwrap
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path

MAX_LINES = 60
UNASSIGNED = "unassigned"

# Layers from low to high, each a folder of the package (docs/architecture.md says what each holds).
LAYERS: tuple[str, ...] = (
    "core",        # errors, files, processes, the typed records every layer passes, units, the table model
    "catalog",     # the operations, their C header, vector checks
    "store",       # the result database (SQLite, PostgreSQL)
    "references",  # the studies' published tables
    "stats",       # estimators, intervals, significance, sampling and convergence
    "targets",     # where numbers come from: host engines, MCU firmware/simulator/lab, energy traces
    "runner",      # plans, suites, the Runner
    "analysis",    # same-run ratios, published comparison, run-to-run diff, models
    "report",      # tables, layouts, figures, HTML, export
    "cli",         # the command line
    "devtools",    # the project's own checks and test servers
)

# Parts of a layer from low to high, each a tuple of module prefixes (relative to the package).
SUBLAYERS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "targets": (
        ("targets", ("targets",)),                       # the Target protocol, verify, the PQC checks
        ("board data", ("targets.mcu.boards", "targets.mcu.firmware.protocol")),
        ("simulator", ("targets.mcu.sim",)),             # the Cortex-M simulator (a face of its own)
        ("energy", ("targets.power",)),                  # durations x the device profiles' currents
        ("host, traces", ("targets.host", "targets.trace")),
        ("microcontrollers", ("targets.mcu",)),          # firmware, QEMU, boards, the lab, the transports
        ("selection", ("targets.select",)),
    ),
}
# Packages used from outside through their __init__ only (relative to the package).
FACES: tuple[str, ...] = ("targets.mcu.sim",)

_REASON = re.compile(r"#\s*long:\s*(.*\S)?")


@dataclass(frozen=True)
class Import:
    """One import of a package module by another, where it is written."""

    src: str
    dst: str
    path: str
    line: int
    deferred: bool
    function: str | None  # the function it sits in when deferred


@dataclass(frozen=True)
class Source:
    """One module of the package, read and parsed once for every check."""

    name: str
    path: Path
    is_package: bool
    text: str
    tree: ast.Module


# --- reading the package ------------------------------------------------------------------

def show(path: Path) -> str:
    """A path as the reader would type it: relative to the current directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load(root: Path) -> dict[str, Source]:
    """Every .py under the package directory, by dotted module name."""
    sources = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as exc:
            raise SystemExit(f"{show(path)}:{exc.lineno}: cannot parse: {exc.msg}") from exc
        sources[name] = Source(name, path, is_package, text, tree)
    return sources


# --- imports ------------------------------------------------------------------------------

def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _ImportCollector(ast.NodeVisitor):
    """Import statements that run, each with the function it sits in (None at import time)."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.Import | ast.ImportFrom, str | None]] = []
        self._names: list[str] = []       # enclosing classes and functions, for the name
        self._functions = 0               # how many of them are functions

    def _enter(self, node: ast.AST, name: str, is_function: bool) -> None:
        self._names.append(name)
        self._functions += is_function
        self.generic_visit(node)
        self._functions -= is_function
        self._names.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._enter(node, node.name, True)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # A class body runs at import time: its imports are not deferred.
        self._enter(node, node.name, False)

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        for child in node.orelse:
            self.visit(child)

    def _record(self, node: ast.Import | ast.ImportFrom) -> None:
        self.found.append((node, ".".join(self._names) if self._functions else None))

    visit_Import = visit_ImportFrom = _record


def _longest_module(name: str, modules: dict[str, Source]) -> str | None:
    """The module `import name` loads last that belongs to the package (None when outside)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _from_base(node: ast.ImportFrom, source: Source) -> str | None:
    """The absolute module name `from <base> import ...` refers to (None beyond the top)."""
    if node.level == 0:
        return node.module
    package = source.name if source.is_package else source.name.rpartition(".")[0]
    parts = package.split(".")
    up = node.level - 1
    if up >= len(parts):
        return None
    base = ".".join(parts[:len(parts) - up])
    return f"{base}.{node.module}" if node.module else base


def _targets(node: ast.Import | ast.ImportFrom, source: Source, modules: dict[str, Source]) -> list[str]:
    """The package modules one import statement depends on."""
    if isinstance(node, ast.Import):
        found = [_longest_module(alias.name, modules) for alias in node.names]
    else:
        base = _from_base(node, source)
        if base is None:
            return []
        # `from pkg import x` depends on pkg.x when x is a submodule, else on pkg itself.
        found = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else _longest_module(base, modules)
                 for a in node.names]
    return [name for name in dict.fromkeys(found) if name and name != source.name]


def import_edges(sources: dict[str, Source]) -> list[Import]:
    """Every import of a package module by another, in file and line order."""
    edges = []
    for source in sources.values():
        collector = _ImportCollector()
        collector.visit(source.tree)
        for node, function in collector.found:
            for dst in _targets(node, source, sources):
                edges.append(Import(source.name, dst, show(source.path), node.lineno,
                                    function is not None, function))
    return edges


def representative(edges: list[Import]) -> list[Import]:
    """One import per (src, dst): a module-level one when there is one, as that one always runs."""
    best: dict[tuple[str, str], Import] = {}
    for edge in edges:
        key = (edge.src, edge.dst)
        if key not in best or (best[key].deferred and not edge.deferred):
            best[key] = edge
    return sorted(best.values(), key=lambda e: (e.src, e.dst))


# --- cycles -------------------------------------------------------------------------------

def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components; iterative, so a long import chain cannot
    reach Python's recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def push(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(graph.get(node, ())))))

    for start in sorted(graph):
        if start in index:
            continue
        work: list = []
        push(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    push(succ)
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    components.append(_pop_component(stack, on_stack, node))
    return components


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == root:
            return sorted(component)


def _graph(modules: dict[str, Source], edges: list[Import]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges:
        graph[edge.src].add(edge.dst)
    return graph


def find_cycles(modules: dict[str, Source], edges: list[Import]) -> list[dict]:
    """Each component of mutually importing modules, its edges, and whether it is still a
    cycle once deferred imports are taken out (if not, only call order keeps it working)."""
    eager = _graph(modules, [e for e in edges if not e.deferred])
    eager_cyclic = {m for c in strongly_connected(eager) if len(c) > 1 for m in c}
    cycles = []
    for component in strongly_connected(_graph(modules, edges)):
        members = set(component)
        if len(members) < 2:
            continue
        inside = representative([e for e in edges if e.src in members and e.dst in members])
        cycles.append({"modules": component, "edges": [asdict(e) for e in inside],
                       "only_through_deferred": not members & eager_cyclic})
    return sorted(cycles, key=lambda c: c["modules"])


# --- long functions -----------------------------------------------------------------------

def _functions(node: ast.AST, prefix: str = ""):
    """(qualified name, node) of every def / async def, methods and nested ones included."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                yield name, child
            yield from _functions(child, name + ".")
        else:
            yield from _functions(child, prefix)


def _comments(text: str) -> dict[int, str]:
    """Comment text by line: from the tokenizer, so a '#' inside a string is not a comment."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError):
        return {}


def _reason(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], comments: dict[int, str]) -> str | None:
    """The `# long: <reason>` on the def line, or alone on the line above it or its decorators."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    candidates = [node.lineno] + [n - 1 for n in {node.lineno, first}
                                  if n > 1 and lines[n - 2].lstrip().startswith("#")]
    for line in candidates:
        match = _REASON.match(comments.get(line, ""))
        if match and match.group(1):
            return match.group(1)
    return None


def long_functions(sources: dict[str, Source], max_lines: int) -> list[dict]:
    """Every function over max_lines lines (def line to last body line), with its reason."""
    found = []
    for source in sources.values():
        lines, comments = source.text.splitlines(), _comments(source.text)
        for name, node in _functions(source.tree):
            length = node.end_lineno - node.lineno + 1
            if length > max_lines:
                found.append({"path": show(source.path), "line": node.lineno, "name": name,
                              "lines": length, "reason": _reason(node, lines, comments)})
    return found


# --- layers -------------------------------------------------------------------------------

def relative_name(module: str, package: str) -> str:
    return "__init__" if module == package else module[len(package) + 1:]


def layer_of(module: str, package: str, is_package: bool, layers: tuple[str, ...] = LAYERS) -> str:
    """The layer folder the module sits in, or UNASSIGNED: a module file at the top of the package,
    or in a folder no layer names. The package's own __init__ belongs to the lowest layer."""
    name = relative_name(module, package)
    if name == "__init__":
        return layers[0]
    top, _, rest = name.partition(".")
    in_folder = bool(rest) or is_package
    return top if in_folder and top in layers else UNASSIGNED


def upward_imports(edges: list[Import], layer: dict[str, str], order: list[str]) -> list[dict]:
    """Imports from a lower layer into a higher one (unassigned modules have no rank)."""
    rank = {name: i for i, name in enumerate(order)}
    found = []
    for edge in representative(edges):
        src, dst = layer[edge.src], layer[edge.dst]
        if src in rank and dst in rank and rank[src] < rank[dst]:
            found.append({**asdict(edge), "src_layer": src, "dst_layer": dst})
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def sublayer_of(module: str, package: str, sublayers=SUBLAYERS) -> tuple[str, int] | None:
    """(layer, rank of its part) for a module of a layer that orders its parts, else None."""
    name = relative_name(module, package)
    for layer, parts in sublayers.items():
        best = None
        for rank, (_, prefixes) in enumerate(parts):
            for prefix in prefixes:
                if _under(name, prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), rank)
        if best is not None:
            return layer, best[1]
    return None


def back_arrows(edges: list[Import], package: str, sublayers=SUBLAYERS) -> list[dict]:
    """Imports from a lower part of a layer into a higher part of the same layer."""
    found = []
    for edge in representative(edges):
        src, dst = sublayer_of(edge.src, package, sublayers), sublayer_of(edge.dst, package, sublayers)
        if src and dst and src[0] == dst[0] and src[1] < dst[1]:
            parts = sublayers[src[0]]
            found.append({**asdict(edge), "src_part": parts[src[1]][0], "dst_part": parts[dst[1]][0]})
    return found


def past_faces(edges: list[Import], package: str, faces: tuple[str, ...] = FACES) -> list[dict]:
    """Imports of a faced package's modules by modules outside it."""
    found = []
    for edge in edges:
        src, dst = relative_name(edge.src, package), relative_name(edge.dst, package)
        for face in faces:
            if dst.startswith(face + ".") and not _under(src, face):
                found.append({**asdict(edge), "face": face})
    return found


# --- the report ---------------------------------------------------------------------------

def analyse(root: Path, max_lines: int = MAX_LINES,
            layers: tuple[str, ...] = LAYERS) -> dict:
    """Everything the check prints, as one JSON-ready dict (the text is rendered from it)."""
    sources = load(root)
    package = root.resolve().name
    edges = import_edges(sources)
    layer = {name: layer_of(name, package, src.is_package, layers) for name, src in sources.items()}
    report = {
        "package": package, "root": show(root), "modules": len(sources), "max_lines": max_lines,
        "cycles": find_cycles(sources, edges),
        "deferred_imports": [asdict(e) for e in edges if e.deferred],
        "long_functions": long_functions(sources, max_lines),
        "layers": {"order": list(layers), "modules": layer},
        "upward_imports": upward_imports(edges, layer, list(layers)),
        "back_arrows": back_arrows(edges, package),
        "past_faces": past_faces(edges, package),
        "faces": list(FACES),
    }
    unreasoned = sum(f["reason"] is None for f in report["long_functions"])
    unassigned = sum(v == UNASSIGNED for v in layer.values())
    report["failures"] = ([f"{len(report['cycles'])} import cycle(s)"] if report["cycles"] else []) + \
        ([f"{unreasoned} long function(s) without a reason"] if unreasoned else []) + \
        ([f"{len(report['upward_imports'])} upward import(s)"] if report["upward_imports"] else []) + \
        ([f"{len(report['back_arrows'])} back-arrow(s) inside a layer"] if report["back_arrows"] else []) + \
        ([f"{len(report['past_faces'])} import(s) past a face"] if report["past_faces"] else []) + \
        ([f"{unassigned} module(s) outside every layer folder"] if unassigned else [])
    return report


def _edge_text(edge: dict) -> str:
    where = f"  [deferred, in {edge['function']}()]" if edge["deferred"] else ""
    return f"{edge['src']} -> {edge['dst']}  ({edge['path']}:{edge['line']}){where}"


def _render_cycles(report: dict) -> list[str]:
    if not report["cycles"]:
        return ["import cycles: none"]
    out = [f"import cycles: {len(report['cycles'])}"]
    for n, cycle in enumerate(report["cycles"], 1):
        deferred = sum(e["deferred"] for e in cycle["edges"])
        note = "; a cycle only through deferred imports" if cycle["only_through_deferred"] else ""
        out.append(f"  cycle {n}: {len(cycle['modules'])} modules, {len(cycle['edges'])} edges "
                   f"({deferred} deferred){note}")
        out += [f"    {_edge_text(e)}" for e in cycle["edges"]]
    return out


def _render_deferred(report: dict) -> list[str]:
    """Deferred imports grouped by the module that makes them; --json has each one."""
    targets: dict[str, set[str]] = {}
    for edge in report["deferred_imports"]:
        targets.setdefault(edge["src"], set()).add(relative_name(edge["dst"], report["package"]))
    out = [f"deferred imports (inside functions): {len(report['deferred_imports']) or 'none'}"
           + (f" in {len(targets)} modules; each module and what it imports late (--json: every line)"
              if targets else "")]
    for src, names in sorted(targets.items()):
        out += textwrap.wrap(", ".join(sorted(names)), 100, subsequent_indent=" " * 6,
                             initial_indent=f"  {relative_name(src, report['package'])}: ")
    return out


def _render_long(report: dict) -> list[str]:
    found = report["long_functions"]
    head = f"functions over {report['max_lines']} lines: "
    if not found:
        return [head + "none"]
    missing = sum(f["reason"] is None for f in found)
    return [head + f"{len(found)} ({missing} without a reason)"] + \
        [f"  {f['path']}:{f['line']} {f['name']} ({f['lines']} lines): {f['reason'] or 'NO REASON'}"
         for f in found]


def _render_layers(report: dict) -> list[str]:
    by_layer: dict[str, list[str]] = {name: [] for name in report["layers"]["order"] + [UNASSIGNED]}
    for module, layer in report["layers"]["modules"].items():
        by_layer[layer].append(relative_name(module, report["package"]))
    out = ["modules per layer (low to high):"]
    for layer, names in by_layer.items():
        text = ", ".join(sorted(names)) or "-"
        out += textwrap.wrap(text, 100, initial_indent=f"  {layer:<11} {len(names):>3}  ",
                             subsequent_indent=" " * 19)
    return out


def _render_upward(report: dict) -> list[str]:
    found = report["upward_imports"]
    return [f"upward imports: {len(found) or 'none'}"] + \
        [f"  {e['src_layer']} -> {e['dst_layer']}: {_edge_text(e)}" for e in found]


def _render_inside(report: dict) -> list[str]:
    arrows, past = report["back_arrows"], report["past_faces"]
    out = [f"back-arrows inside a layer ({', '.join(SUBLAYERS)}): {len(arrows) or 'none'}"]
    out += [f"  {e['src_part']} -> {e['dst_part']}: {_edge_text(e)}" for e in arrows]
    out += [f"imports past a face ({', '.join(report['faces'])}): {len(past) or 'none'}"]
    out += [f"  {e['face']}: {_edge_text(e)}" for e in past]
    return out


def render(report: dict) -> str:
    head = [f"package {report['package']} ({report['root']}): {report['modules']} modules"]
    verdict = ["result: " + ("FAIL: " + ", ".join(report["failures"]) if report["failures"] else "ok")]
    sections = [head, _render_cycles(report), _render_deferred(report), _render_long(report),
                _render_layers(report), _render_upward(report), _render_inside(report), verdict]
    return "\n\n".join("\n".join(lines) for lines in sections) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cryptobench.devtools.structure",
                                     description="Import cycles, long functions and layers of a package.")
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1],
                        help="package directory (default: cryptobench)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when the check fails")
    parser.add_argument("--max-lines", type=int, default=MAX_LINES, help="longest function allowed without a reason")
    args = parser.parse_args(argv)
    if not (args.root / "__init__.py").is_file():
        parser.error(f"{args.root} is not a package directory (no __init__.py)")
    report = analyse(args.root, args.max_lines)
    sys.stdout.write(json.dumps(report, indent=2) + "\n" if args.json else render(report))
    return 1 if report["failures"] and not args.no_fail else 0


if __name__ == "__main__":
    sys.exit(main())
