#!/usr/bin/env python3
"""Write the hostile trace corpus, tests/hostile/traces/FORMAT/*: every file is a valid synthetic
trace (energy.synth, 3 windows of 4 samples) spoiled in one way. The files are committed; this
script says how each was made, and rewrites them all (deterministically) when run:

    .venv/bin/python tests/hostile/make_traces.py

What each file must give (where the error is, a piece of its message) is in its first line
(`# expect: LINE: FRAGMENT`, n6705-csv files: the format's preamble allows a comment) or in
TRACE_TABLE of tests/test_hostile.py (formats whose first line is fixed, and binary formats).

Sample i of a generic-csv, ppk2 or Logic 2 current file is on line i + 2; window k covers samples
4 + 8k … 7 + 8k (window 1: lines 14-17). An n6705-csv file has the comment, a 5-line preamble and
the header before its samples: sample i is on line i + 8 (window 1: lines 20-23).
"""
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

from cryptobench.targets.trace import synth  # noqa: E402

OUT = HERE / "traces"
PLAN = synth.PulsePlan(n=3, width_s=4e-5, gap_s=4e-5, high_a=0.02, low_a=0.001, dt=1e-5, v=3.3)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)) * 2   # a screenshot


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def cell(lines: list[str], line_no: int, col: int, value: str, delimiter: str = ",") -> list[str]:
    out = list(lines)
    cells = out[line_no - 1].rstrip("\r\n").split(delimiter)
    cells[col] = value
    out[line_no - 1] = delimiter.join(cells) + "\n"
    return out


def window1(lines: list[str], first: int, col: int, value: str) -> list[str]:
    for n in range(first, first + 4):
        lines = cell(lines, n, col, value)
    return lines


def put(folder: str, name: str, data, expect: str | None = None) -> None:
    """Write a case; with `expect`, its first line (n6705-csv's placeholder comment) becomes
    '# expect: EXPECT'."""
    if isinstance(data, list):
        data = "".join(data)
    if isinstance(data, str):
        if expect is not None:
            data = f"# expect: {expect}\n" + data.split("\n", 1)[1]
        data = data.encode()
    (OUT / folder / name).write_bytes(data)


def text_cases(folder: str, base: list[str], cols: dict, first1: int, expect=lambda line, frag: None) -> None:
    """The spoilt versions of a CSV trace common to the text formats. cols: column of the time
    (or None), current and voltage (or None); first1: line of window 1's first sample."""
    t, i, v = cols.get("time"), cols["current"], cols.get("voltage")
    last = len(base)
    if v is not None:
        put(folder, "nan-voltage.csv", cell(base, first1 + 1, v, "nan"), expect(first1 + 1, "found 'nan'"))
    if t is not None:
        put(folder, "nan-time.csv", cell(base, first1 - 4, t, "nan"), expect(first1 - 4, "found 'nan'"))
        swapped = list(base)
        swapped[first1 - 1], swapped[first1] = swapped[first1], swapped[first1 - 1]
        put(folder, "shuffled-rows.csv", swapped, expect(first1 + 1, "expected time stamps in increasing order"))
    put(folder, "inf-current-last-row.csv", cell(base, last, i, "inf"), expect(last, "found 'inf'"))
    put(folder, "huge-numbers.csv", cell(base, first1 + 2, i, "1e400"), expect(first1 + 2, "found '1e400'"))
    put(folder, "truncated-mid-row.csv", base[:first1 + 5] + [base[first1 + 5][:base[first1 + 5].rfind(",")]],
        expect(first1 + 6, "truncated"))
    put(folder, "crlf-bad-cell.csv", [l.replace("\n", "\r\n") for l in cell(base, first1 - 7, i, "abc")],
        expect(first1 - 7, "found 'abc'"))


def plain_csv_cases(folder: str, base: list[str]) -> None:
    """The spoilings of a comma-separated trace with a one-line header that need no column:
    a repeated row, nothing, the header alone, another delimiter, binary data, UTF-16."""
    put(folder, "duplicate-row.csv", base[:12] + [base[11]] + base[12:])
    put(folder, "empty.csv", b"")
    put(folder, "header-only.csv", base[:1])
    put(folder, "wrong-delimiter.csv", [l.replace(",", ";") for l in base])
    put(folder, "binary-garbage.csv", PNG)
    put(folder, "utf16.csv", "".join(base).encode("utf-16"))


