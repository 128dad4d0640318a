"""The microcontroller target's cell cycle: per library, build an empty image and one image per
operation, run each through the target's transport (transports.py: QEMU, a board, the simulator
or a labgrid place), check the target's known-answer tests and cross-check its outputs against
the host's OpenSSL, store stack, heap and code size cell by cell, and cycles and seconds wherever
the transport has a cycle model (a board, the simulator; never QEMU)."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ...catalog.ops import OPS
from ...core.conditions import host_conditions
from ...core.errors import HarnessError
from .firmware.build import BuildError, FirmwareBuilder, code_size
from .firmware.plan import Cell, Inputs, fill, kat_from_vector, out_name, plan_c
from .firmware.library_ref import checkout, plain_dir_state
from .firmware.recipes import RECIPES_DIR, cache_dir, load_recipe, resolve
from .firmware.seeded import DEFAULT_SEED, cell_seed, ecdsa_signature, scalar
from ..host.harness import HarnessProcess
from ...stats.distribution import summarize_distribution
from ...stats.results import derive
from ...core import records
from ...catalog.bytes_diff import difference_text
from ...catalog.vector_check import construction_of
from ...core.records import McuTargetSpec, Plan, SimSpec, cell_key
from ..base import RunSession
from .boards import BOARDS
from ..verify import (HEALTH_BYTES, NO_REFERENCE, Verdict, gate, health_failure, load_vectors, python_reference,
                      repetition_failure)
from .executions import cell_executions, kept_repetitions
from .transports import Transport, transport_for
from ...core.extras import MissingExtra
from . import sim
from .pqc_cells import pqc_cell

HOST_CHECKER = "openssl"       # the host harness engine that makes inputs and checks outputs
NO_CHECK = "no known-answer test and no host cross-check for this op: not reported"


def resolved(spec: McuTargetSpec) -> McuTargetSpec:
    """The target with its device profile typed: a new plan's record carries the one planning
    resolved; a stored one keeps only the name and options (the store sits below the simulator's
    profiles), so it is resolved here, once, from those."""
    if isinstance(spec, SimSpec) and spec.resolved_device is None:
        return replace(spec, resolved_device=sim.device_at(spec.core, spec.device, spec.device_options))
    return spec


def make_inputs(host: HarnessProcess | None, op: str, params: Mapping,
                seed: int = DEFAULT_SEED, device_keys: bool = False) -> tuple[Inputs, dict]:
    """Deterministic inputs for one cell, and what the host needs to check the target's output:
    {"expect": bytes} or {"verify": (q, hash)} or {}. `seed` (seeded.cell_seed) picks the ECC keys,
    the ECDSA hash and the signature to verify; cipher and hash inputs are the same for every seed
    (their timing does not depend on the bytes). device_keys: keys = "device" (_device_key_inputs)."""
    fam = OPS[op].family
    values: dict[str, bytes] = {}
    if device_keys and op in ("ecdsa-sign", "ecc-keygen"):
        return _device_key_inputs(op, params, seed)
    if fam in ("aes", "aead", "stream"):
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
    elif fam == "random":
        # fresh bytes each time: no known answer (catalog/vector_check.RANDOM_OUTPUT); the target's
        # output is checked by its length and the health tests the host's cross-check uses
        return Inputs(op, params, values), {"random": int(params.get("bytes", 0) or 0)}
    elif fam in ("ml-kem", "ml-dsa"):
        # inputs and expected outputs from kyber-py / dilithium-py; rejection cases as on-target KATs
        try:
            return pqc_cell(op, params, seed)
        except MissingExtra as exc:
            raise HarnessError(str(exc)) from exc
    elif fam in ("ecdh", "ecc", "ecdsa"):
        if host is None:
            raise HarnessError("ECC cells need the host harness to make keys")
        curve = {"curve": params.get("curve", "p256")}
        d = scalar(curve["curve"], seed * 4)

        def public(secret: bytes) -> str:           # the host's public-from-private, hex
            return host.compute(HOST_CHECKER, "ecdh-keygen", curve, {"d": secret.hex()})["q"]
        if op == "ecdh-keygen":
            values["d"] = d
        elif op == "ecdh-shared-secret":
            values["d"], values["peer"] = d, bytes.fromhex(public(scalar(curve["curve"], seed * 4 + 1)))
        elif op in ("ecdsa-sign", "ecdsa-verify"):
            values["hash"] = fill(32 if curve["curve"] == "p256" else 64, seed * 4 + 2)
            if op == "ecdsa-sign":
                values["d"] = d
                return Inputs(op, params, values), {"verify": (public(d), values["hash"].hex())}
            k = scalar(curve["curve"], seed * 4 + 3)
            values["q"] = bytes.fromhex(public(d))
            values["sig"] = ecdsa_signature(curve["curve"], d, values["hash"], k, bytes.fromhex(public(k)))
    return Inputs(op, params, values), {}


def _device_key_inputs(op: str, params: Mapping, seed: int) -> tuple[Inputs, dict]:
    """A secure element that signs with a key it made and keeps: ecdsa-sign takes the hash only and
    returns r||s||Q, checked with the Q it returned; ecc-keygen returns Q, checked to lie on the curve."""
    curve = params.get("curve", "p256")
    if op == "ecc-keygen":
        return Inputs(op, params, {}), {"on_curve": curve}
    digest = fill(32 if curve == "p256" else 64, seed * 4 + 2)
    return Inputs(op, params, {"hash": digest}), {"verify_own": digest.hex()}


class McuTarget:
    """Firmware built per library recipe and run on a microcontroller through the transport of
    the plan's target (transports.py), or the one a lab worker gives it (`transport`)."""
    kind = "mcu"

    def __init__(self, plan: Plan, progress: Callable | None = None,
                 log: Callable[[str], None] = lambda s: None, transport: Transport | None = None):
        self.plan, self.progress, self.log = plan, progress, log
        self.session: RunSession | None = None
        self.recipes: list = []          # the libraries' recipes, resolved by open()
        self.builders: dict = {}         # recipe name -> its FirmwareBuilder
        self.target: McuTargetSpec = resolved(plan.target)
        self.board = BOARDS[self.target.board]
        self.transport = transport or transport_for(self.target, self.board)
        self.vectors = load_vectors(extra=plan.options.extra.get("vectors") or ())
        self.host: HarnessProcess | None = None

    @property
    def seed(self) -> int:
        """The run's seed of the firmware's inputs (--seed; seeded.DEFAULT_SEED when not given)."""
        seed = self.plan.options.seed
        return DEFAULT_SEED if seed is None else int(seed)

    @property
    def functional_only(self) -> bool:
        """No cycle model (QEMU, a labgrid place whose board is a QEMU machine): cells carry
        output, stack, heap and code size, never cycles or seconds."""
        return self.transport.functional_only

    def on_place(self, plan: Plan, transport: Transport) -> None:
        """Measure on one labgrid place from now on: `plan` is the run's with the place in its
        target (its cells' label, whether its board is emulated), `transport` the place's."""
        self.plan, self.target, self.transport = plan, plan.target, transport

    def conditions(self, builds: dict) -> dict:
        t = self.target.to_json()
        t["board_title"] = self.board.title
        t["clock_hz"] = self.board.clock_hz
        self.transport.conditions(t)
        return {"host": host_conditions(), "target": t, "builds": builds}

    # --- the Target protocol ------------------------------------------------------------------
    def open(self) -> dict:
        self.recipes = []
        source, git_state = self._library_tree()
        # a new plan's record carries the recipes it loaded; a stored plan's names them only
        loaded = self.target.recipes or tuple(load_recipe(name) for name in self.target.libraries)
        for planned in loaded:
            r = replace(planned)              # resolve() fills in the tree it finds: the plan's copy stays as loaded
            # --library-source is the tree of the --recipe files; a bundled engine beside them (--engine
            # mbedtls) keeps its own sources
            tree = None if r.path.resolve().parent == RECIPES_DIR.resolve() else source
            resolve(r, tree)
            if tree is not None:
                r.source_git = git_state      # the commit measured: in the build's conditions
            self.recipes.append(r)
        self.builders = {r.name: FirmwareBuilder(r, self.board, self.target.cpu, self.target.opt, log=self.log,
                                                 library_cc=self.target.library_cc)
                         for r in self.recipes}
        return self.conditions({n: b.conditions() for n, b in self.builders.items()})

    def _library_tree(self) -> tuple[Path | None, dict]:
        """--library-source's tree and what git says of it: DIR@REF's commit exported into the
        cache (library_ref.py), or a plain DIR with its HEAD and dirtiness where it is a git work tree."""
        t = self.target
        if not t.library_source:
            return None, {}
        if t.library_commit:
            return checkout(t.library_source, t.library_ref or t.library_commit, t.library_commit, cache_dir(),
                            log=self.log)
        folder = Path(t.library_source)
        return folder, plain_dir_state(folder) if folder.is_dir() else {}

    def measure(self, session: RunSession) -> None:
        self.session = session
        done = session.done_keys()
        self.host = HarnessProcess()
        for r in self.recipes:
            self._run_library(r, self.builders[r.name], done)

    def measure_unit(self, session: RunSession, library: str, op: str) -> None:
        """One library's cells of one operation (a unit a lab worker leased; targets/mcu/lab/leases.py):
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
        names = [r.name for r in self.recipes]    # the engines' names, in the libraries' order
        return group_index * len(names) + (names.index(engine) if engine in names else 0)

    def _save(self, group_index: int, group: records.Group, engine: str, status: str, kat: str, detail: str,
              result: dict | None = None, samples: list | None = None, provenance: str = "measured") -> None:
        self.session.save_cell(records.Cell(
            op=group.op, params=group.params, engine=engine, target=self.target.label,
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
        cells, checks, runs, cross_kats = [], [], [], []
        try:
            for i, g in items:
                seed = cell_seed(self.seed, op, g.params)
                inputs, check = make_inputs(self.host, op, g.params, seed, recipe.keys == "device")
                if not check:
                    check = self._host_expect(op, g.params, inputs)
                ex = cell_executions(op, g.repeat, self.plan.options, self.transport.repeat,
                                     self.transport.functional_only, kept_repetitions(self.board.ram[1]))
                cells.append(Cell(inputs, ex.repeat, seed))
                cross_kats += check.pop("kats", [])      # the host's rejection cases, checked on the target
                checks.append(check)
                runs.append(ex)
        except HarnessError as exc:
            for i, g in items:
                save(i, g, "failed", "n/a", f"could not make inputs on the host: {exc}")
            return
        variant = builder.variant
        kats = [k for v in matching_vectors_for_op(self.vectors, op, recipe.ctr_drbg)
                if (variant is None or all(v["params"].get(p, x) == x for p, x in variant.when.items()))
                and (k := kat_from_vector(v, op))] + cross_kats
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
        need = variant.stack_needs.get(op) if variant is not None else None
        if need and need > run_img.sizes["stack"]:         # it would overflow into data and bss: refuse
            for i, g in items:
                save(i, g, "unsupported", "n/a",
                     f"{variant.name} {op} needs about {need:,} bytes of stack ({recipe.path.name}: stack_needs); "
                     f"the image for {self.board.name} links {run_img.sizes['stack']:,} "
                     f"({self.board.ram[1] // 1024} KiB RAM): choose a device whose board links more RAM")
            return
        report = self.transport.run(run_img.elf)
        drbg_nodf = op.startswith("ctr-drbg-") and recipe.ctr_drbg == "no-df"
        self._store_cells(save, op, items, checks, report, sizes, variant, [c.seed for c in cells], runs,
                          kat_what=" (CTR_DRBG without derivation function)" if drbg_nodf else "")

    def _store_cells(self, save, op, items, checks, report, sizes, variant, seeds, runs, kat_what: str = "") -> None:
        """Each cell of one image's report: a number only where every check passed (verify.gate)."""
        reading = self.transport.reading(report, op, self.log)
        kat_lines = report.kats_for(op)
        kat_fail = [k for k in kat_lines if not k.get("ok") and not k.get("unsupported")]
        kat_pass = [k for k in kat_lines if k.get("ok")]
        kats = (Verdict("fail", "known-answer test failed on the target: " + ", ".join(k["id"] for k in kat_fail[:3]))
                if kat_fail else Verdict("pass", f"{len(kat_pass)} known-answer vectors{kat_what} on the target")
                if kat_pass else None)
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
                save(i, g, "failed", "fail", kats.detail)
                continue
            if line.get("status") != "ok":
                save(i, g, "failed", "n/a", line.get("why", "failed on the target"))
                continue
            verdict, detail = self._check(op, g.params, bytes.fromhex(line.get("out", "")), checks[n])
            why = f" ({checks[n]['why']})" if checks[n].get("why") else ""
            passed = gate([kats, Verdict(verdict, detail) if verdict != "n/a" else None], NO_CHECK + why)
            if passed.kat == "fail":
                save(i, g, "failed", "fail", passed.detail)
                continue
            result, samples = self._result(n, op, g.params, line, sizes, report, reading, runs[n])
            result["input_seed"] = seeds[n]           # the cell's input and fw_random seed (seeded.cell_seed)
            parts = [passed.detail]
            if variant is not None:
                parts.append("built as " + variant.describe())
            if "served_by" in result:
                parts.append(f"served by {result['served_by']}")
            save(i, g, "ok", "pass", "; ".join(parts), result=result, samples=samples,
                 provenance=self.transport.provenance)

    def _result(self, n, op, params, line, sizes, report, reading, ex) -> tuple[dict, list | None]:
        """An ok cell's result: stack, heap, code size, and its cycles where the transport counts them."""
        result = {"stack_bytes": int(line.get("stack", 0)), "heap_bytes": int(line.get("heap", 0)),
                  "code_size": sizes, "flags": []}
        if "alt_calls" in line:       # calls into _ALT replacement code (fw_alt_calls, core/fw.h)
            result["alt_calls"] = int(line["alt_calls"])
        served = served_by_firmware(report.hello.get("lib_version", ""), op)
        if served:                   # a PSA glue: builtin software or the driver; a peripheral driver: the engine
            result["served_by"] = self.transport.served_by(served)
            band = self.transport.engine_band(served, op, report.hello.get("lib", ""))
            if band:                 # a modelled engine: how far its model read from published hardware
                result["engine_band"] = band
        samples = None
        if not self.functional_only and line.get("cyc"):
            hz = self.transport.clock_hz()
            cyc, overhead = reading.cycles(n, line)
            samples = [[1, int(c * 1e9 / hz), int(c)] for c in cyc]
            result.update(derive(op, params, samples, {"counter": self.transport.counter(report), "counter_hz": hz},
                                 True))
            result["cycles_overhead"] = overhead
            reading.annotate(n, op, params, result)
            if OPS[op].executions:
                result["distribution"] = self._distribution(op, samples, ex)
        return result, samples

    def _distribution(self, op: str, samples: list, ex) -> dict:
        """result["distribution"] of an op whose cost varies by design: every timed execution's cycles
        summarized (docs/schema.md), with how many were asked for and why, and what the numbers are."""
        div = 2.0 if OPS[op].halve else 1.0
        d = summarize_distribution([c / k / div for k, _, c in samples], "cycles per execution")
        d.update(provenance=self.transport.provenance, executions_asked=ex.asked, executions_from=ex.source)
        if ex.repeat < ex.asked:
            d["limited_by"] = f"the image keeps {ex.repeat} timed repetitions per cell on {self.board.name} (FW_MAX_REPEAT)"
        return d

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
        if "random" in check:
            return random_verdict(got, check["random"])
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
        if "verify_own" in check:                # r||s||Q: a signature with the key the device keeps
            n = 32 if params.get("curve", "p256") == "p256" else 66
            sig, q = got[:2 * n], got[2 * n:]
            if len(q) != 2 * n + 1 or q[:1] != b"\x04":
                return "fail", f"expected r||s||Q ({4 * n + 1} bytes) from the device's key, got {len(got)} bytes"
            try:
                ok = self.host.compute(HOST_CHECKER, "ecdsa-verify", {"curve": params.get("curve", "p256")},
                                       {"q": q.hex(), "hash": check["verify_own"], "sig": sig.hex()})
            except HarnessError as exc:
                return "fail", f"host could not verify the target's signature: {exc}"
            if ok.get("ok") == "01":
                return "pass", "the device's signature verifies with the public key it returned in the host's OpenSSL"
            return "fail", "the device's signature does not verify with the public key it returned"
        if "on_curve" in check:                  # Q of a key pair the device keeps
            try:
                self.host.compute(HOST_CHECKER, "ecdsa-verify", {"curve": check["on_curve"]},
                                  {"q": got.hex(), "hash": "00" * 32, "sig": "01" * 64})
            except HarnessError as exc:
                return "fail", f"the device's public key is not a point of {check['on_curve']}: {exc}"
            return "pass", f"the device's public key is a point of {check['on_curve']} (the host's OpenSSL loads it)"
        return "n/a", ""


