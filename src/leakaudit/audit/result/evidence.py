"""The evidence record of an audit (``evidence.json``): what was audited, under which rules, what was found, and what
was not tested (docs/verdict.md, "The evidence record", says each part in prose).

A trusted research environment files it beside its release decision. It holds ``audit`` (the command or call, seed,
profile, versions, target and data summary), ``files`` (every input with its ``role``: a file as ``{"role", "path",
"sha256", "bytes"}``, a folder file by file, a bundled demo file with leakaudit's recorded digest and ``source``, an
input given in memory as ``{"role", "source": "memory", "type", "form", "recompute", "sha256"}`` with its shape and
dtypes, ``sha256`` null and a ``note`` where it could not be fingerprinted: :mod:`leakaudit.audit.inputs.digests`),
``environment`` (:func:`environment`, :func:`source_digest`), ``policy``, ``release`` (the context, its threat model
and the ``identifiability_basis``), ``unit`` and ``duplicates``, ``checks`` (each with the policy settings its
threshold comes from and the ``standards`` items it evidences, :mod:`leakaudit.audit.result.standards`; a membership
attack's with ``against_chance``, an epsilon's with ``risk``), ``not_run``, ``attack_classes`` (EDPB Opinion 28/2024's, each "tested" with its
``finding``, "not applicable" or "not tested", and why), ``standards`` (``sources`` and ``items``, each also "not
evaluable" where no audit of a model can speak to it) and
``limitations``; written beside the audit's files (:func:`with_outputs`), ``outputs`` (their SHA-256 and size) and
``personal_data``.

:func:`build_evidence` takes a ``results.json`` dict (``docs/results.schema.json``), the input files and the inputs
given in memory; it never re-runs an analysis.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from ..._results import to_strict_jsonable, write_json_atomic
from ...data import DATA_FILES, sha256_of
from ...exceptions import InvalidInputError, InvalidParameterError
from ...metrics import min_nonmembers_for_tpr
from ..inputs.digests import array_digest, frame_digest, memory_entry, model_digest
from ..policy import DEFAULT_POLICY, Policy, recorded_settings
from .release import RELEASES, threat_model
from .standards import SOURCES, check_standards, class_standards, finding, identifiability_basis, item_statuses

__all__ = ["build_evidence", "write_evidence", "with_outputs", "file_digest", "frame_digest", "array_digest",
           "model_digest", "environment", "source_digest", "ATTACK_CLASSES", "RELEASES", "EVIDENCE_VERSION"]

#: 2: inputs given in memory fingerprinted in ``files``; ``audit.seed`` and ``audit.profile``. 3: ``standards`` (on
#: each check and attack class, and the items' statuses), ``release.identifiability_basis``, ``unit``, ``duplicates``.
#: 4: ``environment.leakaudit_source``, libraries by distribution, ``not_run``, ``finding``, ``against_chance``,
#: ``outputs``, ``personal_data``. 5: ISO/IEC 27559's items (``iso_27559``), the "not evaluable" status, ``risk``
EVIDENCE_VERSION = 5

#: the libraries the audit's numbers depend on, by import name, each with the distribution that usually provides it
#: (recorded by the distributions that do provide it: xgboost may come as xgboost-cpu)
_LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn", "pandas": "pandas",
              "pydantic": "pydantic", "skops": "skops", "torch": "torch", "transformers": "transformers", "peft": "peft",
              "safetensors": "safetensors", "dp_accounting": "dp-accounting", "ray": "ray", "xgboost": "xgboost",
              "lightgbm": "lightgbm", "catboost": "catboost"}

#: the files of the installed package whose bytes :func:`source_digest` covers
_SOURCE_SUFFIXES = (".py", ".j2", ".c", ".h")

#: the audit's settings that name input files, and the role each file plays
_INPUT_KEYS = {"model": "model", "train": "members", "test": "non-members", "data": "members and non-members",
               "population": "population", "predictions_train": "predictions on the members",
               "predictions_test": "predictions on the non-members", "model_dir": "language model",
               "tokenizer": "tokenizer", "reference_dir": "reference language model"}

#: the attack classes of EDPB Opinion 28/2024 the record accounts for, in order
ATTACK_CLASSES = ("membership inference", "attribute inference", "reconstruction and regurgitation",
                  "model inversion", "extraction")

#: a demo data set's folder among the checksummed data files, where it differs from its name
_DATASET_FOLDERS = {"census": "census-kdd"}


def file_digest(path: str | Path) -> dict:
    """``{"path", "sha256", "bytes"}`` of one file, or of a folder as ``{"path", "files": [...]}`` (every file inside,
    by relative path, sorted)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file())
        return {"path": str(p), "files": [{**file_digest(f), "path": str(f.relative_to(p))} for f in files]}
    if not p.is_file():
        raise InvalidInputError(f"input file {p} does not exist; the evidence record fingerprints every input file")
    return {"path": str(p), "sha256": sha256_of(p), "bytes": p.stat().st_size}