def generic_csv() -> None:
    tmp = OUT / "generic-csv" / "_base.csv"
    synth.write_generic_csv(tmp, PLAN)
    base = lines_of(tmp)
    tmp.unlink()
    text_cases("generic-csv", base, {"time": 0, "current": 1, "voltage": 2}, 14)
    put("generic-csv", "negative-current.csv", window1(base, 14, 1, "-0.02"))
    put("generic-csv", "zero-current.csv", window1(base, 14, 1, "0"))
    put("generic-csv", "huge-current.csv", cell(base, 16, 1, "1e308"))
    plain_csv_cases("generic-csv", base)
    put("generic-csv", "garbage-text.csv", bytes(range(0x80, 0x100)) * 8 + b"\n" + bytes(range(1, 0x80)) * 4)
    put("generic-csv", "latin1.csv", "".join(base).replace("current_a", "current_µA").encode("latin-1"))
    put("generic-csv", "odd-edges.csv", base[:24])
    put("generic-csv", "no-edges.csv", [l if i == 0 else l.rstrip("\n")[:-1] + "0\n" for i, l in enumerate(base)])


def ppk2() -> None:
    tmp = OUT / "ppk2" / "_base.csv"
    synth.write_ppk2_csv(tmp, PLAN)
    base = lines_of(tmp)
    tmp.unlink()
    text_cases("ppk2", base, {"time": 0, "current": 1}, 14)
    put("ppk2", "negative-current.csv", window1(base, 14, 1, "-20000.000"))
    plain_csv_cases("ppk2", base)
    put("ppk2", "marker-not-logged.csv", cell(base, 9, 2, "-0000000"))


def n6705_csv() -> None:
    tmp = OUT / "n6705-csv" / "_base.csv"
    synth.write_n6705_csv(tmp, PLAN)
    base = ["# expect: (placeholder)\n"] + lines_of(tmp)      # line numbers as in the corpus files
    tmp.unlink()
    for name, lines, line, fragment in _n6705_cases(base):
        put("n6705-csv", name, lines, f"{line}: {fragment}")
    text_cases("n6705-csv", base, {"current": 1, "voltage": 2}, 20, expect=lambda line, frag: f"{line}: {frag}")
    body = base[1:]
    put("n6705-csv", "empty.csv", b"")
    put("n6705-csv", "utf16.csv", "".join(body).encode("utf-16"))
    put("n6705-csv", "binary-garbage.csv", PNG)


def _n6705_cases(base):
    header = 7
    no_curr1 = [l if i < header - 1 else ",".join(l.split(",")[:1] + l.split(",")[2:]) for i, l in enumerate(base)]
    yield ("missing-current-column.csv", no_curr1, header, "expected the supply's current trace 'Curr avg 1'")
    yield ("negative-current.csv", window1(base, 20, 1, "-0.02"), 20, "expected a positive energy in every window")
    yield ("duplicate-row.csv", base[:19] + [base[18]] + base[19:], 20, "expected the Sample column to increase")
    yield ("header-only.csv", base[:header], header + 1, "expected data rows below the header, found none")
    yield ("wrong-delimiter.csv", [l.replace(",", ";") for l in base], len(base),
           "expected a header line starting 'Sample,'")
    yield ("interval-inf.csv", [l.replace("Sample interval,1e-05", "Sample interval,1e999") for l in base], 4,
           "expected a sample interval in seconds")
    yield ("no-interval.csv", [l for l in base if not l.startswith("Sample interval")], header - 1,
           "expected a 'Sample interval' line")


