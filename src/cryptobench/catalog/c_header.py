"""The operation catalog as C: writes harness/common/cb_ops.h and the firmware glue's op table
(harness/firmware/core/fw_ops_table.h) from ops.py.

The C harnesses (host and firmware) take op ids, families and parameters from that header instead
of keeping their own lists; a bundled glue takes its op table (fw_lib_ops) from the second. Both
are committed, so that building a harness needs no Python (the host's psa engine compiles a glue);
tests/test_catalog_c.py fails when they no longer match what this module renders.

    python -m cryptobench.catalog.c_header           write both headers
    python -m cryptobench.catalog.c_header --check   exit 1 (and say so) when it is out of date
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .ops import OPS, Op, Param

from ..core.paths import REPO_ROOT
HEADER = REPO_ROOT / "harness" / "common" / "cb_ops.h"
GLUE_TABLE = REPO_ROOT / "harness" / "firmware" / "core" / "fw_ops_table.h"
COMMAND = "python -m cryptobench.catalog.c_header"


def c_name(text: str) -> str:
    """An id as the tail of a C identifier: "aes-gcm-encrypt" -> "AES_GCM_ENCRYPT"."""
    return text.upper().replace("-", "_")


def _is_text(p: Param) -> bool:
    return isinstance(p.default, str)


def catalog_params() -> list[Param]:
    """One Param per parameter name, in order of first use. Params that share a name (bytes,
    curve) must agree on their type and on what a harness reads when a request leaves them out,
    except that ops may default a harness-default parameter differently (nonce_bytes: CCM 13, EAX
    16): a harness reads the first op's default, and the orchestrator always sends the value."""
    seen: dict[str, Param] = {}
    for op in OPS.values():
        for p in op.params:
            first = seen.setdefault(p.name, p)
            if _is_text(first) != _is_text(p) or first.harness_default != p.harness_default or (
                    p.harness_default and first.default != p.default and p.name not in OWN_DEFAULTS):
                raise ValueError(f"catalog parameter '{p.name}' is defined two ways: {first} and {p}")
    return list(seen.values())


# harness-default parameters whose catalog default differs per op (see catalog.EAX_NONCE)
OWN_DEFAULTS = ("nonce_bytes",)


def families() -> list[str]:
    return list(dict.fromkeys(op.family for op in OPS.values()))


def _c_value(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(int(value))


def _absent(p: Param) -> object:
    """What a harness reads when a request leaves p out."""
    if p.harness_default:
        return p.default
    return "" if _is_text(p) else -1


def _short(doc: str, width: int = 52) -> str:
    """A parameter's doc for a one-line comment: up to its first ';', cut at a word if long."""
    text = doc.split(";")[0].replace("*/", "* /")
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0] + " ..."


def _enum(type_name: str, prefix: str, items: list[tuple[str, str]], count: str) -> list[str]:
    lines = ["typedef enum {"]
    for name, comment in items:
        entry = f"    {prefix}{c_name(name)},"
        lines.append(entry.ljust(40) + f"/* {comment} */" if comment else entry)
    lines += [f"    {count}", f"}} {type_name};", ""]
    return lines