def environment() -> dict:
    """Python, platform, leakaudit (its version and :func:`source_digest`) and the libraries' distributions with
    their versions, in this process."""
    from ..._version import __version__

    provided = metadata.packages_distributions()
    libs = {}
    for module, usual in _LIBRARIES.items():
        dists = dict.fromkeys(provided.get(module) or ())
        libs.update({d: metadata.version(d) for d in dists} if dists else {usual: "not installed"})
    return {"python": sys.version.split()[0], "implementation": platform.python_implementation(),
            "platform": platform.platform(), "leakaudit": __version__, "leakaudit_source": source_digest(),
            "libraries": libs}


@functools.cache
def source_digest() -> dict:
    """The leakaudit source that ran: ``sha256`` of every .py, .j2, .c and .h file of the installed package, in
    order of their paths relative to it, each as the length of its path in UTF-8 (8 bytes, little-endian), the
    path, the length of its bytes and the bytes; and, where the package's files are tracked in a git work tree, its
    ``commit`` and whether files under it differ from that commit (``uncommitted_changes``). Computed once per
    process."""
    pkg = Path(__file__).resolve().parents[2]
    h, n = hashlib.sha256(), 0
    for f in sorted((f for f in pkg.rglob("*") if f.suffix in _SOURCE_SUFFIXES), key=lambda f: f.relative_to(pkg)):
        path, data = f.relative_to(pkg).as_posix().encode(), f.read_bytes()
        h.update(len(path).to_bytes(8, "little") + path + len(data).to_bytes(8, "little") + data)
        n += 1
    out = {"sha256": h.hexdigest(), "files": n, "recompute": "leakaudit.audit.result.evidence.source_digest"}
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(pkg), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:  # (a package installed into a virtual environment inside some checkout is not that checkout's)
        git("ls-files", "--error-unmatch", "__init__.py")
        out.update(commit=git("rev-parse", "HEAD"), uncommitted_changes=bool(git("status", "--porcelain", "--", ".")))
    except (OSError, subprocess.SubprocessError):
        out["commit"] = None  # not a git checkout (an installed wheel), or no git: the digest identifies the source
    return out


def _input_files(results: dict, files: Mapping[str, Any] | None, base_dir: Path) -> list[dict]:
    """Fingerprints of the inputs: ``files`` (role -> path or list of paths) or the audit's config's file settings."""
    out = []
    if files is None:
        cfg = results.get("config") or {}
        files = {_INPUT_KEYS[k]: cfg[k] for k in _INPUT_KEYS if cfg.get(k)}
        if not any(cfg.get(k) for k in ("train", "test", "data")) and cfg.get("dataset"):
            out += _bundled_files(cfg["dataset"])
    for role, paths in files.items():
        for p in paths if isinstance(paths, (list, tuple)) else [paths]:
            p = Path(p)
            out.append({"role": str(role), **file_digest(p if p.is_absolute() else base_dir / p)})
    return out


def _bundled_files(dataset: str) -> list[dict]:
    """The checksummed files of a demo data set: the loader checks each against this digest before reading it."""
    folder = _DATASET_FOLDERS.get(dataset, dataset)
    entries = [f for key, f in sorted(DATA_FILES.items()) if key.split("/")[0] == folder]
    if not entries:
        return [{"role": "demo data set", "path": dataset, "sha256": None,
                 "note": "generated by leakaudit from the audit's seed; no file"}]
    return [{"role": "demo data set", "path": f.relpath, "sha256": f.sha256, "source": f.source,
             "note": "leakaudit's recorded digest, which the loader checks the file against before reading it"}
            for f in entries]


