"""The labgrid environment file LG_ENV names, checked before labgrid reads it (places.py).

labgrid loads the file with PyYAML and builds targets from it lazily: an alias bomb (a few lines
whose anchors expand to a billion nodes) would hang the load, `targets: 5` ends in a traceback, and
a misspelt driver class surfaces only when its place is measured, or never when no place uses that
target. So the file is read here first, as data: at most MAX_BYTES, composed into YAML nodes
without expanding an alias (aliases share their node), its expanded size counted in one pass and
refused past MAX_NODES, and its layout checked (targets: a mapping of target names to mappings,
resources and drivers a mapping or a list of one-class mappings). Every refusal is one line
naming the file, the line and what was expected. After labgrid has loaded the file (and its
`imports:` have registered their classes), `check_classes` names any resource or driver class
labgrid does not know."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError

MAX_BYTES = 1 << 20          # an environment file is a few kilobytes; a megabyte is plenty
MAX_NODES = 100_000          # YAML nodes once every alias is expanded


class EnvFileError(UsageError):
    """A refused LG_ENV file: one line, naming it (and the line where the YAML gives one)."""


@dataclass(frozen=True)
class ClassUse:
    """A resource or driver class a target of the file names, and where."""
    kind: str                # "resource" or "driver"
    name: str
    target: str
    line: int


def _error(path: str, node_or_line, what: str) -> EnvFileError:
    line = node_or_line if isinstance(node_or_line, int) else node_or_line.start_mark.line + 1
    return EnvFileError(f"LG_ENV={path}:{line}: {what}")


def check_env_file(path: str) -> list[ClassUse]:
    """The file's resource and driver classes, once it is known to be a labgrid environment file
    that is safe to load; EnvFileError otherwise."""
    root = _compose(path, _read(path))
    _check_size(path, root)
    return _check_layout(path, root)


def _read(path: str) -> str:
    p = Path(path)
    if not p.exists():
        raise EnvFileError(f"LG_ENV={path}: no such file (a labgrid environment file, see docs/lab.md)")
    if not p.is_file():
        raise EnvFileError(f"LG_ENV={path}: not a regular file (a labgrid environment file, see docs/lab.md)")
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise EnvFileError(f"LG_ENV={path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise EnvFileError(f"LG_ENV={path}: larger than {MAX_BYTES // 1024} KiB; expected a labgrid environment "
                           "file (a few kilobytes of YAML)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise EnvFileError(f"LG_ENV={path}:{line}: not UTF-8 text; expected YAML") from None


def _compose(path: str, text: str):
    """The YAML document as nodes (no object is built, no alias expanded)."""
    import yaml
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark else ""
        raise EnvFileError(f"LG_ENV={path}{where}: not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        raise EnvFileError(f"LG_ENV={path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise EnvFileError(f"LG_ENV={path}: nested too deeply; expected a labgrid environment file") from None
    if root is None:
        raise EnvFileError(f"LG_ENV={path}: empty; expected a mapping with `targets:` (docs/lab.md)")
    return root


def _children(node) -> list:
    import yaml
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_size(path: str, root) -> None:
    """The number of nodes the document has once its aliases are expanded, counted over the nodes
    as composed (each once: an alias shares its anchor's node); a recursive alias is refused."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if finished:
            on_path.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[id(node)] > MAX_NODES:
                raise _error(path, node, f"its aliases expand to more than {MAX_NODES:,} YAML nodes (an alias "
                                         "bomb?); expected a labgrid environment file")
            continue
        if id(node) in sizes:
            continue
        on_path.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise _error(path, child, "a recursive alias (an anchor used inside itself)")
            if id(child) not in sizes:
                stack.append((child, False))


def _scalar(node) -> str | None:
    import yaml
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _kind(node) -> str:
    import yaml
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value != "" else "nothing"


def _mapping(path: str, node, what: str, expected: str) -> list:
    import yaml
    if not isinstance(node, yaml.MappingNode):
        raise _error(path, node, f"{what}: expected {expected}, found {_kind(node)}")
    return node.value


def _check_layout(path: str, root) -> list[ClassUse]:
    """The top level: `targets` (and `options`) where labgrid expects them; each target's classes."""
    uses: list[ClassUse] = []
    for key, value in _mapping(path, root, "the file", "a mapping with `targets:` (docs/lab.md)"):
        name = _scalar(key)
        if name == "targets":
            for tkey, tvalue in _mapping(path, value, "targets", "a mapping of target names to their "
                                                                 "resources and drivers"):
                uses += _check_target(path, _scalar(tkey) or "?", tvalue)
        elif name == "options":
            _mapping(path, value, "options", "a mapping of option names to values")
    return uses


def _check_target(path: str, target: str, node) -> list[ClassUse]:
    import yaml
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
        return []                                      # an empty target: labgrid leaves it out
    uses = []
    for key, value in _mapping(path, node, f"target {target!r}", "a mapping with resources: and drivers:"):
        kind = {"resources": "resource", "drivers": "driver"}.get(_scalar(key) or "")
        if kind:
            uses += _class_entries(path, target, kind, value)
    return uses


def _class_entries(path: str, target: str, kind: str, node) -> list[ClassUse]:
    """resources: / drivers: as labgrid reads them: {Class: {args}} or [{Class: {args}}, {cls: Class, …}]."""
    import yaml
    what = f"target {target!r} {kind}s"
    if isinstance(node, yaml.SequenceNode):
        items = [_mapping(path, item, what, f"a list of {{{kind.capitalize()}Class: {{arguments}}}}")
                 for item in node.value]
        return [_class_of(path, target, kind, pairs, node) for pairs in items]
    pairs = _mapping(path, node, what, f"a mapping of {kind} classes to their arguments, or a list of them")
    return [_class_of(path, target, kind, [pair], node) for pair in pairs]


def _class_of(path: str, target: str, kind: str, pairs: list, parent) -> ClassUse:
    """The class one entry names: its `cls:`, else its one key (whose value holds the arguments)."""
    import yaml
    if not pairs:
        raise _error(path, parent, f"target {target!r}: an empty {kind} entry; expected {{Class: {{arguments}}}}")
    named = {_scalar(k): v for k, v in pairs}
    if "cls" in named and _scalar(named["cls"]):
        return ClassUse(kind, _scalar(named["cls"]), target, named["cls"].start_mark.line + 1)
    key, value = pairs[0]
    if len(pairs) > 1 or not _scalar(key):
        raise _error(path, key, f"target {target!r}: a {kind} entry of several keys without `cls:`; expected "
                                "{Class: {arguments}}")
    if not isinstance(value, yaml.MappingNode):
        raise _error(path, value, f"target {target!r} {kind} {_scalar(key)}: expected a mapping of its arguments "
                                  f"({{}} for none), found {_kind(value)}")
    args = {_scalar(k): v for k, v in value.value}
    if "cls" in args and _scalar(args["cls"]):          # the arguments may name the class themselves
        return ClassUse(kind, _scalar(args["cls"]), target, args["cls"].start_mark.line + 1)
    return ClassUse(kind, _scalar(key), target, key.start_mark.line + 1)


def check_classes(path: str, uses: list[ClassUse]) -> None:
    """Every resource and driver class the file names is one labgrid knows (its own, ours from
    qemu_place.py, or one the file's `imports:` registered); called once labgrid has loaded it."""
    from labgrid import target_factory
    known = {"resource": target_factory.resources, "driver": target_factory.drivers}
    for use in uses:
        if use.name not in known[use.kind]:
            example = "NetworkSerialPort, RemotePlace" if use.kind == "resource" else "SerialDriver, OpenOCDDriver"
            raise _error(path, use.line, f"target {use.target!r}: unknown labgrid {use.kind} class {use.name!r}; "
                                         f"expected one labgrid knows (e.g. {example}) or one your `imports:` "
                                         "register")
