"""Release contexts: how a model is released, and the threat model each implies.

The context (``release`` in the audit's settings) selects the analyses an adversary with that access could run
(:mod:`leakaudit.audit.plan`): the model file (weights) adds the structural checks; a service returning labels only
runs the label-only membership attacks instead of the score-based ones, and neither PDTP nor attribute inference.
"""

from __future__ import annotations

__all__ = ["RELEASES", "threat_model"]

#: release contexts and the threat model each implies
RELEASES = {
    "weights": ("The model file is published: an adversary holds its parameters and structure (white box) and can "
                "compute its outputs, scores and labels, on any input."),
    "scores": ("The model is served: an adversary sends inputs of their choice and reads the class scores "
               "(probabilities) it returns, not its parameters."),
    "labels": ("The model is served: an adversary sends inputs of their choice and reads only the predicted label."),
}


#: a language model's threat models: its outputs are the log-probabilities of a text's tokens, not class scores
TEXT_RELEASES = {
    None: ("No release context was declared: the analyses read the language model's log-probabilities of each text's "
           "tokens, as for a service that returns them; what its weights disclose beyond them was not checked."),
    "scores": ("The language model is served: an adversary sends texts of their choice and reads the "
               "log-probabilities of their tokens, not its parameters."),
}


def threat_model(release: str | None, *, text: bool = False) -> str:
    """The threat model of a release context, in words (None: not declared, analysed as a scores release);
    ``text``: of a language model, whose outputs are its tokens' log-probabilities."""
    if text and release in TEXT_RELEASES:
        return TEXT_RELEASES[release]
    if release is None:
        return ("No release context was declared (release weights, scores or labels): the analyses read the model's "
                "class scores, as for a service that returns them; what the model file itself discloses (its "
                "structure) was not checked.")
    return RELEASES[release]
