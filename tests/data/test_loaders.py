"""Row counts and contents of every real loader, as documented in shared/data/README.md."""

import numpy as np
import pytest

from leakaudit.data import (
    FASHION_MNIST_CLASSES,
    bag_of_words,
    kmeans_labels,
    load_census_kdd,
    load_eyedata,
    load_fashion_mnist,
    load_iwpc,
    load_spamassassin,
    load_supermarket,
    read_idx,
    supermarket_clusters,
)
from leakaudit.data._files import find_file
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def test_iwpc():
    ds = load_iwpc()
    assert len(ds) == 4_819 and ds.task == "regression"
    assert ds.sensitive == ("cyp2c9", "vkorc1")
    # counts from yeom-overfitting.md Sec. 6.2 [code]
    assert ds.frame["cyp2c9"].value_counts().to_dict() == {
        "11": 3630, "12": 643, "13": 430, "23": 60, "22": 41, "33": 15}
    assert ds.frame["vkorc1"].value_counts().to_dict() == {"CT": 1756, "TT": 1628, "CC": 1435}
    assert ds.frame["race"].value_counts().to_dict() == {"white": 2900, "asian": 1462, "black": 457}
    assert ds.frame["amiodarone"].sum() == 230 and ds.frame["decr"].sum() == 47
    X, enc = ds.encode(scale_numeric=False)
    assert X.shape == (4_819, 17)  # Yeom et al.'s DictVectorizer width
    assert [g.stop - g.start for g in enc.onehot_groups] == [3, 6, 3]
    np.testing.assert_array_equal(X[:, :3], ds.frame[["age", "height", "weight"]].to_numpy())


def test_eyedata():
    ds = load_eyedata()
    assert ds.frame.shape == (120, 200) and ds.y.shape == (120,) and ds.task == "regression"
    st = load_eyedata(standardize=True)
    np.testing.assert_allclose(st.y.mean(), 0, atol=1e-12)
    np.testing.assert_allclose(st.y.std(), 1, atol=1e-12)
    np.testing.assert_allclose(st.frame.std(ddof=0).to_numpy(), 1, atol=1e-12)
    np.testing.assert_allclose(st.y, (ds.y - ds.y.mean()) / ds.y.std())


def test_supermarket():
    ds = load_supermarket()
    assert ds.frame.shape == (4_627, 216)
    assert ds.class_names == ("low", "high")
    assert (ds.y == 0).sum() == 2_948 and (ds.y == 1).sum() == 1_679
    sizes = ds.frame.to_numpy().sum(axis=1)
    assert sizes.min() == 1 and sizes.max() == 48
    np.testing.assert_allclose(sizes.mean(), 18.5, atol=0.05)
    assert all(f.kind == "binary" for f in ds.features)
    assert ds.feature_names[0] == "department1" and ds.feature_names[-1] == "department216"
    assert "750ml white nz" in ds.feature_names


def test_supermarket_clusters_seeded():
    a = supermarket_clusters(5, random_state=3)
    X = a.frame.to_numpy(np.float64)
    np.testing.assert_array_equal(a.y, kmeans_labels(X, 5, random_state=3))
    counts = np.bincount(a.y)
    assert counts.size == 5 and np.all(np.diff(counts) <= 0)  # relabelled largest first
    assert a.extras["total"].isin(["low", "high"]).all()


def test_fashion_labels_header_only():
    # the small label file; the image files are tested in the slow test
    y = read_idx(find_file("fashion-mnist/t10k-labels-idx1-ubyte.gz"))
    assert y.shape == (10_000,)
    np.testing.assert_array_equal(np.bincount(y), np.full(10, 1_000))