def _policy_keys(check_id: str) -> list[str]:
    """The policy settings a check's threshold (and its rule) comes from."""
    parts = check_id.split(".")
    head, tail = parts[0], parts[-1]
    if head == "membership" and check_id != "membership.blind_baseline.auc":
        return {"auc": ["max_auc"], "tpr_at_low_fpr": ["max_tpr_at_low_fpr", "low_fpr"],
                "epsilon": ["epsilon_budget", "epsilon_delta"]}.get(tail, [])
    if check_id == "dtp.dtp1":
        return ["max_dtp", "max_records_above_dtp", "max_unmeasured_dtp_share", "dtp_rule"]
    if head == "attribute":
        return ["max_attribute_advantage"]
    if head == "extraction":
        return ["max_extraction_rate_difference"]
    return {"structural.leaf_size": ["min_leaf_records"],
            "structural.parameters_per_record": ["max_parameters_per_record"]}.get(check_id, [])


#: thresholds that come from elsewhere than the policy
_OTHER_SOURCES = {
    "structural.instance_based": ("no training record may be kept in the model: SACRO-ML's instance-based attack "
                                  "reports any stored record as a confirmed disclosure"),
    "dp.one_run": "the owner's claimed epsilon (claimed_epsilon)",
    "dp.noise_check": "the owner's claimed epsilon (claimed_epsilon)",
    "membership.blind_baseline.auc": "no threshold: the blind baseline says whether the members and non-members differ",
}


def _check_entry(check: dict, policy: Policy) -> dict:
    keys = _policy_keys(check["id"])
    entry = {k: check.get(k) for k in ("id", "analysis", "name", "status", "value", "interval", "threshold",
                                       "confidence", "sentence", "fix", "describes", "shows", "p_value")}
    entry["policy_settings"] = [{"key": k, "value": policy.value(k), "source": policy.sources[k]} for k in keys]
    entry["threshold_source"] = (_OTHER_SOURCES.get(check["id"]) or
                                 ("; ".join(f"{k}: {policy.sources[k]}" for k in keys) if keys else
                                  "not a setting of the policy"))
    entry["standards"] = check_standards(check["id"])
    return entry


def _beside(entry: dict, results: dict) -> dict:
    """A check with what results.json gives beside its value: a membership attack's accuracy and advantage over
    random guessing (``against_chance``, AISVS 11.3.3's own quantity); an epsilon's implied re-identification,
    attribute inference and reconstruction bounds (``risk``; ``claimed_risk``: the claim's, beside the DP checks)."""
    parts, dp = entry["id"].split("."), results.get("dp") or {}
    attack = ((results.get("membership") or {}).get(parts[1], {})
              if entry["analysis"] == "membership" and len(parts) == 3 else {})
    extra = {"against_chance": attack.get("against_chance"),
             "risk": (attack.get("epsilon") or {}).get("risk") if parts[-1] == "epsilon"
             else dp.get("risk") if entry["id"] == "dp.one_run" else None,
             "claimed_risk": dp.get("claimed_risk") if parts[0] == "dp" else None}
    return {**entry, **{k: v for k, v in extra.items() if v}}


#: the tabular audit's analyses that run only when their condition holds: (what ran, its name, its condition)
_CONDITIONAL = (
    (lambda r, ids: any(i.startswith("structural.") for i in ids), "structural checks of the model file",
     "they run for a released model file only (release weights)"),
    (lambda r, ids: (r.get("dtp") or {}).get("removal") is not None or "dtp.dtp1" not in ids,
     "removing the records that break DTP-1", "it runs only when DTP-1 is exceeded"),
    (lambda r, ids: any(i.startswith("dp.") for i in ids), "one-run audit of the claimed epsilon",
     "it runs only with a claimed epsilon (claimed_epsilon)"),
)


def _not_run(results: dict, checks: list[dict]) -> list[dict]:
    """The analyses the audit's plan holds that did not run, each with why and what would run it: results.json's
    ``skipped``, then those whose condition did not hold (a tabular audit)."""
    out = [{"analysis": s.get("name"), "reason": s.get("reason"), "fix": s.get("fix") or None}
           for s in results.get("skipped") or [] if isinstance(s, dict)]
    if (results.get("data") or {}).get("kind") != "text":
        ids, named = {c["id"] for c in checks}, {o["analysis"] for o in out}
        out += [{"analysis": name, "reason": why, "fix": None} for ran, name, why in _CONDITIONAL
                if not ran(results, ids) and name not in named]
    return out


