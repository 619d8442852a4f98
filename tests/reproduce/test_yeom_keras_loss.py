import numpy as np

from leakaudit.reproduce.yeom_membership import _keras_cross_entropy


def test_keras_loss_floors_saturated_outputs_at_keras_epsilon():
    # Keras clips float32 probabilities to [1e-7, 1 - 1e-7]: a saturated output (1 in float32, or 1 - 1e-12 in
    # float64) costs -ln(float32(1 - 1e-7)) = 1.19e-7, a zero one -ln(1e-7) = 16.12
    probs = np.array([[1.0, 0.0], [1 - 1e-12, 1e-12], [0.0, 1.0], [0.25, 0.75]])
    loss = _keras_cross_entropy(probs, np.array([0, 0, 0, 1]))
    floor = -np.log(np.float64(np.float32(1) - np.float32(1e-7)))
    assert np.isclose(loss[0], floor, rtol=1e-6) and np.isclose(loss[1], floor, rtol=1e-6)
    assert 1.1e-7 < floor < 1.3e-7
    assert np.isclose(loss[2], -np.log(1e-7), rtol=1e-6)
    assert np.isclose(loss[3], -np.log(0.75), rtol=1e-6)