def random_verdict(got: bytes, want: int) -> tuple[str, str]:
    """A `random` cell's output: the length asked for; the repetition count test on any length, and
    FIPS 140-2's monobit test on its first 2,500 bytes where it has that many (verify.health_failure,
    as the host's cross-check of two 2,500-byte draws)."""
    if len(got) != want:
        return "fail", f"asked for {want} random bytes, the target returned {len(got)}"
    why = health_failure(got[:HEALTH_BYTES]) if want >= HEALTH_BYTES else repetition_failure(got)
    if why:
        return "fail", why + " on the target's output"
    if want >= HEALTH_BYTES:
        return "pass", f"health tests on the target's first {HEALTH_BYTES} bytes (FIPS 140-2 monobit, repetition count)"
    return "pass", (f"{want} bytes, repetition count test (FIPS 140-2's monobit test needs {HEALTH_BYTES} bytes: "
                    "run bytes=2500 for it)")


def served_by_firmware(lib_version: str, op: str = "") -> str | None:
    """The implementation a glue says serves its calls, as "(served by X)" in its fw_lib_version
    (glue/psa.c, which fails every op its driver did not serve): "builtin" or "driver: NAME". A glue
    driving several engines names one per op family, "(served by X for sha*; Y for aes-*)": the
    entry whose op patterns (shell-style) match `op`, else None."""
    m = re.search(r"\(served by ([^)]+)\)", lib_version or "")
    if not m:
        return None
    entries = [e.strip() for e in m.group(1).split(";")]
    if len(entries) == 1 and " for " not in entries[0]:
        return entries[0]
    for entry in entries:
        name, _, patterns = entry.rpartition(" for ")
        if name and any(fnmatch.fnmatchcase(op, p.strip()) for p in patterns.split(",")):
            return name.strip()
    return None


def matching_vectors_for_op(vectors: list[dict], op: str, construction: str = "df") -> list[dict]:
    """The stored vectors of `op`; the CTR_DRBG vectors (whole CAVP flows) serve all three ops, those
    of the library's own construction (its recipe's ctr_drbg: with or without the derivation function)."""
    if op.startswith("ctr-drbg-"):
        return [v for v in vectors if v["op"].startswith("ctr-drbg-") and construction_of(v) == construction]
    return [v for v in vectors if v["op"] == op]

