"""tools.floors: pyproject's minimum versions as the pins of CI's second environment."""
from tools import floors


def test_floors_pin_every_minimum_of_the_runtime_and_notebooks():
    pins = floors.floors()
    assert pins["numpy"] == "1.24.0"
    assert pins["matplotlib"] == "3.7.0"
    assert pins["ipywidgets"].startswith("7.7")  # Colab's major version
    assert "minitape" not in pins


def test_floors_read_any_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\nversion = "1"\n'
                         'dependencies = ["a>=1.2", "b", "c>=2,<3"]\n'
                         '[project.optional-dependencies]\n'
                         'notebooks = ["x[test]", "d>=0.5"]\nother = ["e>=9"]\n')
    assert floors.floors(pyproject) == {"a": "1.2", "c": "2", "d": "0.5"}


def test_floors_cli_skips_what_it_is_told(capsys):
    assert floors.main(["--skip", "jupyterlab"]) == 0
    lines = capsys.readouterr().out.split()
    assert "numpy==1.24.0" in lines and not any(ln.startswith("jupyterlab") for ln in lines)
