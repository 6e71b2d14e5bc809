"""tools.numpy_minors: the NumPy versions CI runs the graded checks on."""
from tools import floors, numpy_minors


def test_newest_release_of_each_minor_from_the_floor():
    available = ["2.4.6", "2.4.5", "2.5.0rc1", "2.0.2", "2.0.0", "1.26.4", "1.24.0", "1.24.4",
                 "1.23.5", "1.25.2"]
    assert numpy_minors.newest_per_minor(available, "1.24.0") == [
        "1.24.4", "1.25.2", "1.26.4", "2.0.2", "2.4.6"]


def test_the_floor_is_pyprojects():
    floor = floors.floors()["numpy"]
    assert numpy_minors.newest_per_minor([floor, "0.1"], floor) == [floor]