def dlog() -> None:
    tmp = OUT / "n6705-dlog" / "_base.dlog"
    synth.write_n6705_dlog(tmp, PLAN)
    base = tmp.read_bytes()
    tmp.unlink()
    first = base.index(b"</dlog>\n") + len(b"</dlog>\n") + 8
    frames = np.frombuffer(base[first:], dtype=">f4").reshape(-1, 4).copy()     # volt1 curr1 volt2 curr2

    def with_frames(f):
        return base[:first] + f.astype(">f4").tobytes()
    f = frames.copy(); f[13, 0] = np.nan
    put("n6705-dlog", "nan-voltage.dlog", with_frames(f))
    f = frames.copy(); f[-1, 1] = np.inf
    put("n6705-dlog", "inf-current-last-frame.dlog", with_frames(f))
    f = frames.copy(); f[12:16, 1] = -0.02
    put("n6705-dlog", "negative-current.dlog", with_frames(f))
    f = frames.copy(); f[14, 1] = 9.9e37
    put("n6705-dlog", "scpi-overflow.dlog", with_frames(f))
    put("n6705-dlog", "truncated-frame.dlog", base[:-5])
    put("n6705-dlog", "truncated-header.dlog", base[:first // 2])
    put("n6705-dlog", "no-frames.dlog", base[:first])
    put("n6705-dlog", "empty.dlog", b"")
    put("n6705-dlog", "binary-garbage.dlog", PNG)
    put("n6705-dlog", "utf16.dlog", base[:first - 8].decode().encode("utf-16") + base[first - 8:])
    put("n6705-dlog", "tint-inf.dlog", base.replace(b"<tint>1e-05</tint>", b"<tint>inf</tint>"))
    put("n6705-dlog", "xml-error.dlog", base.replace(b"</frame>", b"</frme>"))
    put("n6705-dlog", "duplicate-channel.dlog", base.replace(b'<channel id="2">', b'<channel id="1">'))
    only2 = synth.dlog_header([2], PLAN.dt, 1.0) + bytes(8) + frames[:, 2:].astype(">f4").tobytes()
    put("n6705-dlog", "missing-current-channel.dlog", only2)


def saleae() -> None:
    folder = OUT / "saleae"
    synth.write_saleae_pair(folder / "digital.csv", folder / "current.csv", PLAN)
    dig, cur = lines_of(folder / "digital.csv"), lines_of(folder / "current.csv")
    put("saleae", "dig-duplicate-time.csv", dig[:4] + [dig[3]] + dig[4:])
    put("saleae", "dig-nan-time.csv", cell(dig, 4, 0, "nan"))
    put("saleae", "dig-inf-last-row.csv", cell(dig, len(dig), 0, "inf"))
    put("saleae", "dig-shuffled.csv", dig[:2] + [dig[3], dig[2]] + dig[4:])
    put("saleae", "dig-empty.csv", b"")
    put("saleae", "dig-header-only.csv", dig[:1])
    put("saleae", "dig-wrong-delimiter.csv", [l.replace(",", ";") for l in dig])
    put("saleae", "dig-utf16.csv", "".join(dig).encode("utf-16"))
    put("saleae", "dig-binary-garbage.csv", PNG)
    put("saleae", "dig-truncated-mid-row.csv", dig[:4] + [dig[4][:dig[4].rfind(",")]])
    put("saleae", "cur-nan-voltage.csv", cell(cur, 15, 2, "nan"))
    put("saleae", "cur-inf-last-row.csv", cell(cur, len(cur), 1, "inf"))
    put("saleae", "cur-negative-current.csv", window1(cur, 14, 1, "-0.02"))
    put("saleae", "cur-duplicate-row.csv", cur[:12] + [cur[11]] + cur[12:])


def jls() -> None:
    import pyjls
    folder = OUT / "jls"

    def write(name, spoil=None, signals=("current", "voltage", "gpi[0]")):
        s = PLAN.samples(0, PLAN.total)
        if spoil:
            spoil(s)
        with pyjls.Writer(str(folder / name)) as w:
            w.source_def(source_id=1, name="JS220-synthetic", vendor="Jetperch", model="JS220", version="synth",
                         serial_number="000000")
            for sid, sig in enumerate(signals, 1):
                u1 = sig.startswith("gpi")
                w.signal_def(sid, source_id=1, sample_rate=100000, name=sig, units="" if u1 else "A",
                             **({"data_type": pyjls.DataType.U1} if u1 else {}))
                if u1:
                    w.fsr(sid, 0, np.packbits(s["marker"], bitorder="little"))
                else:
                    w.fsr_f32(sid, 0, s[sig].astype(np.float32))
    write("_base.jls")
    base = (folder / "_base.jls").read_bytes()
    (folder / "_base.jls").unlink()
    put("jls", "truncated.jls", base[:len(base) // 2])
    put("jls", "truncated-header.jls", base[:40])
    write("nan-current.jls", lambda s: s["current"].__setitem__(13, np.nan))
    write("negative-current.jls", lambda s: s["current"].__setitem__(slice(12, 16), -0.02))
    write("huge-current.jls", lambda s: s["current"].__setitem__(14, 3e38))
    write("no-marker.jls", signals=("current", "voltage"))
    put("jls", "empty.jls", b"")
    put("jls", "binary-garbage.jls", PNG)
    put("jls", "utf16.jls", "jlsfmt".encode("utf-16") + bytes(100))


def main() -> None:
    for name, make in (("generic-csv", generic_csv), ("ppk2", ppk2), ("n6705-csv", n6705_csv),
                       ("n6705-dlog", dlog), ("saleae", saleae), ("jls", jls)):
        shutil.rmtree(OUT / name, ignore_errors=True)
        (OUT / name).mkdir(parents=True)
        make()
    print(f"wrote {sum(1 for _ in OUT.rglob('*') if _.is_file())} files under {OUT}")


if __name__ == "__main__":
    main()