def _low_fpr_need(results: dict, policy: Policy) -> str | None:
    """How many non-members a TPR-at-low-FPR check needs at this audit's own confidence, at its FPR and at 0.1 %:
    the count behind the choice of ``low_fpr``, from the audit's numbers (the per-check confidence, the members)."""
    verdict, data = results.get("verdict") or {}, results.get("data") or {}
    cc, n1, n0 = verdict.get("check_confidence"), data.get("n_members"), data.get("n_nonmembers")
    if not (isinstance(cc, float) and isinstance(n1, int) and isinstance(n0, int) and n1 > 0):
        return None
    fpr, th = policy.value("low_fpr"), policy.value("max_tpr_at_low_fpr")
    try:
        need = {f: min_nonmembers_for_tpr(f, th, confidence=cc, n_members=n1) for f in dict.fromkeys((fpr, 0.001))}
    except InvalidParameterError as exc:  # too few members for any number of non-members
        return f"at this audit's per-check confidence {cc:.4g}: {exc}"
    strict = "" if fpr == 0.001 else f" ({need[0.001]:,} at 0.1 % FPR)"
    return (f"at this audit's per-check confidence {cc:.4g} and {n1:,} members, a TPR at {fpr * 100:g} % FPR can be "
            f"shown above {th:g} only with at least {need[fpr]:,} non-members{strict}; the audit had {n0:,}")


def _with_low_fpr_need(entry: dict, need: str | None) -> dict:
    if need is None or "low_fpr" not in [s["key"] for s in entry["policy_settings"]]:
        return entry
    return {**entry, "threshold_source": f"{entry['threshold_source']}; {need}"}


def _consistent(results: dict, policy: Policy) -> None:
    """The policy must be the one the audit applied: its settings equal the audit's recorded ones."""
    recorded = recorded_settings(results.get("config") or {})
    # a verdict that records no burden of proof was decided before policies existed: under "leakage shown"
    recorded["burden_of_proof"] = (results.get("verdict") or {}).get("burden_of_proof", "leakage shown")
    unknown = sorted(set(recorded) - set(policy.setting_names()))
    if unknown:
        raise InvalidInputError(f"results.json records the setting {unknown[0]}, which a release policy does not have")
    for key, value in recorded.items():
        mine = policy.value(key)
        if mine != value:
            raise InvalidParameterError(f"the policy {policy.name!r} sets {key} = {mine!r}, the audit used {value!r}: "
                                        "build the evidence record with the policy the audit applied")


def _release(release: str | None) -> dict:
    if release is not None and release not in RELEASES:
        raise InvalidParameterError(f"release must be one of {', '.join(RELEASES)}; got {release!r}")
    return {"context": release or "not declared", "threat_model": threat_model(release),
            "identifiability_basis": identifiability_basis(release)}


def _measured(checks: list[dict]) -> list[str]:
    return [c["id"] for c in checks if c["status"] != "not measurable"]


def _skipped_reason(results: dict, name_starts: str) -> str | None:
    """The reason results.json's ``skipped`` gives for an analysis whose name starts with ``name_starts``."""
    for s in results.get("skipped") or []:
        if isinstance(s, dict) and str(s.get("name", "")).lower().startswith(name_starts):
            return f"{s['name']}: {s.get('reason', '')}".rstrip(": ")
    return None


