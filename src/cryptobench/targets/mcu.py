"""The microcontroller target: per library, build an empty image and one image per operation,
run each on the target (QEMU, a board or the simulator), check the target's known-answer tests and
cross-check its outputs against the host's OpenSSL, store stack, heap and code size (and, on real
hardware only, cycles) cell by cell."""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Callable

from ..catalog import OPS
from ..conditions import host_conditions
from ..errors import HarnessError
from ..firmware.build import BuildError, FirmwareBuilder, code_size
from ..firmware.plan import Cell, Inputs, fill, kat_from_vector, out_name, plan_c
from ..firmware.recipes import load_recipe, resolve
from ..harness import HarnessProcess
from ..results import derive
from .. import records
from ..bytes_diff import difference_text
from ..records import Plan, cell_key
from .base import RunSession
from .boards import BOARDS
from ..verify import NO_REFERENCE, load_vectors, python_reference

HOST_CHECKER = "openssl"       # the host harness engine that makes inputs and checks outputs
QEMU_REPEAT = 1                # QEMU has no cycle model: one run gives output, stack and heap
SIM_REPEAT = 2                 # the simulator is deterministic: a second repetition shows it


def target_label(t: dict) -> str:
    if t["kind"] == "sim":
        from ..sim.devices import device_spec
        return f"sim:{t['core']}:{device_spec(t['device'], t.get('device_options'))}"
    if t["kind"] == "labgrid":            # the place that measured the cell (targets/lab.py sets it per worker)
        return f"labgrid:{t.get('place') or ','.join(t['places'])}"
    return f"{t['kind']}:{t['board']}"


def make_inputs(host: HarnessProcess | None, op: str, params: Mapping) -> tuple[Inputs, dict]:
    """Deterministic inputs for one cell (fresh host-made keys for ECC), and what the host needs
    to check the target's output: {"expect": bytes} or {"verify": (q, hash)} or {}."""
    fam = OPS[op].family
    values: dict[str, bytes] = {}
    if fam in ("aes", "aead"):
        values["key"] = fill(OPS[op].key_len(params), 3)
        ivlen = OPS[op].iv_len(params)              # the catalog's IV or nonce, 0 for none
        if ivlen:
            values[OPS[op].iv] = fill(ivlen, 4)
        if params.get("aad_bytes"):
            values["aad"] = fill(params["aad_bytes"], 2)
        values["msg"] = fill(params.get("bytes", 0), 1)
    elif fam == "sha":
        values["msg"] = fill(params.get("bytes", 0), 1)
    elif fam == "drbg":
        # a timing cell: entropy || nonce only; the glue seeds once and times one call. The host's
        # compute runs the whole CAVP flow, so there is nothing to compare: the target's CAVP
        # vectors are the check.
        values["key"] = fill(48, 7)
        return Inputs(op, params, values), {"none": True}
    elif fam == "ecjpake":
        values["key"] = values["iv"] = b"threadjpaketest"
        return Inputs(op, params, values), {"equal_halves": True}
    elif fam in ("ecdh", "ecc", "ecdsa"):
        if host is None:
            raise HarnessError("ECC cells need the host harness to make keys")
        curve = {"curve": params.get("curve", "p256")}
        own = host.compute(HOST_CHECKER, "ecc-keygen", curve, {})
        if op == "ecdh-keygen":
            values["d"] = bytes.fromhex(own["d"])
        elif op == "ecdh-shared-secret":
            peer = host.compute(HOST_CHECKER, "ecc-keygen", curve, {})
            values["d"], values["peer"] = bytes.fromhex(own["d"]), bytes.fromhex(peer["q"])
        elif op in ("ecdsa-sign", "ecdsa-verify"):
            values["hash"] = fill(32 if curve["curve"] == "p256" else 64, 5)
            if op == "ecdsa-sign":
                values["d"] = bytes.fromhex(own["d"])
                return Inputs(op, params, values), {"verify": (own["q"], values["hash"].hex())}
            sig = host.compute(HOST_CHECKER, "ecdsa-sign", curve, {"d": own["d"], "hash": values["hash"].hex()})
            values["q"], values["sig"] = bytes.fromhex(own["q"]), bytes.fromhex(sig["sig"])
    return Inputs(op, params, values), {}


