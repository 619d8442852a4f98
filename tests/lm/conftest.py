"""One tiny demo language model per test session (built here, no model hub): a GPT-2 of ~0.15M parameters
pre-trained on public SpamAssassin e-mails (the base, also the reference model) and fine-tuned on the members."""

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


@pytest.fixture(scope="session")
def tiny_demo(tmp_path_factory):
    from leakaudit.lm.demo import build_demo

    return build_demo(tmp_path_factory.mktemp("lm") / "demo", size="tiny", n_members=40, n_nonmembers=40,
                      n_public=150, pretrain_epochs=2, epochs=15, seed=0, n_threads=1)


def read_jsonl(path):
    return [json.loads(line)["text"] for line in open(path, encoding="utf-8")]


@pytest.fixture(scope="session")
def tiny_texts(tiny_demo):
    return read_jsonl(tiny_demo.members), read_jsonl(tiny_demo.nonmembers)
