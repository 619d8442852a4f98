import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from leakaudit._results import Result, write_json_atomic
from leakaudit.audit.result.sections import Skipped


class _R(Result):
    a: float
    v: list[float]


def test_result_roundtrip_numpy_and_nan():
    r = _R(a=np.float32(1.5), v=np.array([1.0, np.nan]))
    d = json.loads(r.to_json())
    assert d["schema_version"] == 1 and d["type"] == "_R"
    back = _R.from_json(r.to_json())
    assert back.a == 1.5 and math.isnan(back.v[1])
    with pytest.raises(ValidationError):
        r.a = 2.0  # frozen


def test_skipped_and_atomic_write(tmp_path):
    s = Skipped(name="lira", reason="needs the training algorithm")
    write_json_atomic(tmp_path / "x" / "s.json", s.to_dict())
    assert json.loads((tmp_path / "x" / "s.json").read_text())["reason"] == "needs the training algorithm"
    assert not [p for p in (tmp_path / "x").iterdir() if p.name.endswith(".tmp")]