class McuTarget:
    """Firmware built per library recipe and run on a microcontroller: QEMU (functional), a board
    over its serial port, or the cycle-approximate simulator; `run_image` picks the transport."""
    kind = "mcu"

    def __init__(self, plan: Plan, progress: Callable | None = None,
                 log: Callable[[str], None] = lambda s: None, run_image: Callable | None = None):
        self.plan, self.progress, self.log = plan, progress, log
        self.session: RunSession | None = None
        self.recipes: list = []          # the libraries' recipes, resolved by open()
        self.builders: dict = {}         # recipe name -> its FirmwareBuilder
        self.target = plan.target
        self.board = BOARDS[self.target["board"]]
        self._run_image = run_image
        self.vectors = load_vectors(extra=plan.options.extra.get("vectors") or ())
        self.host: HarnessProcess | None = None

    @property
    def functional_only(self) -> bool:
        """QEMU, and a labgrid place whose board is a QEMU machine, have no cycle model: their
        cells carry output, stack, heap and code size, never cycles or seconds."""
        return self.target["kind"] == "qemu" or bool(self.target.get("emulated"))

    def on_place(self, plan: Plan, run_image: Callable) -> None:
        """Measure on one labgrid place from now on: `plan` is the run's with the place in its
        target (its cells' label, whether its board is emulated), `run_image` its transport."""
        self.plan, self.target, self._run_image = plan, plan.target, run_image

    # --- target ----------------------------------------------------------------------------
    def run_image(self, elf: Path):
        if self._run_image is not None:
            return self._run_image(elf)
        if self.target["kind"] == "sim":
            return self.simulator().run(elf, timeout_s=self.target.get("timeout_s", 600))
        if self.target["kind"] == "qemu":
            from .qemu import run_image
            return run_image(elf, self.board.qemu_machine, timeout_s=self.target.get("timeout_s", 300),
                             silence_s=self.target.get("silence_s", 30),
                             uart_console=self.board.console != "semihosting")
        from .board_link import run_on_board
        return run_on_board(elf, self.board, self.target["port"], flash=not self.target.get("no_flash"),
                            baud=self.target.get("baud", 115200), timeout_s=self.target.get("timeout_s", 300),
                            silence_s=self.target.get("silence_s", 30))

    def simulator(self):
        if getattr(self, "_sim", None) is None:
            from ..sim.devices import device_spec, get_device
            from ..sim.native import Simulator
            spec = device_spec(self.target["device"], self.target.get("device_options"))
            self._sim = Simulator(get_device(spec, self.target["core"]), self.board)
        return self._sim

    def conditions(self, builds: dict) -> dict:
        t = dict(self.target)
        t["board_title"] = self.board.title
        t["clock_hz"] = self.board.clock_hz
        if t["kind"] == "qemu":
            from .qemu import qemu_version
            t["qemu"] = qemu_version()
            t["timing"] = "none: QEMU has no cycle model, so no cycles or seconds are reported"
        elif self.functional_only:
            t["timing"] = ("none: the places' boards are QEMU machines (no cycle model), so no cycles or seconds "
                           "are reported")
        if t["kind"] == "sim":
            from ..sim.devices import device_spec
            t["simulator"] = self.simulator().describe()
            t["clock_hz"] = t["simulator"]["clock_hz"]
            t["timing"] = (f"simulated: {t['simulator']['model']} v{t['simulator']['model_version']} cycle model of the "
                           f"{t['simulator']['core']}" + (" (rough)" if t["simulator"]["rough"] else "")
                           + f" on {device_spec(t['device'], t.get('device_options'))}, "
                           f"{t['simulator']['flash_ws']} flash wait state(s) "
                           f"charged; time = cycles / {t['clock_hz'] / 1e6:g} MHz")
        return {"host": host_conditions(), "target": t, "builds": builds}

    # --- the Target protocol ------------------------------------------------------------------
    def open(self) -> dict:
        self.recipes = []
        for name in self.target["libraries"]:
            r = load_recipe(name)
            resolve(r, Path(self.target["library_source"]) if self.target.get("library_source") else None, self.log)
            self.recipes.append(r)
        self.builders = {r.name: FirmwareBuilder(r, self.board, self.target["cpu"], self.target["opt"], log=self.log,
                                                 library_cc=self.target.get("library_cc"))
                         for r in self.recipes}
        return self.conditions({n: b.conditions() for n, b in self.builders.items()})

    def measure(self, session: RunSession) -> None:
        self.session = session
        done = session.done_keys()
        self.host = HarnessProcess()
        for r in self.recipes:
            self._run_library(r, self.builders[r.name], done)

    def measure_unit(self, session: RunSession, library: str, op: str) -> None:
        """One library's cells of one operation (a unit a lab worker leased; lab/leases.py):
        all of them, whatever the session already holds (a unit is redone whole)."""
        self.session = session
        if self.host is None:
            self.host = HarnessProcess()
        recipe = next(r for r in self.recipes if r.name == library)
        self._run_library(recipe, self.builders[library], set(), only_op=op)

    def close(self) -> None:
        if self.host is not None:
            self.host.close()
            self.host = None

    def _seq(self, group_index: int, engine: str) -> int:
        libs = self.target["libraries"]
        names = [Path(x).stem if x.endswith(".toml") else x for x in libs]
        return group_index * len(libs) + (names.index(engine) if engine in names else 0)

    def _save(self, group_index: int, group: records.Group, engine: str, status: str, kat: str, detail: str,
              result: dict | None = None, samples: list | None = None, provenance: str = "measured") -> None:
        self.session.save_cell(records.Cell(
            op=group.op, params=group.params, engine=engine, target=target_label(self.target),
            provenance=provenance if status == records.OK else "none", status=status, kat=kat, detail=detail,
            samples=samples, result=records.Result(result) if result is not None else None,
            seq=self._seq(group_index, engine)))

    def _run_library(self, recipe, builder: FirmwareBuilder, done: set, only_op: str | None = None) -> None:
        groups = [(i, g) for i, g in enumerate(self.plan.groups) if cell_key(g.op, g.params, recipe.name) not in done
                  and (only_op is None or g.op == only_op)]
        if not groups:
            return
        empties: dict = {}             # variant name -> the empty image of that build

        def empty_of(b: FirmwareBuilder):
            key = b.variant.name if b.variant else None
            if key not in empties:
                empties[key] = b.image("empty", [], plan_c([], [], self.board.name, b.cpu, "empty"))
            return empties[key]
        try:
            empty_of(builder)
        except BuildError as exc:
            for i, g in groups:
                self._save(i, g, recipe.name, "failed", "n/a", f"build failed: {exc.tail}")
            return
        by_op: dict[tuple, list] = {}  # (op, variant) -> cells: each variant of the recipe is a build of its own
        for i, g in groups:
            variant = recipe.variant_for(g.op, g.params)
            by_op.setdefault((g.op, variant.name if variant else None), []).append((i, g, variant))
        for (op, _), entries in by_op.items():
            items = [(i, g) for i, g, _ in entries]
            variant = entries[0][2]
            vb = builder.for_variant(variant)
            if self.progress:
                self.progress({"op": op, "params": {"library": recipe.name}}, "start")
            try:
                empty = empty_of(vb)
            except BuildError as exc:
                for i, g in items:
                    self._save(i, g, recipe.name, "failed", "n/a", f"build failed: {exc.tail}")
            else:
                self._run_op(recipe, vb, empty, op, items)
            if self.progress:
                self.progress({"op": op, "params": {"library": recipe.name}}, "end", len(items))

    # long: one operation's firmware cycle (build, run, check on the host, store each cell) in the order it happens
    def _run_op(self, recipe, builder, empty, op, items) -> None:
        save = lambda i, g, *a, **k: self._save(i, g, recipe.name, *a, **k)
        if op not in recipe.ops:
            why = recipe.unavailable.get(op) or f"the {recipe.name} recipe ({recipe.path.name}) provides no '{op}'"
            for i, g in items:
                save(i, g, "unsupported", "n/a", why)
            return
        repeat = QEMU_REPEAT if self.functional_only else {"sim": SIM_REPEAT}.get(self.target["kind"])
        cells, checks = [], []
        try:
            for i, g in items:
                inputs, check = make_inputs(self.host, op, g.params)
                if not check:
                    check = self._host_expect(op, g.params, inputs)
                cells.append(Cell(inputs, repeat or int(g.repeat or self.plan.options.repeat)))
                checks.append(check)
        except HarnessError as exc:
            for i, g in items:
                save(i, g, "failed", "n/a", f"could not make inputs on the host: {exc}")
            return
        variant = builder.variant
        kats = [k for v in matching_vectors_for_op(self.vectors, op)
                if (variant is None or all(v["params"].get(p, x) == x for p, x in variant.when.items()))
                and (k := kat_from_vector(v, op))]
        build = f"{recipe.name} {builder.cpu} -{builder.opt}" + (f" {variant.name}" if variant else "")
        try:
            size_img = builder.image(op, [op], plan_c([], [], self.board.name, builder.cpu, build))
            run_img = builder.image(op + ".run", [op], plan_c(kats, cells, self.board.name, builder.cpu, build))
        except BuildError as exc:
            why = exc.tail
            overflow = [l.split("ld: ")[-1] for l in why.splitlines() if "overflowed" in l or "will not fit" in l]
            if overflow:
                why = f"does not fit on {self.board.name}: " + "; ".join(dict.fromkeys(overflow))
            for i, g in items:
                save(i, g, "unsupported" if why.startswith("does not fit") else "failed", "n/a",
                     f"build failed: {why}" if not why.startswith("does not fit") else why)
            return
        sizes = code_size(size_img, empty)
        report = self.run_image(run_img.elf)
        sim_cycles = self._sim_cycles(report) if self.target["kind"] == "sim" else {}
        sim_insns = self._sim_cycles(report, report.counter_insns) if self.target["kind"] == "sim" else {}
        sim_marker = self._sim_marker(report) if self.target["kind"] == "sim" else {}
        if self.target["kind"] == "sim" and report.stats.get("unknown_mnemonics"):
            self.log(f"simulator: no cost in the model for {', '.join(report.stats['unknown_mnemonics'])} "
                     f"(charged 1 cycle each) in {op}")
        kat_lines = report.kats_for(op)
        kat_fail = [k for k in kat_lines if not k.get("ok") and not k.get("unsupported")]
        kat_pass = [k for k in kat_lines if k.get("ok")]
        for n, (i, g) in enumerate(items):
            line = report.cells.get(n)
            if line is None:
                save(i, g, "failed", "n/a", f"no result from the target: {report.problem or 'missing cell line'}; "
                                            f"last lines: {report.last_lines()}")
                continue
            if line.get("status") == "unsupported":
                save(i, g, "unsupported", "n/a", line.get("why", ""))
                continue
            if kat_fail:
                ids = ", ".join(k["id"] for k in kat_fail[:3])
                save(i, g, "failed", "fail", f"known-answer test failed on the target: {ids}")
                continue
            if line.get("status") != "ok":
                save(i, g, "failed", "n/a", line.get("why", "failed on the target"))
                continue
            verdict, detail = self._check(op, g.params, bytes.fromhex(line.get("out", "")), checks[n])
            if verdict == "fail" or (verdict == "n/a" and not kat_pass):
                save(i, g, "failed", "fail", detail if verdict == "fail" else
                     "no known-answer test and no host cross-check for this op: not reported"
                     + (f" ({checks[n]['why']})" if checks[n].get("why") else ""))
                continue
            parts = [f"{len(kat_pass)} known-answer vectors on the target"] if kat_pass else []
            if verdict == "pass":
                parts.append(detail)
            if variant is not None:
                parts.append("built as " + variant.describe())
            result = {"stack_bytes": int(line.get("stack", 0)), "heap_bytes": int(line.get("heap", 0)),
                      "code_size": sizes, "flags": []}
            if "alt_calls" in line:       # calls into _ALT replacement code (fw_alt_calls, core/fw.h)
                result["alt_calls"] = int(line["alt_calls"])
            served = served_by_firmware(report.hello.get("lib_version", ""))
            if served:                   # a PSA glue: builtin software or the driver that served the op
                result["served_by"] = served
                parts.append(f"served by {served}")
            samples = None
            if not self.functional_only and line.get("cyc"):
                hz = self.simulator().device.clock_hz if self.target["kind"] == "sim" else \
                    (self.target.get("clock_hz") or self.board.clock_hz)
                cyc, overhead = sim_cycles.get(n, (line["cyc"], line.get("overhead")))
                samples = [[1, int(c * 1e9 / hz), int(c)] for c in cyc]
                counter = "model" if self.target["kind"] == "sim" else report.hello.get("counter", "none")
                result.update(derive(op, g.params, samples, {"counter": counter, "counter_hz": hz}, True))
                result["cycles_overhead"] = overhead
                if self.target["kind"] == "sim":      # deterministic: two samples are not "few"
                    result["flags"] = [f for f in result["flags"] if f != "few-samples"]
                if n in sim_marker:
                    result["marker"] = sim_marker[n]
                if n in sim_insns:
                    result["sim"] = sim_counts(op, result, sim_insns[n], report.stats)
                energy = self._modeled_energy(result, g.params, op)
                if energy:
                    result["energy"] = energy
            prov = "simulated" if self.target["kind"] == "sim" else "measured"
            save(i, g, "ok", "pass", "; ".join(parts), result=result, samples=samples, provenance=prov)

    def _modeled_energy(self, result: dict, params: Mapping, op: str) -> dict | None:
        """Energy from the simulated duration and the device profile's active current (modeled)."""
        if self.target["kind"] != "sim":
            return None
        from ..energy.models import modeled_energy, per_unit, profile_from_device
        from ..sim.devices import DEVICES
        dev = self.simulator().device
        if dev.active_current_a <= 0 or dev.clock_hz != DEVICES[dev.name].clock_hz:
            return None              # the profile's current holds at its own clock only
        t = result["time_s"]["median"]
        e = modeled_energy(t, profile_from_device(dev))
        nbytes = params.get("bytes") if OPS[op].payload else None
        e.update(per_unit(e["per_op_j"], t, nbytes))
        return e

    @staticmethod
    def _sim_marker(report) -> dict:
        """The marker GPIO as the simulator saw it: per ok cell, the count of raised-then-lowered
        windows and their cycles, taken in order (one window per timed repetition). This is what
        a power analyzer's digital input would see on the board."""
        windows, state, rose = [], 0, 0
        for cyc, level in report.marker_edges:       # writes that do not change the level are not edges
            if level and not state:
                rose = cyc
            elif state and not level:
                windows.append((rose, cyc))
            state = level
        if not windows:
            return {}
        out, at = {}, 0
        for i in sorted(report.cells):
            line = report.cells[i]
            if line.get("status") != "ok" or "cyc" not in line:
                continue
            ws = windows[at:at + len(line["cyc"])]
            at += len(line["cyc"])
            out[i] = {"windows": len(ws), "cycles": [b - a for a, b in ws], "provenance": "simulated"}
        return out

    @staticmethod
    def _sim_cycles(report, reads: list | None = None) -> dict:
        """Each ok cell's cycles from the simulator's log of counter reads (exact, never wrapped):
        per repetition a (before, after) pair, then one pair for the counter's own overhead. With
        `reads` = the report's counter_insns, the instructions executed in the same windows."""
        reads, at, out = report.counter_reads if reads is None else reads, 0, {}
        for i in sorted(report.cells):
            line = report.cells[i]
            if line.get("status") != "ok" or "cyc" not in line:
                continue
            n = len(line["cyc"])
            pairs = [(reads[at + 2 * r], reads[at + 2 * r + 1]) for r in range(n + 1) if at + 2 * r + 1 < len(reads)]
            if len(pairs) == n + 1:
                out[i] = ([b - a for a, b in pairs[:n]], pairs[n][1] - pairs[n][0])
            at += 2 * (n + 1)
        return out

    def _host_expect(self, op: str, params: Mapping, inputs: Inputs) -> dict:
        params = dict(params)              # the harness's requests are JSON
        try:
            ok, _ = self.host.supports(HOST_CHECKER, op, params)
            if not ok:
                return self._python_expect(op, params, inputs)
            out = self.host.compute(HOST_CHECKER, op, params, {k: v.hex() for k, v in inputs.values.items()})
            return {"expect": bytes.fromhex(out[out_name(op)]), "by": "the host's OpenSSL"}
        except HarnessError:
            return {}

    @staticmethod
    def _python_expect(op: str, params: Mapping, inputs: Inputs) -> dict:
        """An op no host engine implements: a maintained Python package's output (verify.python_reference),
        or {"why": ...} saying why there is none."""
        from ..extras import MissingExtra
        try:
            ref = python_reference(op, params, inputs.values)
        except MissingExtra as exc:
            return {"why": str(exc)}
        if ref is None:
            return {"why": NO_REFERENCE[op]} if op in NO_REFERENCE else {}
        return {"expect": ref[0], "by": ref[1]}

    def _check(self, op: str, params: Mapping, got: bytes, check: dict) -> tuple[str, str]:
        if "expect" in check:
            by = check.get("by", "the host's OpenSSL")
            if got == check["expect"]:
                return "pass", f"output matches {by}"
            return "fail", f"output differs from {by}: {difference_text(got, check['expect'])}"
        if check.get("equal_halves"):
            half = len(got) // 2
            if half and got[:half] == got[half:]:
                return "pass", "client and server derived the same premaster secret on the target"
            return "fail", "client and server premaster secrets differ on the target"
        if "verify" in check:
            q, h = check["verify"]
            try:
                ok = self.host.compute(HOST_CHECKER, "ecdsa-verify", {"curve": params.get("curve", "p256")},
                                       {"q": q, "hash": h, "sig": got.hex()})
            except HarnessError as exc:
                return "fail", f"host could not verify the target's signature: {exc}"
            if ok.get("ok") == "01":
                return "pass", "the target's signature verifies in the host's OpenSSL"
            return "fail", "the target's signature does not verify in the host's OpenSSL"
        return "n/a", ""