def _attack_classes(results: dict, checks: list[dict], release: str | None) -> list[dict]:
    """Each class of :data:`ATTACK_CLASSES`, in order: its status ("tested", "not applicable" or "not tested"), the
    checks behind it and why."""
    by = {a: [c for c in checks if c["analysis"] == a]
          for a in ("membership", "dtp", "attribute", "structural", "extraction")}
    data = results.get("data") or {}
    text = data.get("kind") == "text"
    mem, attr, ex = by["membership"] + by["dtp"], by["attribute"], by["extraction"]
    inst = [c for c in by["structural"] if c["id"] == "structural.instance_based"]

    if _measured(mem):
        membership = ("tested", _measured(mem), "membership attacks (and DTP-1, a record's leave-one-out influence) "
                      f"were measured on {data.get('n_members', '?')} members and {data.get('n_nonmembers', '?')} "
                      "non-members")
    else:
        membership = ("not tested", [], _skipped_reason(results, "membership")
                      or ("its checks could not be measured" if mem else "no membership attack ran"))

    if text:
        attribute = ("not applicable", [], "the records are texts, with no attribute columns to infer")
    elif _measured(attr):
        attribute = ("tested", _measured(attr), "attribute inference of each sensitive column against the no-model "
                     "baseline" + ("; property inference (population-level) also ran" if results.get("property")
                                   else ""))
    else:
        attribute = ("not tested", [], _skipped_reason(results, "attribute inference") or
                     ("its checks could not be measured" if attr else "no sensitive column was named (`sensitive`)"))

    if _measured(ex):
        section = results.get("extraction") or {}
        reconstruction = ("tested", _measured(ex), "(n, p)-extraction of the members' suffixes against the "
                          f"non-members' (Hayes et al. 2024; {section.get('sampler', 'the stated sampler')}, up to "
                          f"{max(section.get('n_values') or [0]):,} tries), and the model's greedy and sampled "
                          "continuations of a sample of prefixes, exact and near-verbatim")
    elif inst:
        reconstruction = ("tested", [inst[0]["id"]], "in part: the structural check reads whether the model file "
                          "keeps training records verbatim (recoverable by whoever holds it); no attack reconstructs "
                          "records from the model's outputs" + ("" if release == "weights" else
                                                                "; a served model's file is not exposed, so this "
                                                                "matters if the file is ever released"))
    elif text:
        reconstruction = ("not tested", [], ex[0]["sentence"] if ex else _skipped_reason(results, "extraction")
                          or "extraction was not asked for (`extraction = false`)")
    else:
        reconstruction = ("not tested", [], "no structural check ran (it reads a scikit-learn or torch model file) "
                          "and leakaudit runs no attack that reconstructs records from the model's outputs")

    inversion = ("not tested", [], "leakaudit runs no model-inversion attack (reconstructing inputs or class "
                 "representatives from the model); the attribute-inference checks cover its tabular form, inferring "
                 "a sensitive attribute of a known record")
    if release == "weights":
        extraction = ("not applicable", [], "the model file is published: there is no model left to extract by "
                      "querying it")
    else:
        extraction = ("not tested", [], "leakaudit runs no model-extraction attack (copying the model by querying "
                      "it); drawing training text out of a language model is the reconstruction and regurgitation "
                      "class above")
    return [{"class": name, "status": status, "checks": ids, "reason": why} for name, (status, ids, why)
            in zip(ATTACK_CLASSES, (membership, attribute, reconstruction, inversion, extraction))]


def _fingerprint_sentences(files: list[dict]) -> list[str]:
    """What the limitations say of the inputs given in memory: which could not be fingerprinted and why, and that the
    others' digests are of canonical forms, with the functions that recompute them."""
    memory = [f for f in files if f.get("source") == "memory"]
    out = [f"Not fingerprinted: the {f['role']} ({f['type']}), {f['note'].removeprefix('not fingerprinted: ')}; the "
           "record cannot show that a later copy of it is the one audited." for f in memory if f.get("sha256") is None]
    done = [f for f in memory if f.get("sha256") is not None]
    if done:
        one = len(done) == 1
        how = sorted({f"{f['recompute']} ({f['form']})" for f in done})
        out.append(f"No file holds the {_joined([f['role'] for f in done])} (objects in memory): the record "
                   f"identifies {'it' if one else 'them'} by the SHA-256 of {'its' if one else 'their'} canonical "
                   f"form{'' if one else 's'}, not of a file's bytes; recompute {'it' if one else 'them'} from the "
                   f"object{'' if one else 's'} with {_joined(how)}.")
    return out


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _limitations(results: dict, checks: list[dict], classes: list[dict], policy: Policy, release: dict,
                 files: list[dict]) -> str:
    data = results.get("data") or {}
    settings = results.get("settings") or {}
    verdict = results.get("verdict") or {}
    parts = [("This record shows what the attacks and checks listed found on "
              f"{data.get('n_members', '?')} members and {data.get('n_nonmembers', '?')} non-members; it bounds what "
              "those attacks can do, not what every possible attack could.")]
    if settings.get("profile"):
        what = f"The audit ran the {settings['profile']} profile"
        if settings.get("n_reference") is not None:
            what += f" ({settings['n_reference']} reference models"
            if settings.get("pdtp_records"):
                what += f"; PDTP measured for {settings['pdtp_records']} members, not all"
            what += ")"
        parts.append(what + ".")
    untested = [c["class"] for c in classes if c["status"] == "not tested"]
    if untested:
        parts.append(f"Not tested: {', '.join(untested)}.")
    nm = [c["id"] for c in checks if c["status"] == "not measurable"]
    if nm:
        parts.append(f"{len(nm)} check{'s' if len(nm) > 1 else ''} could not be measured ({', '.join(nm)}); "
                     "each says what would measure it.")
    redrawn = ((results.get("resources") or {}).get("reference_models") or {}).get("note")
    if redrawn:  # the membership stage's record of reference pairs drawn again (steps.membership.redraw_note)
        parts.append(f"Reference models: {redrawn}.")
    recipe = verdict.get("recipe") or {}
    if recipe.get("reproduces") is False:
        parts.append("Retraining did not reproduce the given model's membership signal: results computed from "
                     "retrained models describe the recipe, not necessarily the model.")
    if release["context"] == "not declared":
        parts.append("No release context was declared, so the threat model is inferred from the analyses that ran.")
    dup = results.get("duplicates") or {}
    if dup.get("members_repeated") or dup.get("members_in_nonmembers"):
        parts.append(f"Duplicates: {dup['sentence'][:1].lower()}{dup['sentence'][1:]}")
    parts += _fingerprint_sentences(files)
    parts.append(f"Thresholds come from the policy {policy.name!r}; the sources say which are leakaudit's own "
                 "choices rather than a regulator's numbers (no regulator gives them).")
    return " ".join(parts)