def test_bag_of_words_small():
    texts = ["Free money, FREE offer", "meeting at noon", "the money meeting"]
    X, bow = bag_of_words(texts, vocab_size=None)
    assert bow.vocabulary == ("free", "meeting", "money", "noon", "offer")  # "at", "the" are stop words
    np.testing.assert_array_equal(X, [[1, 0, 1, 0, 1], [0, 1, 0, 1, 0], [0, 1, 1, 0, 0]])
    Xc, _ = bag_of_words(texts, vocab_size=None, binary=False)
    assert Xc[0, 0] == 2
    X2, bow2 = bag_of_words(texts, vocab_size=2)
    assert len(bow2.vocabulary) == 2 and set(bow2.vocabulary) <= {"free", "money", "meeting"}
    Xf, _ = bag_of_words(["offer money"], vocabulary=bow.vocabulary)
    np.testing.assert_array_equal(Xf, [[0, 0, 1, 0, 1]])
    np.testing.assert_array_equal(bow.transform(["noon noon"]), [[0, 0, 0, 1, 0]])
    with pytest.raises(InvalidInputError, match="single string"):
        bag_of_words("just one text")
    with pytest.raises(InvalidInputError, match=r"texts\[1\]"):
        bag_of_words(["a b", None])
    with pytest.raises(InvalidParameterError, match="vocab_size"):
        bag_of_words(texts, vocab_size=0)


@pytest.mark.slow
def test_spamassassin():
    ds = load_spamassassin()
    assert len(ds) == 6_046 and ds.y.sum() == 1_896
    assert ds.extras["group"].value_counts().to_dict() == {
        "easy-ham-1": 2500, "easy-ham-2": 1400, "spam-2": 1396, "spam-1": 500, "hard-ham-1": 250}
    assert (ds.frame["subject"] == "").sum() == 19
    assert all(f.kind == "text" for f in ds.features)
    X, bow = bag_of_words(ds.frame["subject"] + "\n" + ds.frame["body"], vocab_size=500, dense=False)
    assert X.shape == (6_046, 500)


def test_mime_text_decodes_what_the_sender_wrote():
    from leakaudit.data.text import _mime_text

    def stored(raw: bytes) -> str:  # the corpus file holds each message's bytes read as Latin-1
        return raw.decode("latin-1")

    # an RFC 2047 subject, a quoted-printable Latin-1 body
    headers = "From: a@b\nSubject: x\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable"
    subj, body = _mime_text(headers, "=?iso-8859-1?Q?Sitting_Bull_=FCber_alles?=", "caf=E9 au lait=20\nline")
    assert (subj, body) == ("Sitting Bull über alles", "café au lait \nline")
    # UTF-8 sent under a Latin-1 declaration; an 8-bit subject with no declaration (Windows-1252's pound sign)
    headers = "Content-Type: text/plain; charset=iso-8859-1"
    subj, body = _mime_text(headers, stored("£7,000".encode("cp1252")), stored("résumé\r\n".encode("utf-8")))
    assert (subj, body) == ("£7,000", "résumé\n")
    # multipart: the plain part, base64 undone, in its charset (KOI8-R is not valid UTF-8 here)
    plain = "привет".encode("koi8-r")
    import base64

    raw_body = ("--XX\nContent-Type: text/html; charset=us-ascii\n\n<p>hi</p>\n--XX\nContent-Type: text/plain; "
                "charset=koi8-r\nContent-Transfer-Encoding: base64\n\n" + base64.b64encode(plain).decode() + "\n--XX--\n")
    subj, body = _mime_text('Content-Type: multipart/alternative; boundary="XX"', "s", raw_body)
    assert (subj, body) == ("s", "привет")
    # an unknown declared charset falls back without raising
    assert _mime_text("Content-Type: text/plain; charset=default_charset", "s", "plain")[1] == "plain"



def test_mime_text_reads_the_charset_a_message_shows_rather_than_declares():
    """Spam seen in the corpus: Windows-1252 under a Latin-1 label, a raw EUC-KR subject whose only declaration is
    the HTML body's <meta>, an ISO-2022-JP subject with no declaration at all (the demo report showed them as
    "...\x85\x85", "[±¤°í]" and "\x1b$B...")."""
    from leakaudit.data.text import _mime_text

    def stored(raw: bytes) -> str:
        return raw.decode("latin-1")

    subj, body = _mime_text("Content-Type: text/plain; charset=iso-8859-1", "s", stored(b"Did you know that\x85?"))
    assert body == "Did you know that\u2026?"  # WHATWG: a Latin-1 label is read as Windows-1252
    html = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=euc-kr"></head>'
    subj, body = _mime_text("Content-Type: text/html", stored("[광고] 안내".encode("euc-kr")),
                            stored(html.encode("ascii") + "본문".encode("euc-kr")))
    assert subj == "[광고] 안내" and body.endswith("본문")
    subj, _ = _mime_text("From: a@b", stored("日本語の件名".encode("iso2022_jp")), "plain")
    assert subj == "日本語の件名"