def _wrap(parts: list[str], sep: str, end: str, indent: str, width: int = 100) -> list[str]:
    """parts joined by sep and followed by end, in lines of at most `width` columns that each
    start with indent."""
    lines, line = [], indent
    for i, part in enumerate(parts):
        piece = part + (sep if i < len(parts) - 1 else end)
        if line != indent and len(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return lines


def _op_entry(op: Op, params: list[Param]) -> list[str]:
    """The op's line in the cb_op table: defaults are -1 / NULL where it lacks the parameter."""
    mask = [f"CB_PARAM_BIT(CB_PARAM_{c_name(p.name)})" for p in op.params] or ["0"]
    defaults = []
    for p in params:
        own = op.param(p.name)
        value = own.default if own is not None else (None if _is_text(p) else -1)
        defaults.append(f".{p.name} = {_c_value(value)}")
    defaults[0] = "{" + defaults[0]
    inner = " " * 12
    return [f"        [CB_OP_{c_name(op.id)}] = {{",
            f"{inner}{_c_value(op.id)}, CB_FAMILY_{c_name(op.family)},",
            *_wrap(mask, " | ", ",", inner),
            *_wrap(defaults, ", ", "},", inner),
            f"{inner}{op.key_bytes}, {_c_value(op.iv or None)}, {op.iv_bytes}, {int(op.payload)}, {int(op.halve)},",
            "        },"]


def _types(params: list[Param]) -> list[str]:
    fields = [f"    {'const char *' if _is_text(p) else 'long '}{p.name};" for p in params]
    return [
        "/* A parameter: its name, its type and what a harness reads when a request leaves it out. */",
        "typedef struct {",
        "    const char *name;",
        "    int text;                   /* 1: a string; 0: a non-negative integer */",
        "    long absent;                /* integer read when a request leaves it out (-1: absent) */",
        "    const char *absent_text;    /* string read when a request leaves it out (\"\": absent) */",
        "} cb_param_info;",
        "",
        "/* One value per parameter: an op's catalog defaults, -1 or NULL where it does not take it. */",
        "typedef struct {",
        *fields,
        "} cb_param_values;",
        "",
        "typedef struct {",
        "    const char *id;             /* the catalog id, as in the protocol */",
        "    cb_family family;",
        "    unsigned params;            /* CB_PARAM_BIT of every parameter the op takes */",
        "    cb_param_values defaults;",
        "    unsigned key_bytes;         /* fixed key length, for ciphers without key_bits; else 0 */",
        "    const char *iv_name;        /* the compute input holding the IV or nonce; NULL: none */",
        "    unsigned iv_bytes;          /* its length; 0 where the nonce_bytes parameter gives it */",
        "    unsigned char payload;      /* has a `bytes` payload (throughput applies) */",
        "    unsigned char halve;        /* the reported time is half the measured one */",
        "} cb_op_info;",
        "",
    ]


def _lookups(params: list[Param]) -> list[str]:
    param_rows = [f"        [CB_PARAM_{c_name(p.name)}] = {{{_c_value(p.name)}, {int(_is_text(p))}, "
                  f"{-1 if _is_text(p) else _absent(p)}, {_c_value(_absent(p) if _is_text(p) else '')}}},"
                  for p in params]
    op_rows = [line for op in OPS.values() for line in _op_entry(op, params)]
    return [
        "static inline const cb_param_info *cb_param(cb_param_id id)",
        "{",
        "    static const cb_param_info table[CB_N_PARAMS] = {",
        *param_rows,
        "    };",
        "    return &table[id];",
        "}",
        "",
        "static inline const cb_op_info *cb_op(cb_op_id id)",
        "{",
        "    static const cb_op_info table[CB_N_OPS] = {",
        *op_rows,
        "    };",
        "    return &table[id];",
        "}",
        "",
        "/* The op with catalog id `id`, or -1. */",
        "static inline int cb_op_find(const char *id)",
        "{",
        "    for (int i = 0; i < CB_N_OPS; i++)",
        "        if (strcmp(cb_op((cb_op_id)i)->id, id) == 0)",
        "            return i;",
        "    return -1;",
        "}",
        "",
        "/* The family of the op with catalog id `id`, or -1. */",
        "static inline int cb_op_family(const char *id)",
        "{",
        "    int op = cb_op_find(id);",
        "    return op < 0 ? -1 : (int)cb_op((cb_op_id)op)->family;",
        "}",
        "",
        "/* The parameter called `name`, or -1. */",
        "static inline int cb_param_find(const char *name)",
        "{",
        "    for (int i = 0; i < CB_N_PARAMS; i++)",
        "        if (strcmp(cb_param((cb_param_id)i)->name, name) == 0)",
        "            return i;",
        "    return -1;",
        "}",
        "",
    ]


def render() -> str:
    """The whole of cb_ops.h."""
    params = catalog_params()
    if len(params) > 32:
        raise ValueError("more than 32 catalog parameters: cb_op_info.params is a 32-bit mask")
    defaults = [f"#define CB_DEFAULT_{c_name(p.name)} {_c_value(p.default)}" for p in params if p.harness_default]
    lines = [
        f"/* Generated by `{COMMAND}` from src/cryptobench/catalog/ops.py: do not edit. */",
        "/* cb_ops.h - the operation catalog for the C harnesses (harness/host, harness/firmware).",
        " *",
        " * Op ids, families and parameters as catalog/ops.py defines them. Checking parameter values is the",
        " * orchestrator's job; a harness uses these to know the ids, to find an op's family and to read a",
        " * parameter that a request leaves out (docs/protocol.md). To add an op: edit catalog/ops.py, run",
        f" * `{COMMAND}`, implement the op in the engines. */",
        "#ifndef CB_OPS_H",
        "#define CB_OPS_H",
        "",
        "#include <string.h>",
        "",
        "/* Operations, in catalog order. */",
        *_enum("cb_op_id", "CB_OP_", [(op.id, op.title) for op in OPS.values()], "CB_N_OPS"),
        "/* Operation families. */",
        *_enum("cb_family", "CB_FAMILY_", [(f, "") for f in families()], "CB_N_FAMILIES"),
        "/* Parameters, in order of first use. */",
        *_enum("cb_param_id", "CB_PARAM_", [(p.name, _short(p.doc)) for p in params], "CB_N_PARAMS"),
        "#define CB_PARAM_BIT(id) (1u << (id))",
        "",
        f"#define CB_OP_ID_MAX {max(len(op.id) for op in OPS.values())}"
        "    /* the longest op id, in bytes */",
        "",
        "/* What a harness reads for these parameters when a request leaves them out; any other",
        " * parameter left out is absent: -1, or \"\" for text. */",
        *defaults,
        "",
        *_types(params),
        *_lookups(params),
        "#endif",
        "",
    ]
    return "\n".join(lines)


def render_glue_table() -> str:
    """The whole of fw_ops_table.h: one row per catalog op, each present where the build asks for
    the op (FW_OP_<OP>, targets/mcu/firmware/build.py) and the glue has it (FW_GLUE_<OP>: "supports, run")."""
    rows = []
    for op in OPS.values():
        name = c_name(op.id)
        rows += [f"#if defined(FW_OP_{name}) && defined(FW_GLUE_{name})",
                 f"    {{{_c_value(op.id)}, FW_GLUE_{name}}},", "#endif"]
    lines = [
        f"/* Generated by `{COMMAND}` from src/cryptobench/catalog/ops.py: do not edit. */",
        "/* fw_ops_table.h - a glue's op table (fw_lib_ops, fw_lib_n_ops; fw.h), one row per catalog op.",
        " *",
        " * A glue defines FW_GLUE_<OP> as its `supports, run` functions for each op it has (beside the",
        " * code) and includes this file once, at its end. A row is in the table where the build asks for",
        " * the op (FW_OP_<OP>) and the glue has it (FW_GLUE_<OP>). */",
        "#ifndef FW_OPS_TABLE_H",
        "#define FW_OPS_TABLE_H",
        "",
        "const fw_op fw_lib_ops[] = {",
        *rows,
        "    {NULL, NULL, NULL},",
        "};",
        "",
        "const int fw_lib_n_ops = (int)(sizeof fw_lib_ops / sizeof fw_lib_ops[0]) - 1;",
        "",
        "#endif",
        "",
    ]
    return "\n".join(lines)


def _up_to_date(path: Path, text: str) -> bool:
    return path.exists() and path.read_text() == text


def _write(path: Path, text: str) -> None:
    if not _up_to_date(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description="Write harness/common/cb_ops.h and the firmware "
                                 "glue's op table from catalog/ops.py.")
    ap.add_argument("--check", action="store_true", help="only say whether the headers are up to date (exit 1 if not)")
    ap.add_argument("--out", type=Path, default=HEADER, help=f"where to write cb_ops.h (default {HEADER})")
    ap.add_argument("--glue-out", type=Path, default=GLUE_TABLE,
                    help=f"where to write the glue's op table (default {GLUE_TABLE})")
    args = ap.parse_args(argv)
    outputs = [(args.out, render()), (args.glue_out, render_glue_table())]
    if args.check:
        stale = [path for path, text in outputs if not _up_to_date(path, text)]
        for path in stale:
            print(f"{path} is out of date: run `{COMMAND}`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs:
        _write(path, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
