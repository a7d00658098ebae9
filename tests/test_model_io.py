"""Model files: exact continuation of partial_fit after save/load, sparse storage,
and a clear ValueError naming the file for every kind of bad file."""
import json
import zipfile

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fastprox import ProxClassifier, ProxRegressor
from fastprox.cli.synthetic import text_like
from fastprox.model_io import VERSION, load_model, save_model

X, Y, X_TEST, _ = text_like(1200, 3000, seed=1)
HALF = X.shape[0] // 2   # a multiple of every batch_size below: same steps as one pass

CONTINUATIONS = {
    "fobos": dict(update="fobos"),
    "rda": dict(update="rda", alpha=1e-4, rda_rho=1e-3),
    "ftrl": dict(update="ftrl", penalty="elasticnet", alpha=1e-4),
    "berhu": dict(penalty="berhu", schedule="invsqrt", alpha=1e-3, berhu_gamma=0.05),
    "fobos-constant-elasticnet": dict(schedule="constant", penalty="elasticnet", alpha=1e-3, eta0=0.1),
    "minibatch": dict(batch_size=8, schedule="inv", alpha=1e-4),
}


def same_state(a, b):
    """Bit-identical kernel state (the used part of Berhu's heap included)."""
    sa, sb = a._learner.__getstate__(), b._learner.__getstate__()
    size = sa["heap_size"]
    assert size == sb["heap_size"]
    for key in ("t", "n_ops", "since_rebase", "P", "Q"):
        assert sa[key] == sb[key], key
    for name in ("state", "bstate", "heap_pos"):
        np.testing.assert_array_equal(sa["arrays"][name].view(np.uint64) if name != "heap_pos"
                                      else sa["arrays"][name],
                                      sb["arrays"][name].view(np.uint64) if name != "heap_pos"
                                      else sb["arrays"][name])
    for name in ("heap_items", "heap_keys"):
        np.testing.assert_array_equal(sa["arrays"][name][:size], sb["arrays"][name][:size])


def same_steps(params, est):
    """params with the eta0 and delta that `est` trains with ("auto" came from its first rows)."""
    return {**params, "eta0": est.eta0_, "delta": est.delta_}


@pytest.mark.parametrize("params", CONTINUATIONS.values(), ids=CONTINUATIONS.keys())
def test_save_load_continues_exactly(tmp_path, params):
    path = tmp_path / "model.fpx"
    first = ProxClassifier(**params).partial_fit(X[:HALF], Y[:HALF], classes=[-1.0, 1.0])
    save_model(first, path)
    loaded = load_model(path)
    same_state(first, loaded)
    np.testing.assert_array_equal(loaded.decision_function(X_TEST), first.decision_function(X_TEST))
    loaded.partial_fit(X[HALF:], Y[HALF:])
    whole = ProxClassifier(**same_steps(params, first), shuffle=False).fit(X, Y)
    same_state(loaded, whole)
    np.testing.assert_array_equal(loaded.coef_, whole.coef_)
    np.testing.assert_array_equal(loaded.intercept_, whole.intercept_)
    assert loaded.t_ == whole.t_


def test_stores_only_touched_rows(tmp_path):
    path = tmp_path / "m.npz"
    est = ProxClassifier().partial_fit(X[:20], Y[:20], classes=[-1.0, 1.0])
    save_model(est, path)
    with np.load(path) as npz:
        rows = npz["rows"]
    np.testing.assert_array_equal(rows, np.unique(X[:20].indices))
    assert len(rows) < X.shape[1]


def test_attributes_and_kinds_round_trip(tmp_path):
    path = tmp_path / "m.npz"
    labels = np.array(["cat", "dog", "eel"])[(np.arange(X.shape[0]) % 3)]
    multi = ProxClassifier(loss="modified_huber", random_state=3).fit(X, labels).sparsify()
    save_model(multi, path)
    back = load_model(path)
    assert back.get_params() == multi.get_params()
    np.testing.assert_array_equal(back.classes_, multi.classes_)
    assert (back.n_features_in_, back.t_, back.n_iter_) == (multi.n_features_in_, multi.t_, multi.n_iter_)
    assert back.progressive_loss_ == multi.progressive_loss_
    np.testing.assert_array_equal(back.predict(X_TEST), multi.predict(X_TEST))
    assert (back.coef_ != multi.coef_).nnz == 0
    reg = ProxRegressor(loss="huber", fit_intercept=False).fit(X, Y * 2.5)
    save_model(reg, path)
    np.testing.assert_array_equal(load_model(path, cls=ProxRegressor).predict(X_TEST), reg.predict(X_TEST))


