"""Loading a causal language model from a local ``transformers`` directory: safetensors only, no remote code.

A model directory holds ``config.json`` and ``*.safetensors`` weights (one file, or shards with their
``model.safetensors.index.json``); a ``peft`` adapter directory holds ``adapter_config.json`` and
``adapter_model.safetensors`` and is loaded onto its base model, itself a model directory. Nothing is fetched:
every ``from_pretrained`` runs with ``local_files_only=True``, ``trust_remote_code=False`` and
``use_safetensors=True``. A pickle checkpoint (``pytorch_model.bin``, ``*.pt``, ``*.ckpt``) is refused without
being opened: unpickling a file can run code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._extras import require
from ..exceptions import DataFileError, InvalidInputError, UnsafeFileError, UnsupportedError

__all__ = ["LoadedLM", "load_causal_lm", "wrap_causal_lm", "load_tokenizer", "context_length", "check_reference"]

#: file names of pickle checkpoints (torch.save, pickle), refused unopened
_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")


@dataclass(frozen=True)
class LoadedLM:
    """A loaded causal language model and its tokenizer.

    Attributes
    ----------
    model : transformers.PreTrainedModel
        In evaluation mode, float32, on the device it was loaded to (the CPU unless asked).
    tokenizer : transformers.PreTrainedTokenizerBase
    context_length : int or None
        Most tokens the model takes at once (its position embeddings); None when its config does not say.
    description : str
        What was loaded, in words (architecture, parameters, directories).
    n_parameters : int
    """

    model: Any
    tokenizer: Any
    context_length: int | None
    description: str
    n_parameters: int


def _refuse_pickles(d: Path, what: str, kind: str) -> None:
    """Refuse a directory whose only weights are a pickle checkpoint (never opened), naming the file."""
    pk = sorted(p.name for p in d.iterdir() if p.is_file() and p.name.lower().endswith(_PICKLE_SUFFIXES))
    if pk:
        raise UnsafeFileError(f"{what} {d} holds a pickle {kind} ({pk[0]}) and no safetensors weights; leakaudit "
                              "never unpickles model files: save it with save_pretrained(safe_serialization=True)")


def _check_model_dir(d: Path, *, what: str) -> None:
    """A readable directory with config.json and safetensors weights; else one line saying what is missing."""
    if not d.exists():
        raise DataFileError(f"{what} {d} does not exist")
    if not d.is_dir():
        raise InvalidInputError(f"{what} {d} is a file; give the directory that holds config.json and the "
                                "*.safetensors weights")
    if not (d / "config.json").is_file():
        raise InvalidInputError(f"{what} {d} has no config.json: not a transformers model directory")
    if not any(d.glob("*.safetensors")):
        _refuse_pickles(d, what, "checkpoint")
        raise InvalidInputError(f"{what} {d} has no *.safetensors weights")


def context_length(config: Any) -> int | None:
    """The most tokens a model takes at once, from its config (``max_position_embeddings``, GPT-2's ``n_positions``)."""
    for key in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        v = getattr(config, key, None)
        if isinstance(v, int) and v > 0:
            return v
    return None


def load_tokenizer(directory: str | Path, *, what: str = "tokenizer") -> Any:
    """A tokenizer from a local directory (no download, no remote code).

    Raises
    ------
    InvalidInputError
        The directory holds no tokenizer files, or transformers cannot read them.
    """
    AutoTokenizer = require("transformers", "language-model audits").AutoTokenizer

    d = Path(directory)
    if not d.is_dir():
        raise DataFileError(f"{what} directory {d} does not exist" + (" (it is a file)" if d.exists() else ""))
    if not any((d / f).is_file() for f in _TOKENIZER_FILES):
        raise InvalidInputError(f"{what} directory {d} holds no tokenizer files ({', '.join(_TOKENIZER_FILES[:2])}); "
                                "give the tokenizer's directory with --tokenizer")
    try:
        return AutoTokenizer.from_pretrained(str(d), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError for unreadable tokenizers
        raise InvalidInputError(f"could not load the {what} in {d}: {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:300]}") from None


def _from_pretrained(d: Path, what: str) -> Any:
    torch = require("torch", "language-model audits")
    AutoModelForCausalLM = require("transformers", "language-model audits").AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(str(d), local_files_only=True, trust_remote_code=False,
                                                    use_safetensors=True, dtype=torch.float32)
    except ValueError as exc:  # an architecture that is not a causal LM, or code that must be trusted
        raise UnsupportedError(f"{what} {d} is not a causal language model transformers can load without remote "
                               f"code: {' '.join(str(exc).split())[:300]}") from None
    except Exception as exc:  # truncated or corrupt weights, shapes that do not match the config
        raise InvalidInputError(f"could not load the {what} in {d}: {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:300]}") from None


def _load_adapter(d: Path, base_dir: Path | None, what: str) -> tuple[Any, Path]:
    """A peft adapter on its base model (merged into it); the base comes from ``base_dir`` or the adapter's config."""
    PeftModel = require("peft", "a LoRA adapter").PeftModel

    if not any(d.glob("adapter_model*.safetensors")):
        _refuse_pickles(d, what, "adapter checkpoint")
        raise InvalidInputError(f"{what} {d} has adapter_config.json but no adapter_model.safetensors")
    try:
        cfg = json.loads((d / "adapter_config.json").read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{what} {d}: adapter_config.json is not readable JSON ({exc})") from None
    if base_dir is None:
        name = cfg.get("base_model_name_or_path")
        if not name:
            raise InvalidInputError(f"{what} {d}: adapter_config.json names no base model; give it as a directory")
        base_dir = Path(name) if Path(name).is_absolute() or not (d / name).exists() else d / name
        if not base_dir.is_dir():
            raise InvalidInputError(f"{what} {d} is a LoRA adapter whose base model {name!r} is not a local "
                                    "directory (no model hub is used): save the base model locally and point "
                                    "base_model_name_or_path at it")
    _check_model_dir(base_dir, what=f"base model of the adapter {d}:")
    base = _from_pretrained(base_dir, "base model")
    try:
        model = PeftModel.from_pretrained(base, str(d), is_trainable=False, local_files_only=True)
    except Exception as exc:
        raise InvalidInputError(f"could not load the adapter in {d} onto {base_dir}: {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:300]}") from None
    return model.merge_and_unload(), base_dir


def load_causal_lm(model_dir: str | Path, tokenizer_dir: str | Path | None = None, *,
                   what: str = "model directory", device: str = "cpu") -> LoadedLM:
    """Load a causal language model and its tokenizer from local directories.

    Parameters
    ----------
    model_dir : str or Path
        A transformers model directory (config.json + *.safetensors), or a peft adapter directory
        (adapter_config.json + adapter_model.safetensors) whose base model is a local model directory.
    tokenizer_dir : str or Path, optional
        Where the tokenizer is; default ``model_dir`` (for an adapter without tokenizer files: its base model's).
    what : str
        How messages name ``model_dir`` ("model directory", "reference model directory").
    device : {"cpu", "cuda", "cuda:N", "auto"}, default "cpu"
        Where the model is put after loading (weights are read on the CPU, then moved); scoring runs there.

    Returns
    -------
    LoadedLM

    Raises
    ------
    DataFileError
        A directory that does not exist.
    UnsafeFileError
        A pickle checkpoint in place of safetensors weights.
    InvalidInputError
        No config.json, no weights, unreadable weights or tokenizer, or a tokenizer with more tokens than the
        model's embedding has rows.
    UnsupportedError
        Not a causal language model, or one that needs remote code; or ``device="cuda"`` where CUDA is not
        available.
    """
    from ..learners import resolve_device

    dev = resolve_device(device)  # a bad device is refused before anything is read
    d = Path(model_dir)
    base_dir = None
    if d.is_dir() and (d / "adapter_config.json").is_file():
        model, base_dir = _load_adapter(d, None, what)
    else:
        _check_model_dir(d, what=what)
        model = _from_pretrained(d, what)
    if tokenizer_dir is None:
        has_tok = any((d / f).is_file() for f in _TOKENIZER_FILES)
        tokenizer_dir = d if has_tok or base_dir is None else base_dir
    tok = load_tokenizer(tokenizer_dir)
    return wrap_causal_lm(
        model, tok, device=dev, source=f"from {d}" + (f" (LoRA adapter on {base_dir})" if base_dir is not None else "")
        + (f", tokenizer from {tokenizer_dir}" if Path(tokenizer_dir) != d else ""),
        mismatch=(f"the tokenizer in {tokenizer_dir}", f"the model in {d}",
                  "give the model's own tokenizer with --tokenizer"))


def wrap_causal_lm(model: Any, tokenizer: Any, *, device: str = "cpu", source: str = "from memory",
                   mismatch: tuple[str, str, str] = ("the tokenizer", "the model", "give the model's own tokenizer")
                   ) -> LoadedLM:
    """A causal language model and its tokenizer, already loaded, made ready to score: put in evaluation mode and on
    ``device`` (both change ``model`` itself), checked to belong together, and described.

    ``source``: where they came from, in words ("from DIR", "from memory"); ``mismatch``: how the error names the
    tokenizer, the model and the remedy when the tokenizer has more tokens than the model embeds.
    """
    from ..learners import resolve_device

    dev = resolve_device(device)
    if not (hasattr(model, "get_input_embeddings") and hasattr(model, "config") and hasattr(model, "parameters")):
        raise InvalidInputError(f"the model is a {type(model).__name__}, not a transformers causal language model")
    if not callable(tokenizer) or not hasattr(tokenizer, "__len__"):
        raise InvalidInputError(f"the tokenizer is a {type(tokenizer).__name__}, not a transformers tokenizer")
    model.eval()
    if dev != "cpu":
        model.to(dev)
    n_emb = int(model.get_input_embeddings().weight.shape[0])
    if len(tokenizer) > n_emb:
        tok_name, model_name, remedy = mismatch
        raise InvalidInputError(f"{tok_name} has {len(tokenizer):,} tokens but {model_name} embeds only {n_emb:,}: "
                                f"they do not belong together ({remedy})")
    n_par = int(sum(p.numel() for p in model.parameters()))
    ctx = context_length(model.config)
    arch = (getattr(model.config, "architectures", None) or [type(model).__name__])[0]
    desc = (f"{arch} ({n_par / 1e6:.2f}M parameters, vocabulary {n_emb:,}, context {ctx or 'unbounded'}) {source}"
            + (f", on {dev}" if dev != "cpu" else ""))
    return LoadedLM(model=model, tokenizer=tokenizer, context_length=ctx, description=desc, n_parameters=n_par)


def check_reference(lm: LoadedLM, ref: LoadedLM, name: str, model_name: str) -> None:
    """Refuse a reference model (``name``) with the audited model's (``model_name``) own weights: the same folder
    or object given twice, or a copy. Its scores would equal the model's, so every reference attack would find no
    signal whatever the model learnt, and the audit would ask for more texts that could never decide it."""
    import torch

    a, b = lm.model.state_dict(), ref.model.state_dict()
    if ref.model is lm.model or (a.keys() == b.keys() and all(
            a[k].shape == b[k].shape and torch.equal(a[k], b[k].to(a[k].device)) for k in a)):
        raise InvalidInputError(f"{name} holds the same weights as {model_name}: a reference model must be another "
                                "model (e.g. the base before fine-tuning); against itself the model shows no signal, "
                                "whatever it learnt")
