"""Leaked windows (issue 89): for the member texts the strongest standing attack ranks highest, the windows of tokens
that carry the signal, with their offsets, contrast and text; left out under --redact."""

import json
from html import escape as html_escape

import numpy as np
import pytest

from leakaudit.lm.windows import top_windows


def test_top_windows_are_the_highest_positive_windows_that_do_not_overlap():
    d = np.array([0.0, 5.0, 5.0, -1.0, -1.0, 2.0, 2.0, 0.5, -3.0, -3.0])
    got = top_windows(d, window=2, n=3)
    assert got == [(1, 3, 5.0), (5, 7, 2.0)]  # (0, 2), (2, 4), (6, 8) and (4, 6) overlap these; the rest are <= 0
    spans = [(s, e) for s, e, _ in got]
    assert all(e1 <= s2 or e2 <= s1 for i, (s1, e1) in enumerate(spans) for s2, e2 in spans[i + 1:])
    assert all(c > 0 for _, _, c in got) and [c for *_, c in got] == sorted((c for *_, c in got), reverse=True)
    assert top_windows(-np.ones(5), window=2) == []  # no window votes "member"
    assert top_windows(np.array([1.0, 2.0]), window=8) == [(0, 2, 1.5)]  # a text shorter than a window: itself


@pytest.fixture(scope="module")
def audited(tiny_demo, tiny_texts):
    """The fine-tuned tiny model audited in memory against its base, without extraction."""
    import leakaudit
    from leakaudit.lm.load import load_causal_lm

    lm, base = load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)
    res = leakaudit.audit(lm.model, *tiny_texts, tokenizer=lm.tokenizer, references=[base.model], profile="smoke",
                          extraction=False, verbose=False)
    return res, lm, base


def test_windows_of_the_most_exposed_texts(audited, tiny_texts):
    """The strongest standing attack's top members, each window's text the tokens it names, its contrast their
    target-minus-reference mean."""
    from leakaudit.lm.attacks import reference_contrast
    from leakaudit.lm.score import encode_texts, score_texts

    res, lm, base = audited
    lw = res.leaked_windows
    assert lw.reason is None and lw.window == 8 and lw.k == 5 and len(lw.texts) == 5
    standing = res.membership["blind_baseline"].attacks_standing
    assert lw.attack in standing
    assert lw.auc == max(res.membership[a].auc for a in standing) > 0.8
    assert "target minus reference" in lw.contrast
    members = tiny_texts[0]
    scores = res.records[f"score_{lw.attack}"].to_numpy()[: len(members)]
    top = np.argsort(-scores, kind="stable")[:5]
    assert [t.rank for t in lw.texts] == [1, 2, 3, 4, 5]
    assert [t.score for t in lw.texts] == pytest.approx(scores[top].tolist())
    assert lw.texts[0].windows, "the most exposed text has no window that votes member"
    for t, i in zip(lw.texts, top):
        text = members[i]
        assert t.record.endswith(f"row {i + 1}")
        (ids,), _ = encode_texts(lm.tokenizer, [text], max_length=lm.context_length)
        target, ref = (score_texts(m.model, m.tokenizer, [text], max_length=m.context_length) for m in (lm, base))
        d = reference_contrast(target, [ref])[0]
        assert t.n_tokens == d.size == len(ids) - 1
        for w in t.windows:
            assert w.end - w.start == 8 and w.contrast > 0
            assert w.contrast == pytest.approx(d[w.start:w.end].mean(), abs=1e-4)
            assert w.text == lm.tokenizer.decode(ids[w.start + 1: w.end + 1]) and w.n_chars == len(w.text)
            assert w.text in text and (w.before + w.text + w.after) in text


def test_redact_leaves_the_windows_text_out(audited, tmp_path):
    """Saved with redact=True: no window's text in results.json or report.html, its offsets and length kept; without
    it both show the text."""
    res, _, _ = audited
    wins = [w for t in res.leaked_windows.texts for w in t.windows]
    long = [w.text for w in wins if len(w.text.strip()) > 3]
    assert long
    res.save(tmp_path / "plain")
    res.save(tmp_path / "red", redact=True)
    plain_html = (tmp_path / "plain" / "report.html").read_text()
    assert 'id="leaked-windows-table"' in plain_html and "<mark>" in plain_html
    assert any(html_escape(t) in plain_html for t in long if "\n" not in t)
    red_json = (tmp_path / "red" / "results.json").read_text()
    red_html = (tmp_path / "red" / "report.html").read_text()
    for text in long:
        assert json.dumps(text)[1:-1] not in red_json, text
        assert html_escape(text) not in red_html and html_escape(text.replace("\n", "⏎")) not in red_html, text
    lw = json.loads(red_json)["leaked_windows"]
    assert lw["redacted"] is True
    got = [w for t in lw["texts"] for w in t["windows"]]
    assert [(w["start"], w["end"], w["n_chars"]) for w in got] == [(w.start, w.end, w.n_chars) for w in wins]
    assert all(w["text"] is None and w["before"] is None and w["after"] is None for w in got)
    assert f"redacted ({wins[0].n_chars} characters)" in red_html and "<mark>" not in red_html
    assert res.leaked_windows.texts[0].windows[0].text  # the result in memory keeps them