def test_feature_names_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X[:50, :5].toarray(), columns=["a", "b", "café", "日本", "e"])
    est = ProxClassifier().fit(frame, Y[:50])
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    np.testing.assert_array_equal(back.feature_names_in_, est.feature_names_in_)
    np.testing.assert_array_equal(back.predict(frame), est.predict(frame))


@pytest.mark.parametrize("name", ["m.gz", "m.bz2", "m.xz"])
def test_a_compressor_suffix_is_just_a_name(tmp_path, name):
    """A model file is a compressed zip already: a .gz name neither breaks the save
    (it once failed after training, in a non-seekable gzip stream) nor the load."""
    fitted = ProxClassifier().fit(X, Y)
    save_model(fitted, tmp_path / name)
    same_state(fitted, load_model(tmp_path / name))


def test_write_is_atomic_and_keeps_the_name(tmp_path):
    est = ProxClassifier().fit(X, Y)
    save_model(est, tmp_path / "model.bin")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin"]


# --- refusals -----------------------------------------------------------------

def test_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(NotFittedError):
        save_model(ProxClassifier(), tmp_path / "m")
    with pytest.raises(ValueError, match="random_state must be None or an int"):
        save_model(ProxClassifier(random_state=np.random.RandomState(0)).fit(X, Y), tmp_path / "m")
    with pytest.raises(ValueError, match="saves ProxClassifier and ProxRegressor"):
        save_model(object(), tmp_path / "m")


@pytest.fixture
def saved(tmp_path):
    """A saved classifier and a way to rewrite its members."""
    path = tmp_path / "model.npz"
    save_model(ProxClassifier(update="ftrl").fit(X, Y), path)

    def rewrite(edit_header=None, **members):
        with np.load(path) as npz:
            content = {key: npz[key] for key in npz.files}
        header = json.loads(str(content["header"]))
        if edit_header:
            edit_header(header)
        content.update(header=np.array(json.dumps(header)), **members)
        with open(path, "wb") as f:
            np.savez(f, **{k: v for k, v in content.items() if v is not None})
        return path

    return path, rewrite


def set_version(h):
    h["version"] = VERSION + 1


def set_class(h):
    h["class"] = "SGDClassifier"


def set_update(h):
    h["learner"]["update"] = "adam"


def set_width(h):
    h["fitted"]["n_features_in_"] += 1


BAD = {
    "version": (dict(edit_header=set_version), "model format version 4, but this fastprox reads versions 1 to 3"),
    "class": (dict(edit_header=set_class), "unknown model class 'SGDClassifier'"),
    "kernel option": (dict(edit_header=set_update), "unknown kernel option 'adam'"),
    "width": (dict(edit_header=set_width), "n_features_in_=3001 but the model has 3000 features"),
    "state shape": (dict(state=np.zeros((3, 5))), "state has shape"),
    "rows range": (dict(rows=np.array([5, 4, 99999]), state=np.zeros((3, 3))), "rows must be increasing"),
    "bstate": (dict(bstate=np.zeros((2, 2))), "bstate has shape"),
    "classes": (dict(classes=np.array([1.0, 2.0, 3.0])), "classes has shape"),
    "missing member": (dict(bstate=None), "missing entry 'bstate'"),
    "pickled member": (dict(classes=np.array([{}, 1], dtype=object)), "not a readable fastprox model"),
}


@pytest.mark.parametrize("change, message", BAD.values(), ids=BAD.keys())
def test_bad_contents_name_the_file(saved, change, message):
    path = saved[1](**change)
    with pytest.raises(ValueError, match="^" + str(path).replace("\\", "\\\\") + ": ") as info:
        load_model(path)
    assert message in str(info.value)


