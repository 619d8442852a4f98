"""Sensitive-column inference from a classifier's probabilities."""

import numpy as np
import pytest

from leakaudit.attribute import classifier_attribute_scores, infer_attribute_classifier, label_likelihood_scores
from leakaudit.exceptions import InvalidInputError


def test_label_likelihood_scores_hand_computed():
    # m = 2 candidates, n = 2 records, 2 classes
    P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.4, 0.6], [0.7, 0.3]]])
    y = np.array([0, 0])
    s = label_likelihood_scores(P, y)
    np.testing.assert_allclose(np.exp(s - np.log(0.5)), [[0.9, 0.4], [0.2, 0.7]])
    s2 = label_likelihood_scores(P, y, prior=[0.1, 0.9])
    assert np.argmax(s2, axis=1).tolist() == [1, 1]  # 0.09 < 0.36; 0.02 < 0.63
    assert np.argmax(s, axis=1).tolist() == [0, 1]


def test_infer_from_a_model_that_uses_the_attribute():
    # the model's label is the sensitive one-hot value: inference must be exact
    def predict_proba(Z):
        p1 = np.where(Z[:, 2] == 1, 0.95, 0.05)
        return np.column_stack([1 - p1, p1])

    X = np.array([[0.3, 1, 0], [0.1, 0, 1], [0.2, 0, 1]], float)
    y = np.array([0, 1, 1])
    assert infer_attribute_classifier(predict_proba, X, y, columns=[1, 2]).tolist() == [0, 1, 1]
    sc = classifier_attribute_scores(predict_proba, X, y, columns=[1, 2], prior=[0.5, 0.5])
    assert sc.shape == (3, 2)


def test_bad_inputs():
    P = np.full((2, 3, 2), 0.5)
    with pytest.raises(InvalidInputError, match="y holds label 2"):
        label_likelihood_scores(P, [0, 1, 2])
    with pytest.raises(InvalidInputError, match="sum to 1"):
        label_likelihood_scores(np.full((2, 3, 2), 0.7), [0, 1, 1])
    with pytest.raises(InvalidInputError, match="inconsistent"):
        label_likelihood_scores(P, [0, 1])
