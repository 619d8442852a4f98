"""A reference model that is the audited model itself (its folder given twice, a copy of its folder, the same object
in memory) is refused in one line naming both: against itself the model shows no signal, and the audit would ask
for texts that could never decide it."""

import re
import shutil

import pytest

from leakaudit.cli import main
from leakaudit.exceptions import InvalidInputError


def _refused(capsys, tiny_demo, tmp_path, reference):
    code = main(["audit", "--quiet", "--profile", "smoke", "--model-dir", str(tiny_demo.target_dir), "--members",
                 str(tiny_demo.members), "--nonmembers", str(tiny_demo.nonmembers), "--text-column", "text",
                 "--reference-dir", str(reference), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_the_model_folder_as_its_own_reference_is_refused(tmp_path, capsys, tiny_demo):
    err = _refused(capsys, tiny_demo, tmp_path, tiny_demo.target_dir)
    assert err == (f"leakaudit: error: --reference-dir {tiny_demo.target_dir} holds the same weights as --model-dir "
                   f"{tiny_demo.target_dir}: a reference model must be another model (e.g. the base before "
                   "fine-tuning); against itself the model shows no signal, whatever it learnt\n")
    assert not (tmp_path / "out").exists()


def test_a_copy_of_the_model_as_its_reference_is_refused(tmp_path, capsys, tiny_demo):
    shutil.copytree(tiny_demo.target_dir, tmp_path / "copy")
    err = _refused(capsys, tiny_demo, tmp_path, tmp_path / "copy")
    assert f"--reference-dir {tmp_path / 'copy'} holds the same weights as --model-dir" in err


def test_the_model_object_as_its_own_reference_is_refused(tiny_demo, tiny_texts):
    import leakaudit
    from leakaudit.lm.load import load_causal_lm

    lm, base = load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)
    members, nonmembers = tiny_texts
    for refs, name in (([lm.model], "references[0]"), ([base.model, (lm.model, lm.tokenizer)], "references[1]")):
        with pytest.raises(InvalidInputError, match="^" + re.escape(f"{name} holds the same weights as model: ")):
            leakaudit.audit(lm.model, members, nonmembers, tokenizer=lm.tokenizer, references=refs, profile="smoke")