def test_wrong_class_truncated_and_foreign_files(saved, tmp_path):
    path, _ = saved
    with pytest.raises(ValueError, match="holds a ProxClassifier, not a ProxRegressor"):
        load_model(path, cls=ProxRegressor)
    content = path.read_bytes()
    for cut in (len(content) // 2, len(content) - 5, 10, 0):
        path.write_bytes(content[:cut])
        with pytest.raises(ValueError, match="not a readable fastprox model file"):
            load_model(path)
    text = tmp_path / "data.svm"
    text.write_text("1 1:2\n")
    with pytest.raises(ValueError, match="not a readable fastprox model file"):
        load_model(text)
    other = tmp_path / "other.npz"
    np.savez(other, header=np.array('{"format": "something-else"}'))
    with pytest.raises(ValueError, match="no format 'fastprox-model'"):
        load_model(other)
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    with pytest.raises(ValueError, match="missing entry|not a readable"):
        load_model(tmp_path / "empty.zip")
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.npz")


WEIGHTS_50 = np.where(np.arange(50) % 4 == 0, 0.0, np.linspace(0.2, 3.0, 50))


@pytest.mark.parametrize("params", [
    dict(multi_class="multinomial", penalty="l1_l2", schedule="constant", alpha=1e-3, eta0=0.1),
    dict(multi_class="multinomial", penalty="sparse_group", schedule="invsqrt", alpha=1e-3,
         groups=np.arange(3000) % 50),
    dict(multi_class="multinomial", penalty="l1_l2", schedule="constant", alpha=1e-3, eta0=0.1,
         group_weights=np.linspace(0.0, 2.0, 3000)),
    dict(multi_class="multinomial", penalty="squared_group", schedule="invsqrt", alpha=1e-4,
         groups=np.arange(3000) % 50, group_weights=WEIGHTS_50),
    dict(multi_class="multinomial", penalty="l1_linf", update="rda", schedule="adagrad", alpha=1e-4,
         groups=np.arange(3000) % 50, group_weights=WEIGHTS_50),
], ids=["multinomial-l1_l2", "sparse_group-user-groups", "weighted-rows-l1_l2",
        "weighted-squared_group", "weighted-rda-adagrad-l1_linf"])
def test_multinomial_and_groups_continue_exactly(tmp_path, params):
    labels = np.arange(X.shape[0]) % 3
    first = ProxClassifier(**params).partial_fit(X[:HALF], labels[:HALF], classes=[0, 1, 2])
    save_model(first, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    same_state(first, loaded)
    loaded.partial_fit(X[HALF:], labels[HALF:])
    whole = ProxClassifier(**same_steps(params, first), shuffle=False).fit(X, labels)
    same_state(loaded, whole)
    np.testing.assert_array_equal(loaded.predict_proba(X_TEST), whole.predict_proba(X_TEST))
    if params.get("group_weights") is not None:
        np.testing.assert_array_equal(loaded._learner.group_weights, params["group_weights"])
        np.testing.assert_array_equal(loaded.group_weights, params["group_weights"])


def as_version_2_ftrl(path):
    """The state a version 2 file holds for the FTRL model at ``path``: its
    entries (z, n) without sqrt(n)."""
    with np.load(path) as npz:
        entries = npz["state"].reshape(len(npz["state"]), -1, 3)
    return dict(state=np.ascontiguousarray(entries[:, :, :2]).reshape(len(entries), -1))


@pytest.mark.parametrize("version", [1, 2])
def test_earlier_versions_load(saved, version):
    """Files of format versions 1 (before group weights: no such parameter or member)
    and 2 (FTRL entries without sqrt(n)) load as the model they hold, which then
    trains on exactly as the model saved."""
    path, rewrite = saved
    before = load_model(path)

    def as_version(h):
        h["version"] = version
        if version == 1:
            del h["params"]["group_weights"]

    after = load_model(rewrite(edit_header=as_version, **as_version_2_ftrl(path)))
    same_state(before, after)
    assert after.group_weights is before.group_weights is None
    same_state(before.partial_fit(X[:100], Y[:100]), after.partial_fit(X[:100], Y[:100]))


def test_bad_group_weights_member_names_the_file(tmp_path):
    path = tmp_path / "m"
    labels = np.arange(X.shape[0]) % 3
    save_model(ProxClassifier(penalty="l1_l2", schedule="invsqrt", groups=np.arange(3000) % 50,
                              group_weights=WEIGHTS_50).fit(X, labels), path)
    with np.load(path) as npz:
        content = {key: npz[key] for key in npz.files}
    for bad, message in [(WEIGHTS_50[:7], "one weight per group, 50 here"), (-WEIGHTS_50, ">= 0")]:
        with open(path, "wb") as f:
            np.savez(f, **dict(content, group_weights=bad))
        with pytest.raises(ValueError, match="^" + str(path) + ": group_weights must") as info:
            load_model(path)
        assert message in str(info.value)
