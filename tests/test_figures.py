"""`python -m minitape.figures` rebuilds the README figures; check what they
show (lines, images, titles), not their pixels."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from minitape import figures  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("figures")
    return outdir, figures.build_figures(str(outdir))


def _ax(built, name):
    return built[1][name][1].axes[0]


def _image(built, name):
    return np.asarray(_ax(built, name).images[-1].get_array())


def test_every_png_is_written(built):
    outdir, result = built
    assert sorted(result) == sorted(figures.NAMES)
    for name in figures.NAMES:
        path = outdir / f"{name}.png"
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"Software" not in data  # no matplotlib version in the metadata


def test_sigmoid_jacobian(built):
    ax = _ax(built, "sigmoid_jacobian")
    x, y = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    dy = ax.lines[1].get_ydata()
    assert x.shape == y.shape == dy.shape == (201,)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x)), atol=1e-6)
    np.testing.assert_allclose(dy, y * (1 - y), atol=1e-6)
    assert "Jacobian" in ax.get_title()


def test_hessian_symmetry(built):
    h = _image(built, "hessian_symmetry")
    assert h.shape == (40, 40)
    np.testing.assert_allclose(h, h.T, atol=1e-6)
    assert np.abs(h).max() > 0.01
    assert "symmetric" in _ax(built, "hessian_symmetry").get_title()


def test_newton_step_decreases_the_loss(built):
    ax = _ax(built, "newton_step")
    before, after = ax.lines[0].get_ydata()
    assert after < before
    assert "Newton" in ax.get_title()


def _patches(image, batch=7, outs=6, ins=5):
    size = batch + 2
    assert image.shape == (outs * size, ins * size)
    for k in range(outs):
        for i in range(ins):
            yield image[k * size + 1:(k + 1) * size - 1, i * size + 1:(i + 1) * size - 1]


def test_batch_slice_is_diagonal(built):
    s = _image(built, "batch_slice")
    assert s.shape == (7, 7)
    assert np.count_nonzero(s - np.diag(np.diag(s))) == 0
    assert np.count_nonzero(np.diag(s)) > 0
    assert _ax(built, "batch_slice").get_title() == "A (batch, batch) slice"


def test_batch_patches_are_all_diagonal(built):
    for patch in _patches(_image(built, "batch_patches")):
        assert np.count_nonzero(patch - np.diag(np.diag(patch))) == 0
    assert "diagonal" in _ax(built, "batch_patches").get_title()


def test_batchnorm_patches_are_not_diagonal(built):
    off = [np.abs(p - np.diag(np.diag(p))).max() for p in
           _patches(_image(built, "batch_patches_batchnorm"))]
    assert min(off) > 1e-3  # every (batch, batch) slice has off-diagonal terms
    ax = _ax(built, "batch_patches_batchnorm")
    assert "not diagonal" in ax.get_title()
    assert "batch_jacobian" in ax.get_xlabel()


def test_rebuild_is_deterministic(built, tmp_path):
    outdir, _ = built
    figures.build_figures(str(tmp_path))
    for name in ("hessian_symmetry", "batch_patches"):
        assert (tmp_path / f"{name}.png").read_bytes() == (outdir / f"{name}.png").read_bytes()
