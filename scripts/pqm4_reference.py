"""Write the ML-KEM / ML-DSA rows of src/cryptobench/references/data/pqm4.toml from a copy of pqm4's
benchmarks.md (its four tables: Speed, Memory, Hashing, Size Evaluation), every implementation the
tables list, values as printed. The file's header and [[source]] entries are kept as they are; only
the [[row]] entries after them are rewritten, so the figures are the published ones, not retyped.

    python scripts/pqm4_reference.py PATH/TO/benchmarks.md [--check]

--check compares instead of writing (exit 1 and the first difference). The message lengths are
mupq's: crypto_sign/speed.c and hashing.c sign a 59-byte message, stack.c a 32-byte one."""
import re
import sys
from pathlib import Path

TOML = Path(__file__).resolve().parent.parent / "src/cryptobench/references/data/pqm4.toml"
OPS = {"ml-kem": ("ml-kem-keygen", "ml-kem-encaps", "ml-kem-decaps"),
       "ml-dsa": ("ml-dsa-keygen", "ml-dsa-sign", "ml-dsa-verify")}
MLEN = {"Speed": 59, "Memory": 32, "Hashing": 59}     # mupq crypto_sign/{speed,stack,hashing}.c
METRIC = {"Speed": ("cycles", "cycles"), "Memory": ("stack", "B"), "Hashing": ("hashing_share", "%"),
          "Size": ("code_size", "B")}
SIZE_NOTE = "the whole scheme's own code (not one operation's), hashing and the C library excluded (pqm4 README)"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _num(printed: str) -> str:
    v = printed.replace(",", "").rstrip("%")
    float(v)                                   # a malformed cell stops the script here
    return v


def rows(md: str) -> list[str]:
    out, section, sub, heads = [], "", "", []
    for line in md.splitlines():
        if line.startswith("# "):
            section = line[2:].split()[0]
        elif line.startswith("## "):
            sub = line[3:].strip()
        elif line.startswith("|") and not line.startswith("| --"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0].lower() == "scheme":
                heads = cells
                continue
            m = re.match(r"(ml-kem|ml-dsa)-(\d+)(?: \((\d+) executions\))?$", cells[0])
            if not m or set(cells[0]) <= {"-", " "}:
                continue
            family, level, n = m.group(1), int(m.group(2)), m.group(3)
            out += _entries(section, sub, heads, cells, family, level, n)
    return out


def _entries(section, sub, heads, cells, family, level, n) -> list[str]:
    impl, metric, unit = cells[1], *METRIC[section]
    table = f"{section} Evaluation: {sub}"
    out = []
    for i, (head, cell) in enumerate(zip(heads[2:], cells[2:])):
        head = head if section == "Size" else head.lower()      # the size table's ".text", "Total" as printed
        op = None if section == "Size" else OPS[family][i]
        params = f"level = {level}" + (f", bytes = {MLEN[section]}" if op in ("ml-dsa-sign", "ml-dsa-verify") else "")
        base = [f"table = {_q(table)}", None, *( [f"op = {_q(op)}"] if op else []), f"params = {{ {params} }}",
                f"source = {_q(impl)}", f"implementation = {_q(impl)}", f"metric = {_q(metric)}"]
        if section == "Speed":
            for part in cell.split("<br />"):
                stat, printed = (s.strip() for s in part.split(":"))
                e = list(base)
                e[1] = f"label = {_q(f'{cells[0]} | {impl} | {head} {stat}')}"
                e += [f"stat = {_q(stat.lower())}", f"executions = {n}", f"value = {_num(printed)}",
                      f"unit = {_q(unit)}", f"printed = {_q(part.strip())}"]
                out.append("[[row]]\n" + "\n".join(e) + "\n")
        else:
            e = list(base)
            e[1] = f"label = {_q(f'{cells[0]} | {impl} | {head}')}"
            e += [f"value = {_num(cell)}", f"unit = {_q(unit)}", f"printed = {_q(cell)}"]
            if section == "Size":
                e.append(f"note = {_q(SIZE_NOTE)}")
            out.append("[[row]]\n" + "\n".join(e) + "\n")
    return out


def main() -> int:
    md = Path(sys.argv[1]).read_text()
    text = TOML.read_text()
    head = text[:text.index("\n[[row]]\n") + 1]        # the header and sources, up to the first row
    new = head + "\n".join(rows(md))
    if "--check" in sys.argv:
        if new != text:
            a, b = text.splitlines(), new.splitlines()
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"{TOML}:{i + 1}: differs from benchmarks.md: {a[i] if i < len(a) else '(end)'!r} vs "
                  f"{b[i] if i < len(b) else '(end)'!r}")
            return 1
        print(f"{TOML}: as benchmarks.md")
        return 0
    TOML.write_text(new)
    print(f"{TOML}: {new.count('[[row]]')} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