def served_by_firmware(lib_version: str) -> str | None:
    """The implementation a glue says serves its calls, as "(served by X)" in its fw_lib_version
    (glue/psa.c, which fails every op its driver did not serve): "builtin" or "driver: NAME"."""
    m = re.search(r"\(served by ([^)]+)\)", lib_version or "")
    return m.group(1).strip() if m else None


def matching_vectors_for_op(vectors: list[dict], op: str) -> list[dict]:
    """The stored vectors of `op`; the CTR_DRBG vectors (whole CAVP flows) serve all three ops."""
    if op.startswith("ctr-drbg-"):
        return [v for v in vectors if v["op"].startswith("ctr-drbg-")]
    return [v for v in vectors if v["op"] == op]


def sim_counts(op: str, result: dict, insns: tuple[list, int], stats: dict) -> dict:
    """A simulated cell's instructions per operation (the median over its repetitions, from the
    same counter-read windows as its cycles, halved where the op's time is), its CPI (cycles per
    operation / instructions per operation) and the simulator's speed over the image's whole run
    (instructions executed / wall-clock seconds of the run, start-up excluded; measured on the host)."""
    div = 2.0 if OPS[op].halve else 1.0
    per_op = sorted(i / div for i in insns[0])
    ipo = per_op[len(per_op) // 2] if per_op else None
    cyc = (result.get("cycles") or {}).get("per_op_median")
    return {"instructions_per_op": ipo, "instructions_overhead": insns[1],
            "cpi": cyc / ipo if cyc is not None and ipo else None, "provenance": "simulated",
            "run_instructions": stats.get("instructions"), "run_wall_s": stats.get("wall_s"),
            "instructions_per_s": stats.get("instructions_per_s"), "speed_provenance": "measured"}
