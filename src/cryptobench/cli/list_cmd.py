"""`cryptobench list suites|engines|ops|references`."""
from __future__ import annotations

from ..catalog import OPS
from ..engines import ENGINES, probe_engines
from ..suites import available_suites, load_suite

NAME = "list"


def add_parser(sub) -> None:
    ls = sub.add_parser("list", help="list suites, engines or operations")
    ls.add_argument("what", choices=["suites", "engines", "ops", "references"])


def run(args, out) -> int:
    if args.what == "suites":
        for name in available_suites():
            s = load_suite(name)
            out.write(f"{name:<12} {len(s.benches):>4} cells/engine  {s.title}\n")
    elif args.what == "references":
        from ..references import available_references, load_reference
        for name in available_references():
            ref = load_reference(name)
            out.write(f"{name:<12} {len(ref.rows):>4} values  {ref.title}\n")
    elif args.what == "ops":
        for op in OPS.values():
            params = ", ".join(f"{p.name}={p.default}" + (f" ({'/'.join(map(str, p.choices))})" if p.choices else "")
                               for p in op.params)
            out.write(f"{op.id:<26} {op.title}" + (f"  [{params}]" if params else "") + "\n")
    else:
        states = probe_engines(list(ENGINES))
        for name, engine in ENGINES.items():
            info, why = states[name]
            status = "usable" if why is None else f"NOT usable: {why}"
            version = info.get("version", "")
            out.write(f"{name:<11} {status}\n            {engine.description}\n"
                      + (f"            {version}\n" if version else ""))
    return 0