def build_evidence(results: dict, *, files: Mapping[str, Any] | None = None, base_dir: str | Path = ".",
                   memory: Mapping[str, Any] | None = None, policy: Policy = DEFAULT_POLICY,
                   release: str | None = None, structural: Sequence = (), recorded: datetime | None = None) -> dict:
    """The evidence record of one audit.

    Parameters
    ----------
    results : dict
        The audit's ``results.json`` (as read with ``json.load``).
    files : mapping of role to path (or list of paths), optional
        The input files to fingerprint, e.g. ``{"model": "model.skops", "members": "train.csv"}``. Default: every
        file setting of ``results["config"]`` (model, train, test, data, population, predictions, model_dir,
        tokenizer, reference_dir), relative paths taken from ``base_dir``.
    base_dir : path, default "."
    memory : mapping of role to object, optional
        The inputs given in memory, e.g. ``{"model": pipeline, "members": members_df, "non-members": test_df}``:
        each fingerprinted by the SHA-256 of its canonical form (:func:`~leakaudit.audit.inputs.digests.memory_entry`: a
        DataFrame by :func:`frame_digest`, an array or a list by :func:`array_digest`, anything else as a model by
        :func:`model_digest`) and listed in ``files`` after the files, with ``"source": "memory"``; one that cannot
        be fingerprinted is listed with the reason, which the limitations repeat.
    policy : Policy, default DEFAULT_POLICY
        The policy the audit applied; its settings must equal those recorded in ``results["config"]``, and its
        burden of proof the verdict's ``burden_of_proof`` (a verdict without one was decided under "leakage shown",
        leakaudit's rule before policies: pass ``LEAKAGE_SHOWN_POLICY``).
    release : {"weights", "scores", "labels"}, optional
        The declared release context (None: not declared).
    structural : sequence of Check or dict
        Structural checks computed apart from the verdict (ignored when ``results`` already holds them).
    recorded : datetime, optional
        When the record is made (default: now, UTC).

    Returns
    -------
    dict
        Plain JSON values (write it with :func:`write_evidence`).

    Raises
    ------
    InvalidInputError
        ``results`` lacks the verdict, or an input file is missing.
    InvalidParameterError
        The policy differs from the audit's settings, or ``release`` is unknown.
    """
    if not isinstance(results, dict) or not isinstance(results.get("verdict"), dict):
        raise InvalidInputError("results must be the audit's results.json (a dict with a 'verdict')")
    _consistent(results, policy)
    checks = [dict(c) for c in results["verdict"].get("checks", [])]
    have = {c["id"] for c in checks}
    for c in structural:
        c = to_strict_jsonable(c)
        if c["id"] not in have:
            checks.append(c)
    release_info = _release(release)
    status = {c["id"]: c["status"] for c in checks}
    classes = [{**c, **({"finding": finding([status[i] for i in c["checks"]])} if c["status"] == "tested" else {}),
                "standards": class_standards(c["class"])} for c in _attack_classes(results, checks, release)]
    need = _low_fpr_need(results, policy)
    verdict = results["verdict"]
    config = results.get("config") or {}
    inputs = _input_files(results, files, Path(base_dir)) + [memory_entry(r, o) for r, o in (memory or {}).items()]
    record = {
        "evidence_version": EVIDENCE_VERSION,
        "type": "leakaudit evidence record",
        "recorded": (recorded or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "audit": {"command": results.get("command"), "seed": config.get("seed"),
                  "profile": config.get("profile") or (results.get("settings") or {}).get("profile"),
                  "created": results.get("created"),
                  "leakaudit_version": results.get("leakaudit_version"),
                  "results_schema_version": results.get("schema_version"),
                  "target": results.get("target"), "data": {k: v for k, v in (results.get("data") or {}).items()
                                                            if not isinstance(v, (list, dict)) or k == "files"}},
        "verdict": {"outcome": verdict.get("outcome"), "headline": verdict.get("headline"),
                    "burden_of_proof": policy.burden_of_proof, "confidence": verdict.get("confidence"),
                    "check_confidence": verdict.get("check_confidence"), "n_checks": verdict.get("n_checks"),
                    "counts": verdict.get("counts")},
        "files": inputs,
        "environment": environment(),
        "policy": {"name": policy.name, "origin": policy.origin, "description": policy.description,
                   "settings": policy.table()},
        "release": release_info,
        "checks": [_beside(_with_low_fpr_need(_check_entry(c, policy), need), results) for c in checks],
        "not_run": _not_run(results, checks),
        "attack_classes": classes,
        "standards": {"sources": SOURCES, "items": item_statuses(results, checks, classes, release)},
        "unit": _unit_words((results.get("data") or {}).get("unit")),
        "duplicates": results.get("duplicates"),
    }
    record["limitations"] = _limitations(results, checks, classes, policy, release_info, inputs)
    return to_strict_jsonable(record)


def _unit_words(unit: dict | None) -> str:
    """The privacy unit as the record states it: each row (no unit column), or the unit column with its counts
    and how each analysis treats it (:mod:`leakaudit.audit.inputs.units`)."""
    if not unit:
        return "record: each row is taken to be a different person (no unit column)"
    return (f"unit column {unit['column']!r}: {unit['n_member_units']:,} member units ({unit['n_member_rows']:,} "
            f"rows) and {unit['n_nonmember_units']:,} non-member units ({unit['n_nonmember_rows']:,} rows), the "
            f"largest of {unit['largest_unit']:,} rows; membership attacks score units ({unit['combine']}) and "
            "their metrics count units; PDTP, DTP-1 and the removal analysis leave out all of a unit's rows")


def with_outputs(record: dict, folder: Path, *, redacted: bool, values: Sequence[str], quoted: bool = False) -> dict:
    """``record`` with the files the audit wrote in ``folder`` beside evidence.json (``outputs``: results.json,
    records.csv and report.html, each with its SHA-256 and size) and what of them is personal data
    (``personal_data``): ``values``, the records' own columns, written there unless ``redacted``; ``quoted``:
    results.json quotes members' texts (a language model's extracted spans or leaked windows)."""
    names = [n for n in ("results.json", "records.csv", "report.html") if (folder / n).is_file()]
    outputs = [{**file_digest(folder / n), "path": n} for n in names]
    if redacted:
        said = ("report.html and records.csv were written redacted: they name each record by its file and row or "
                "line (or index) and give its scores and the verdict, none of its values; the names still point to "
                "personal data in the input files, which stay personal data")
    else:
        said = (f"report.html and records.csv contain personal data: each audited record's own values "
                f"({_joined(list(values)[:6]) + (', ...' if len(values) > 6 else '')}; the label among them) beside "
                "its file and row, members' and non-members' alike; keep and share them as the training data is "
                "kept, or write them without the values with --redact (redact=True)")
    tail = ("results.json quotes the members' texts (the spans a prompt drew out of the model, the windows that carry "
            "the membership signal): it is personal data too; --redact leaves them out" if quoted else "results.json and evidence.json hold no record's values (records are "
            "named by file and row or line)")
    return {**record, "outputs": outputs, "personal_data": f"{said}. {tail}."}


def write_evidence(path: str | Path, record: dict) -> Path:
    """Write the record as strict JSON (atomically: a reader never sees half a file); return the path."""
    write_json_atomic(Path(path), record)
    return Path(path)
