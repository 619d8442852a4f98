"""A small GPT-2-architecture model, built and fine-tuned here, so tests and the demo need no model hub.

The recipe (:func:`build_demo`): the SpamAssassin e-mails (subject and the start of the body) are shuffled with the
seed and split into a public part, the members and the non-members (members and non-members from one pool, so the
split is comparable). A byte-level BPE tokenizer is trained on the public part with ``tokenizers``; a GPT-2 model is
built from a ``GPT2Config`` and pre-trained on the public part (the "base", which serves as the reference model),
then a copy is fine-tuned on the members (each repeated ``duplicates`` times per epoch) for ``epochs`` epochs. Both
are saved as transformers directories with safetensors weights; the texts as JSONL with a ``text`` field.

The training loop is plain torch (AdamW, no dropout), seeded: parameter initialisation and batch order run under
``torch.random.fork_rng`` with the given seed, so the caller's global torch random state is untouched. With
``device="cuda"`` the model is initialised on the CPU (the same initial weights), then trained on the GPU in the
same batch order (drawn by a CPU generator); the saved weights are the same up to float rounding of the GPU's sums.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._extras import require
from .._random import spawn_seeds
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError
from ..learners import resolve_device
from .score import encode_texts, model_device, padded_batch, torch_threads

__all__ = ["DemoSize", "SIZES", "DemoModel", "demo_texts", "train_tokenizer", "new_model", "train_lm", "save_lm",
           "build_demo", "write_jsonl"]

BOS = "<|endoftext|>"


@dataclass(frozen=True)
class DemoSize:
    """Shape of the demo model and of its data."""

    vocab_size: int
    n_embd: int
    n_layer: int
    n_head: int
    n_positions: int
    max_chars: int  # each e-mail is cut to its first max_chars characters (subject, blank line, body)
    lr: float = 2e-3
    batch_size: int = 16


SIZES = {
    # the default test suite's model: ~0.2M parameters, seconds to train
    "tiny": DemoSize(vocab_size=512, n_embd=64, n_layer=2, n_head=2, n_positions=128, max_chars=200),
    # the demo's: 2.21M parameters
    "small": DemoSize(vocab_size=2048, n_embd=192, n_layer=4, n_head=4, n_positions=192, max_chars=600, lr=1e-3),
    # the larger model of the extraction measurements (docs/lm.md): 8.79M parameters, the same texts as "small"
    "medium": DemoSize(vocab_size=4096, n_embd=320, n_layer=6, n_head=5, n_positions=256, max_chars=600, lr=1e-3),
}


def demo_texts(*, max_chars: int = 600, groups: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """SpamAssassin e-mails as texts, MIME-decoded (``load_spamassassin(mime=True)``: as their senders wrote them, not
    their bytes read as Latin-1): ``subject + "\\n\\n" + body``, white space runs kept, cut to ``max_chars``;
    duplicates (same cut text) and empty ones dropped. Returns the texts and each one's corpus group
    (easy-ham-1, spam-2, ...)."""
    from ..data.text import load_spamassassin

    ds = load_spamassassin(mime=True)
    grp = ds.extras["group"].to_numpy(str)
    seen, texts, groups_out = set(), [], []
    for subj, body, g in zip(ds.frame["subject"], ds.frame["body"], grp):
        if groups is not None and g not in groups:
            continue
        t = (f"{subj.strip()}\n\n{body.strip()}")[:max_chars].strip()
        if t and t not in seen:
            seen.add(t)
            texts.append(t)
            groups_out.append(g)
    return texts, np.array(groups_out)


def train_tokenizer(texts: Sequence[str], *, vocab_size: int) -> Any:
    """A byte-level BPE tokenizer trained on ``texts`` (GPT-2's scheme), as a transformers fast tokenizer whose
    beginning-of-text, end-of-text and padding token is ``<|endoftext|>``."""
    require("tokenizers", "the language-model demo")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    PreTrainedTokenizerFast = require("transformers", "the language-model demo").PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[BOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=BOS, pad_token=BOS,
                                  model_max_length=10**6)


def new_model(size: DemoSize, vocab_size: int, *, seed: int) -> Any:
    """A freshly initialised GPT-2 language model of ``size`` (no dropout), initialised under ``seed``."""
    torch = require("torch", "the language-model demo")
    transformers = require("transformers", "the language-model demo")
    GPT2Config, GPT2LMHeadModel = transformers.GPT2Config, transformers.GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=vocab_size, n_positions=size.n_positions, n_embd=size.n_embd, n_layer=size.n_layer,
                     n_head=size.n_head, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                     eos_token_id=0, pad_token_id=0)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return GPT2LMHeadModel(cfg)


def train_lm(model: Any, tokenizer: Any, texts: Sequence[str], *, epochs: int, seed: int, lr: float = 1e-3,
             batch_size: int = 16, n_threads: int | None = None, device: str | None = None) -> list[float]:
    """Train ``model`` in place on ``texts`` (next-token cross-entropy, AdamW, padded batches in a seeded order).

    ``device``: where to train (None: where the model's parameters are; else the model is moved there and
    stays). Returns the mean training loss of each epoch (nats per token).
    """
    import torch

    check_scalar(epochs, name="epochs", kind=(int, np.integer), min_val=1)
    if device is not None:
        model.to(resolve_device(device))
    dev = model_device(model)
    ids, _ = encode_texts(tokenizer, texts, max_length=model.config.n_positions)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    losses = []
    model.train()
    with torch_threads(n_threads), torch.random.fork_rng():
        torch.manual_seed(seed)
        g = torch.Generator().manual_seed(seed)
        for _ in range(int(epochs)):
            tot, cnt = 0.0, 0
            for b in torch.randperm(len(ids), generator=g).split(batch_size):
                x, mask = padded_batch([ids[i] for i in b.tolist()], dev)
                labels = x.masked_fill(mask == 0, -100)
                loss = model(input_ids=x, attention_mask=mask, labels=labels).loss
                opt.zero_grad()
                loss.backward()
                opt.step()
                n_tok = int(mask[:, 1:].sum())
                tot, cnt = tot + loss.item() * n_tok, cnt + n_tok
            losses.append(tot / max(cnt, 1))
    model.eval()
    return losses


def save_lm(model: Any, tokenizer: Any, out_dir: str | Path) -> Path:
    """Save as a transformers directory: config.json, model.safetensors, the tokenizer files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    return out


def write_jsonl(path: str | Path, texts: Sequence[str], **columns: Sequence) -> Path:
    """One JSON object per line: ``{"text": ..., other columns...}``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for i, t in enumerate(texts):
            row = {"text": t, **{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in columns.items()}}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return p


@dataclass(frozen=True)
class DemoModel:
    """What :func:`build_demo` wrote.

    Attributes
    ----------
    target_dir, base_dir : Path
        The fine-tuned model and the pre-trained base it started from (the reference model).
    members, nonmembers, public : Path
        JSONL files of the texts.
    info : dict
        Sizes, epochs, losses, parameters (also in ``info.json`` beside them).
    """

    target_dir: Path
    base_dir: Path
    members: Path
    nonmembers: Path
    public: Path
    info: dict


def build_demo(out_dir: str | Path, *, size: str = "small", n_members: int = 200, n_nonmembers: int = 200,
               n_public: int = 1000, pretrain_epochs: int = 2, epochs: int = 10, duplicates: int = 1, seed: int = 0,
               n_threads: int | None = None, texts: Sequence[str] | None = None, device: str = "cpu") -> DemoModel:
    """Build the demo: tokenizer, pre-trained base, fine-tuned target, member / non-member / public texts.

    Parameters
    ----------
    out_dir : folder written: ``base/``, ``target/``, ``members.jsonl``, ``nonmembers.jsonl``, ``public.jsonl``,
        ``info.json``.
    size : "tiny", "small" or "medium" (:data:`SIZES`)
    n_members, n_nonmembers, n_public : texts drawn, disjoint, from the shuffled e-mails
    pretrain_epochs : epochs of the base on the public texts (0: the base is the untrained model)
    epochs : fine-tuning epochs on the members (0: the target is the base itself)
    duplicates : each member appears this many times per fine-tuning epoch (Kandpal et al.'s duplication)
    seed : every draw (split, initialisation, batch order) derives from it
    texts : the pool to draw from instead of the SpamAssassin e-mails
    device : "cpu", "cuda", "cuda:N" or "auto": where the models train (initialised on the CPU; saved from the
        device as safetensors)

    Returns
    -------
    DemoModel
    """
    check_choice(size, name="size", choices=tuple(SIZES))
    for name, v, lo in (("n_members", n_members, 2), ("n_nonmembers", n_nonmembers, 2), ("n_public", n_public, 1),
                        ("pretrain_epochs", pretrain_epochs, 0), ("epochs", epochs, 0), ("duplicates", duplicates, 1)):
        check_scalar(v, name=name, kind=(int, np.integer), min_val=lo)
    dev = resolve_device(device)
    sz = SIZES[size]
    pool = list(texts) if texts is not None else demo_texts(max_chars=sz.max_chars)[0]
    need = n_members + n_nonmembers + n_public
    if len(pool) < need:
        raise InvalidInputError(f"the pool has {len(pool)} texts; n_members + n_nonmembers + n_public = {need}")
    s_split, s_init, s_pre, s_fine = spawn_seeds(seed, 4)
    order = np.random.default_rng(s_split).permutation(len(pool))
    pub = [pool[i] for i in order[:n_public]]
    mem = [pool[i] for i in order[n_public:n_public + n_members]]
    non = [pool[i] for i in order[n_public + n_members:need]]
    out = Path(out_dir)
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    model = new_model(sz, len(tok), seed=s_init)
    model.to(dev)
    pre_losses = train_lm(model, tok, pub, epochs=pretrain_epochs, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size,
                          n_threads=n_threads) if pretrain_epochs else []
    base_dir = save_lm(model, tok, out / "base")
    fine_losses = train_lm(model, tok, mem * duplicates, epochs=epochs, seed=s_fine, lr=sz.lr,
                           batch_size=sz.batch_size, n_threads=n_threads) if epochs else []
    target_dir = save_lm(model, tok, out / "target")
    paths = {k: write_jsonl(out / f"{k}.jsonl", v) for k, v in (("members", mem), ("nonmembers", non),
                                                                   ("public", pub))}
    info = {"size": size, **asdict(sz), "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "n_members": n_members, "n_nonmembers": n_nonmembers, "n_public": n_public,
            "pretrain_epochs": pretrain_epochs, "epochs": epochs, "duplicates": duplicates, "seed": seed,
            "pretrain_losses": [round(x, 4) for x in pre_losses], "finetune_losses": [round(x, 4) for x in fine_losses]}
    (out / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    return DemoModel(target_dir=target_dir, base_dir=base_dir, members=paths["members"],
                     nonmembers=paths["nonmembers"], public=paths["public"], info=info)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m leakaudit.lm.demo --out DIR``: build the demo model and its texts (``make lm-demo`` then audits
    it)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m leakaudit.lm.demo", description=main.__doc__)
    ap.add_argument("--out", required=True, help="folder to write base/, target/, the JSONL texts and info.json")
    ap.add_argument("--size", default="small", choices=tuple(SIZES))
    ap.add_argument("--n-members", type=int, default=200)
    ap.add_argument("--n-nonmembers", type=int, default=200)
    ap.add_argument("--n-public", type=int, default=1000)
    ap.add_argument("--pretrain-epochs", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--duplicates", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--device", default="cpu", help="where to train: cpu, cuda, cuda:N or auto (default: cpu)")
    a = ap.parse_args(argv)
    hf_logging = require("transformers.utils.logging", "the language-model demo")

    hf_logging.disable_progress_bar()
    from ..exceptions import LeakauditError

    try:
        d = build_demo(a.out, size=a.size, n_members=a.n_members, n_nonmembers=a.n_nonmembers, n_public=a.n_public,
                       pretrain_epochs=a.pretrain_epochs, epochs=a.epochs, duplicates=a.duplicates, seed=a.seed,
                       n_threads=a.threads, device=a.device)
    except LeakauditError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    i = d.info
    print(f"demo model: GPT-2, {i['n_parameters'] / 1e6:.2f}M parameters; base pre-trained {i['pretrain_epochs']} "
          f"epochs on {i['n_public']} public e-mails (loss {i['pretrain_losses'][-1] if i['pretrain_losses'] else '-'}"
          f"), fine-tuned {i['epochs']} epochs on {i['n_members']} members (loss "
          f"{i['finetune_losses'][-1] if i['finetune_losses'] else '-'}); wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