@pytest.mark.slow
def test_spamassassin_mime():
    ds = load_spamassassin(mime=True)
    raw = load_spamassassin()
    assert len(ds) == len(raw) and (ds.frame.index == raw.frame.index).all()
    text = ds.frame["subject"] + "\n" + ds.frame["body"]
    assert not text.str.contains("\ufffd").any()
    # SpamAssassin's own examples: a quoted-printable subject, UTF-8 under a Latin-1 header
    assert text.str.contains("Sitting Bull über alles").any()
    # UTF-8 read as Latin-1 leaves "Ã©" for "é"; what stays is the senders' own double encoding
    assert raw.frame["body"].str.contains("Ã©").sum() > 2 * ds.frame["body"].str.contains("Ã©").sum()
    assert (raw.frame["body"].str.contains("=20\n")).sum() > 5 * ds.frame["body"].str.contains("=20\n").sum()


@pytest.mark.slow
def test_census_kdd():
    ds = load_census_kdd()
    assert len(ds) == 299_285 and ds.frame.shape[1] == 40
    assert "instance_weight" not in ds.feature_names and "instance_weight" in ds.extras
    assert (ds.extras["split"] == "train").sum() == 199_523
    train = (ds.extras["split"] == "train").to_numpy()
    # README: train 187,141 / 12,382, test 93,576 / 6,186
    assert ds.y[train].sum() == 12_382 and ds.y[~train].sum() == 6_186
    # chase-property.md Sec. 4.1 [Measured]
    assert (ds.frame["sex"] == "Female").sum() == 155_775
    assert (ds.frame["race"] == "Black").sum() == 30_539
    X, enc = ds.subset(np.arange(1000)).encode()
    assert X.shape == (1000, 510)  # 7 numeric + 503 one-hot, as measured in the spec


@pytest.mark.slow
def test_fashion_mnist():
    for split, n in (("train", 60_000), ("test", 10_000)):
        ds = load_fashion_mnist(split)
        assert ds.X.shape == (n, 1, 28, 28) and ds.X.dtype == np.float32
        assert ds.X.min() == 0.0 and ds.X.max() == 1.0
        np.testing.assert_array_equal(np.bincount(ds.y), np.full(10, n // 10))
        assert ds.class_names == FASHION_MNIST_CLASSES
        assert len(ds.subset(np.arange(5))) == 5


def test_load_enron_spam_csv_and_folder(tmp_path):
    import pandas as pd

    from leakaudit.data import load_enron_spam

    pd.DataFrame({"Message ID": [0, 1, 2], "Subject": ["hi", None, "win cash"],
                  "Message": ["see you", "report attached", "click now"],
                  "Spam/Ham": ["ham", "ham", "spam"]}).to_csv(tmp_path / "enron.csv", index=False)
    ds = load_enron_spam(tmp_path / "enron.csv")
    np.testing.assert_array_equal(ds.y, [0, 0, 1])
    assert ds.frame["subject"].tolist() == ["hi", "", "win cash"]
    for kind, name, text in (("ham", "1.ham.txt", "Subject: lunch\nsee you at noon"),
                             ("spam", "2.spam.txt", "Subject: offer\ncheap meds")):
        d = tmp_path / "enron1" / kind
        d.mkdir(parents=True)
        (d / name).write_text(text)
    ds = load_enron_spam(tmp_path / "enron1")
    assert ds.frame["subject"].tolist() == ["lunch", "offer"] and ds.y.tolist() == [0, 1]
    assert ds.frame["body"].tolist() == ["see you at noon", "cheap meds"]
    with pytest.raises(InvalidInputError, match="lacks column"):
        pd.DataFrame({"a": [1]}).to_csv(tmp_path / "bad.csv", index=False)
        load_enron_spam(tmp_path / "bad.csv")
