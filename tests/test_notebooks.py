"""Every notebook in notebooks/ runs top to bottom in a Jupyter kernel (nbclient), and its
cells assert what they teach; outputs are stripped in git."""
import json
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # (notebooks)

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_outputs_are_stripped(path):
    cells = json.loads(path.read_text())["cells"]
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in cells if c["cell_type"] == "code")


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 5
