"""generate_bench: write the whole synthetic private bench and its kit.yaml."""

from __future__ import annotations

import os
from pathlib import Path

from kitbuild.synthetic._calibration import calibrate
from kitbuild.synthetic._kit import kit_yaml
from kitbuild.synthetic._october import HARNESS_SHA256, write_october
from kitbuild.synthetic._questions import draw_questions
from kitbuild.synthetic._records import Tree
from kitbuild.synthetic._sparse import write_sparse

QUESTIONS_SEED = 20261009
LISTS_SEED = 20261107


def generate_bench(dir: Path) -> Path:
    """Write the bench under ``dir`` and return the path of its ``kit.yaml``.

    The same seeds give the same bytes every time; two folders give files that
    differ only where a record prints its own absolute path (or the digest of
    a file that does).
    """
    root = Path(os.path.realpath(dir))
    questions = draw_questions(QUESTIONS_SEED)
    lists = calibrate(questions, LISTS_SEED)
    tree = Tree(root)
    october = write_october(tree, questions, lists)
    write_sparse(tree, questions, lists, october)
    tree.put("kit.yaml", kit_yaml(HARNESS_SHA256).encode("utf-8"))
    tree.write()
    return root / "kit.yaml"
