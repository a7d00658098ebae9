"""Model files: exact continuation of partial_fit after save/load, sparse storage,
and a clear ValueError naming the file for every kind of bad file."""
import functools
import io
import json
import math
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm
from fastprox.stream.synthetic import text_like
from fastprox.model_io import VERSION, load_model, save_model

X, Y, X_TEST, _ = text_like(1200, 3000, seed=1)
HALF = X.shape[0] // 2   # a multiple of every batch_size below: same steps as one pass
LABELS = np.arange(X.shape[0]) % 3

CONTINUATIONS = {
    "fobos": dict(update="fobos"),
    "rda": dict(update="rda", alpha=1e-4, rda_rho=1e-3),
    "ftrl": dict(update="ftrl", penalty="elasticnet", alpha=1e-4),
    "berhu": dict(penalty="berhu", schedule="invsqrt", alpha=1e-3, berhu_gamma=0.05),
    "fobos-constant-elasticnet": dict(schedule="constant", penalty="elasticnet", alpha=1e-3, eta0=0.1),
    "minibatch": dict(batch_size=8, schedule="inv", alpha=1e-4),
}


def same_state(a, b):
    """Bit-identical kernel state (the used part of Berhu's heap included), each with
    its sparse_group groups caught up (`Learner.caught_up`: save_model writes them so)."""
    sa, sb = a._learner.caught_up().__getstate__(), b._learner.caught_up().__getstate__()
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


def test_another_estimator_is_refused_with_the_way_to_save_it(tmp_path):
    """save_model of a structured estimator or L1BallClassifier named neither the
    function that saves it nor pickle: the message now names it."""
    from fastprox import L1BallClassifier
    from fastprox.structured import DependencyParser, SequenceTagger
    for est, way in [(SequenceTagger(), "save it with fastprox.structured.tagger.save_tagger"),
                     (DependencyParser(), "save it with fastprox.structured.parser.save_parser"),
                     (L1BallClassifier(), r"pickle it \(pickle.dump, joblib.dump\)")]:
        with pytest.raises(ValueError, match=f"not {type(est).__name__}: {way}"):
            save_model(est, tmp_path / "m")
        assert not (tmp_path / "m").exists()


def members_of(path):
    """A model file's members as arrays (read by NumPy: the tests' own files)."""
    with np.load(path) as npz:
        return {key: npz[key] for key in npz.files}


def rewrite(path, edit_header=None, **members):
    """Rewrite the model file at path with its header edited in place by
    ``edit_header(header)`` and the given members replaced (None: dropped)."""
    content = members_of(path)
    header = json.loads(str(content["header"]))
    if edit_header:
        edit_header(header)
    content.update({"header": np.array(json.dumps(header)), **members})
    with open(path, "wb") as f:
        np.savez(f, **{k: v for k, v in content.items() if v is not None})
    return path


@pytest.fixture
def saved(tmp_path):
    """A saved classifier and a way to rewrite its members."""
    path = tmp_path / "model.npz"
    save_model(ProxClassifier(update="ftrl").fit(X, Y), path)
    return path, functools.partial(rewrite, path)


def set_version(h):
    h["version"] = VERSION + 1


def set_class(h):
    h["class"] = "SGDClassifier"


def set_update(h):
    h["learner"]["update"] = "adam"


def set_width(h):
    h["fitted"]["n_features_in_"] += 1


BAD = {
    "version": (dict(edit_header=set_version), f"model format version {VERSION + 1}, but this fastprox reads versions 1 to {VERSION}"),
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
        before_6(h, version)
        if version == 1:
            del h["params"]["group_weights"]

    after = load_model(rewrite(edit_header=as_version, **as_version_2_ftrl(path)))
    same_state(before, after)
    assert after.group_weights is before.group_weights is None
    same_state(before.partial_fit(X[:100], Y[:100]), after.partial_fit(X[:100], Y[:100]))


def before_6(h, version):
    """The header ``h`` as format ``version`` (< 6) had it: no hash_bits parameter,
    no hash_bits_ fitted entry."""
    h["version"] = version
    del h["params"]["hash_bits"], h["fitted"]["hash_bits_"]


def test_version_5_files_load_as_models_without_hashing(saved):
    path, rewrite = saved
    before = load_model(path)
    after = load_model(rewrite(edit_header=lambda h: before_6(h, 5)))
    same_state(before, after)
    assert after.hash_bits is after.hash_bits_ is None


def version_11_averaged_l2(n, average=True):
    """An averaged l2 classifier (from step ``average``) after n single-row steps on X
    (no rebase) and, for its
    rows, what version 11 kept: the step of each row's stamp A (the last row that met
    the feature, 0 for none) and the history of P since the rebase (P of each step;
    Q = 0, the Fenwick nodes the loader does not read left 0)."""
    est = ProxClassifier(penalty="l2", alpha=1e-3, schedule="inv", average=average, shuffle=False)
    history = np.zeros((n + 1, 4))
    history[0, 1] = 1.0
    last = np.zeros(X.shape[1])
    for i in range(n):
        est.partial_fit(X[i:i + 1], Y[i:i + 1], classes=[-1.0, 1.0])
        history[i + 1, 1] = est._learner.scalars()["P"]
        last[X[i].indices] = i + 1
    return est, last, history


def as_version_11_rows(state, stamps):
    """Version 12's averaged l2 rows (P, SP, SP_lo, w, S) as version 11's (P, A, w, S)."""
    return np.concatenate([state[:, :1], stamps[:, None], state[:, 3:]], axis=1)


@pytest.mark.parametrize("average", [True, 60])
def test_version_11_averaged_l2_files_load_with_prefix_sums(tmp_path, average):
    """A version 11 file of an averaged l2 model (rows stamped with the step A, the
    history of P since the rebase, no SP scalars) loads as the model saved now, bit
    for bit: the prefix sums of P over the averaged steps summed from the history as
    the kernel sums them (averaged from the first step, and from step 60: rows
    stamped before it have prefix sums 0); it trains on as that model does. A
    pickled learner of that time's state (`Learner.__getstate__` without SP)
    unpickles the same."""
    n = 150
    est, last, history = version_11_averaged_l2(n, average)
    path = tmp_path / "m"
    save_model(est, path)
    content = members_of(path)
    assert content["avg_history"].shape == (0, 4)

    def as_version_11(h):
        h["version"] = 11
        del h["scalars"]["SP"], h["scalars"]["SP_lo"]

    old = as_version_11_rows(content["state"], last[content["rows"]])
    after = load_model(rewrite(path, edit_header=as_version_11, state=old, avg_history=history))
    same_state(est, after)
    assert after._learner.scalars()["SP"] == est._learner.scalars()["SP"] > 0
    np.testing.assert_array_equal(after.coef_, est.coef_)
    d = est._learner.__getstate__()
    del d["SP"], d["SP_lo"]
    d["arrays"]["state"] = as_version_11_rows(d["arrays"]["state"], last)
    d["avg_history"] = history
    learner = type(est._learner)(*est._learner.init_args())
    learner.__setstate__(d)
    np.testing.assert_array_equal(learner.__getstate__()["arrays"]["state"].view(np.uint64),
                                  est._learner.__getstate__()["arrays"]["state"].view(np.uint64))
    same_state(after.partial_fit(X[n:2 * n], Y[n:2 * n]), est.partial_fit(X[n:2 * n], Y[n:2 * n]))
    with pytest.raises(ValueError, match="A fields the kernel never writes"):
        load_model(rewrite(path, state=as_version_11_rows(content["state"], last[content["rows"]] + 0.5)))


def test_prefix_sums_low_part_is_double_doubles(tmp_path):
    """The scalars' SP_lo, the low part of the prefix sum of P (double-double), is
    at most an ulp of SP, as the rows' SP_lo are: a low part of 1.0 beside SP of a
    few hundred, which the kernel never writes, loaded (|SP_lo| <= SP was checked)."""
    est, _, _ = version_11_averaged_l2(150)
    path = tmp_path / "m"
    save_model(est, path)
    SP = est._learner.scalars()["SP"]
    assert SP > 1.0
    for low in (1.0, -1.0, 4 * math.ulp(SP)):
        refused(edited(path, tmp_path / "t", lambda h: h["scalars"].update(SP_lo=low)), "SP_lo=")


def test_version_9_files_load_as_models_without_an_offset(tmp_path):
    """A file of format version 9 (no t0 parameter or learner entry) loads as the model
    of t0 = 0, which trains on as the model saved; a file's t0 is checked (a version 10
    file without it, a negative one for a parameter, one under a rule without the
    offset are refused)."""
    path = tmp_path / "inv.npz"
    save_model(ProxClassifier(schedule="inv", alpha=1e-4, penalty="l2", eta0=0.3).fit(X, Y), path)
    before = load_model(path)

    def as_version_9(h):
        h["version"] = 9
        del h["params"]["t0"], h["learner"]["t0"]

    after = load_model(edited(path, tmp_path / "v9.npz", as_version_9))
    same_state(before, after)
    assert after.t0 == after.t0_ == 0.0
    same_state(before.partial_fit(X[:100], Y[:100]), after.partial_fit(X[:100], Y[:100]))
    refused(edited(path, tmp_path / "a.npz", lambda h: h["learner"].pop("t0")), "learner entry lacks ['t0']")
    refused(edited(path, tmp_path / "b.npz", lambda h: h["params"].update(t0=-1.0)), "t0=-1.0 must be >= 0")
    refused(edited(path, tmp_path / "c.npz", lambda h: h["learner"].update(t0=-1.0)), "t0=-1.0 must be > -1")
    refused(edited(path, tmp_path / "d.npz", lambda h: h["learner"].update(t0=2.0)),
            "params.t0=0.0 but the kernel was fitted with t0=2.0")
    ftrl = tmp_path / "ftrl.npz"
    save_model(ProxClassifier(update="ftrl").fit(X, Y), ftrl)
    refused(edited(ftrl, tmp_path / "e.npz", lambda h: (h["learner"].update(t0=2.0), h["params"].update(t0=2.0))),
            "t0=2.0 offsets the decaying scalar schedules of update='fobos'")


def test_a_hashing_model_remembers_its_hashing(tmp_path):
    """A model trained with hash_bits hashes the raw ids it predicts on, loaded from
    its file too, where a file that did not record it predicted unhashed ids without a
    word; what a file may say about its hashing is checked."""
    est = ProxClassifier(hash_bits=8).partial_fit(X[:HALF], Y[:HALF], classes=[-1.0, 1.0])
    assert est.coef_.shape == (1, 256) and est.hash_bits_ == 8 and est.n_features_in_ == 256
    path = tmp_path / "hashed.npz"
    save_model(est, path)
    loaded = load_model(path)
    assert loaded.hash_bits == loaded.hash_bits_ == 8
    np.testing.assert_array_equal(loaded.decision_function(X_TEST), est.decision_function(X_TEST))
    same_state(loaded.partial_fit(X[HALF:], Y[HALF:]), est.partial_fit(X[HALF:], Y[HALF:]))
    refused(edited(path, tmp_path / "a", lambda h: h["fitted"].update(hash_bits_=9)),
            "hash_bits_=9 but the model has 256 features, not 2^9")
    refused(edited(path, tmp_path / "b", lambda h: h["params"].update(hash_bits=None)),
            "params.hash_bits=None but the model was fitted with hash_bits_=8")
    refused(edited(path, tmp_path / "c", lambda h: h["fitted"].update(hash_bits_=99)), "hash_bits=99")
    est.set_params(hash_bits=9)
    with pytest.raises(ValueError, match="cannot be saved: params.hash_bits=9 but the model was fitted"):
        save_model(est, tmp_path / "d.npz")


def as_version_4_normalized(path, eta0=0.5):
    """The state a version 4 file holds for the normalized model without a penalty at
    ``path``: rows (R0, m), then per output (w, G, c), R0 = 0 and c = eta0 / (m sqrt(G))
    (0 while G = 0), as version 4's kernel wrote them."""
    state = members_of(path)["state"]
    m, entries = state[:, :1], state[:, 1:].reshape(len(state), -1, 2)
    G = entries[:, :, 1]
    with np.errstate(divide="ignore"):
        c = np.where(G > 0, eta0 / (m * np.sqrt(G)), 0.0)
    entries = np.concatenate([entries, c[:, :, None]], axis=2).reshape(len(state), -1)
    return np.concatenate([np.zeros_like(m), m, entries], axis=1)


@pytest.mark.parametrize("labels", [Y, LABELS], ids=["binary", "one-vs-rest"])
def test_version_4_normalized_models_without_a_penalty_load(tmp_path, labels):
    """Version 4 kept a cumulant stamp and the step factors in the rows of the
    defaults' models (no penalty), which version 5 drops: such a file loads as the
    model it holds, which trains on exactly as the model saved; a factor that is not
    the one G and m give is refused, as version 4's reader refused it."""
    path = tmp_path / "m"
    before = ProxClassifier().fit(X, labels)
    save_model(before, path)
    assert members_of(path)["state"].shape[1] == 1 + 2 * len(before._learner.__getstate__()["arrays"]["bstate"])
    state = as_version_4_normalized(path)
    v4 = edited(path, tmp_path / "v4", lambda h: before_6(h, 4), state=state)
    after = load_model(v4)
    same_state(before, after)
    same_state(before.partial_fit(X[:100], labels[:100]), after.partial_fit(X[:100], labels[:100]))
    state[0, 4] += 1e-3
    refused(edited(path, tmp_path / "bad", lambda h: h.update(version=4), state=state), "state holds c fields")


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


# --- hostile and corrupt files --------------------------------------------------------
# Each of these once loaded (then trained wrongly, or crashed in partial_fit), raised
# another error than ValueError (a traceback on the command line), or took memory
# out of proportion to the model (a zip bomb).

def refused(path, *messages):
    """Assert that loading the file at path raises a ValueError that starts with
    the path and says each of `messages`."""
    with pytest.raises(ValueError) as info:
        load_model(path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    for message in messages:
        assert message in text, text


def entries_of(path):
    """The members of the model file at path as (name, .npy bytes) pairs."""
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def raw_zip(entries):
    """A zip file's bytes holding ``entries`` (name, payload, method=0, crc=None,
    size=None, flags=0) exactly as given, however inconsistent: payloads already
    compressed (method 8: raw deflate), declared sizes and CRCs (default: the
    payload's), repeated names. zipfile checks too much to write such files."""
    out, directory = bytearray(), bytearray()
    for name, payload, method, crc, size, flags in (tuple(e) + (0, None, None, 0)[len(e) - 2:]
                                                     for e in entries):
        name = name.encode()
        fields = struct.pack("<HHHHHIII", 20, flags, method, 0, 0x21,
                             zlib.crc32(payload) if crc is None else crc, len(payload),
                             len(payload) if size is None else size)
        directory += b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack(
            "<HHHHHII", len(name), 0, 0, 0, 0, 0, len(out)) + name
        out += b"PK\x03\x04" + fields + struct.pack("<HH", len(name), 0) + name + payload
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(directory), len(out), 0)
    return bytes(out + directory + end)


def deflated_zeros(n_chunks, prefix=b"", chunk=1 << 24):
    """Raw deflate of prefix and n_chunks * chunk zero bytes, in about n_chunks * 16 KB
    made in no time: after a full flush, every chunk of zeros compresses to the same
    bytes. Returns (deflated bytes, uncompressed size, CRC-32)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    repeated = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(prefix)
    for _ in range(n_chunks):
        crc = zlib.crc32(zeros, crc)
    return head + first + repeated * (n_chunks - 1) + c.flush(), len(prefix) + n_chunks * chunk, crc


def npy_header(shape, descr="<f8"):
    """The .npy header (format 1.0) of an array of this shape and type."""
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": shape})
    return f.getvalue()


def test_deflated_zeros_are_what_they_declare():
    data, size, crc = deflated_zeros(5, npy_header((5 << 17,)), chunk=1 << 20)
    plain = zlib.decompress(data, -15)
    assert len(plain) == size and zlib.crc32(plain) == crc and len(data) < size / 500
    np.testing.assert_array_equal(np.lib.format.read_array(io.BytesIO(plain)), np.zeros(5 << 17))


@pytest.fixture(scope="module")
def berhu_file(tmp_path_factory):
    """A Berhu model (fobos, invsqrt) whose heap holds many l2-phase entries."""
    path = tmp_path_factory.mktemp("berhu") / "berhu.npz"
    est = ProxClassifier(penalty="berhu", schedule="invsqrt", alpha=1e-3, berhu_gamma=0.01, eta0=1.0).fit(X, Y)
    assert est._learner.scalars()["heap_size"] > 10
    save_model(est, path)
    return path


def heap_edit(edit):
    """A change of a Berhu file's members: edit(header, members) changes them in place."""
    def change(path):
        content = members_of(path)
        header = json.loads(str(content.pop("header")))
        edit(header, content)
        return rewrite(path, lambda h: h.update(header), **content)
    return change


def emptied(h, m):
    m["heap_items"], m["heap_keys"] = m["heap_items"][:0], m["heap_keys"][:0]
    h["scalars"]["heap_size"] = 0


def duplicated(h, m):
    m["heap_items"][-1], m["heap_keys"][-1] = m["heap_items"][0], m["heap_keys"][0]


def dropped(h, m):
    m["heap_items"], m["heap_keys"] = m["heap_items"][:-1], m["heap_keys"][:-1]
    h["scalars"]["heap_size"] -= 1


def l1_entry_listed(h, m):
    phase = m["state"].reshape(-1, 3)[:, 1]
    m["heap_items"][-1] = m["rows"][np.flatnonzero(phase == 0)[0]]


def unordered(h, m):
    for name in ("heap_items", "heap_keys"):
        m[name][[0, -1]] = m[name][[-1, 0]]


def key_nudged(h, m):
    m["heap_keys"][3] = np.nextafter(m["heap_keys"][3], np.inf)


def fresh_phase(h, m):
    entries = m["state"].reshape(-1, 3)
    entries[np.flatnonzero(entries[:, 1] == 0)[0], 1] = 2.0


def l2_outside_the_heap(h, m):
    entries = m["state"].reshape(-1, 3)
    entries[np.flatnonzero(entries[:, 1] == 0)[0]] = [5.0, 1.0, 1.0]


HEAPS = {
    "emptied": (emptied, "entries in the l2 phase"),
    "emptied, heap_size kept": (lambda h, m: emptied(h, m) or h["scalars"].update(heap_size=5),
                                "heap_items has shape (0,)"),
    "duplicated item": (duplicated, "heap_items holds a repeated entry"),
    "an item dropped": (dropped, "entries in the l2 phase"),
    "an l1 entry listed": (l1_entry_listed, "entries in the l2 phase"),
    "not a max-heap": (unordered, "max-heap order"),
    "a key nudged": (key_nudged, "exit keys"),
    "a FRESH phase": (fresh_phase, "phase fields"),
    "an l2 entry outside the heap": (l2_outside_the_heap, "entries in the l2 phase"),
    "heap_size beyond the heap": (lambda h, m: h["scalars"].update(heap_size=h["scalars"]["heap_size"] + 1),
                                  "heap_items has shape"),
}


@pytest.mark.parametrize("edit, message", HEAPS.values(), ids=HEAPS.keys())
def test_berhu_heap_holds_exactly_the_l2_entries(berhu_file, tmp_path, edit, message):
    """Berhu's kernel trusts its heap: an emptied heap, or one item twice, loaded
    and then crashed partial_fit (segmentation fault, or free(): invalid size)."""
    refused(heap_edit(edit)(edited(berhu_file, tmp_path / "berhu.npz")), message)


def learner_entry(**values):
    return lambda h: h["learner"].update(values)


def features(n):
    """n features in the learner and in the fitted attributes, consistently."""
    return lambda h: (h["learner"].update(n_features=n), h["fitted"].update(n_features_in_=n))


SIZES = {
    "negative n_features": (learner_entry(n_features=-1), "n_features=-1 must be >= 0"),
    "n_features beyond int64": (features(2**63),
                                "learner.n_features=9223372036854775808 must be an integer of 64 bits"),
    "n_features of 10^30": (features(10**30), "must be an integer of 64 bits"),
    "n_features not an integer": (features(3000.0), "learner.n_features=3000.0 must be an integer"),
    "n_features a string": (features("3000"), "learner.n_features='3000' must be an integer"),
    "n_outputs true": (learner_entry(n_outputs=True), "learner.n_outputs=True must be an integer"),
    "no outputs": (learner_entry(n_outputs=0), "n_outputs=0 must be >= 1"),
    "negative outputs": (learner_entry(n_outputs=-3), "n_outputs=-3 must be >= 1"),
    "outputs beyond a C int": (learner_entry(n_outputs=2**31), "n_outputs=2147483648 must be >= 1 and <= 2147483647"),
    "too large for memory": (features(2**45), "of memory is available"),
    "outputs too many for memory": (lambda h: (features(0)(h), learner_entry(n_outputs=2**30, ovr=True)(h)),
                                    "1073741824 output(s) needs"),
    "heap_size beyond the model": (lambda h: h["scalars"].update(heap_size=10**6), "heap_size=1000000 must be"),
}


@pytest.mark.parametrize("edit, message", SIZES.values(), ids=SIZES.keys())
def test_sizes_out_of_range_are_refused(saved, edit, message):
    """Negative or huge sizes gave SystemError, OverflowError or MemoryError."""
    refused(saved[1](edit_header=edit), message)


def test_deeply_nested_header_is_refused(saved, tmp_path):
    """A 10^5-deep JSON header raised RecursionError; nesting within an entry is a
    wrong type."""
    path, _ = saved
    refused(edited(path, tmp_path / "deep", header=np.array("[" * 10**5 + "]" * 10**5)),
            "not a readable fastprox model file", "RecursionError")
    refused(edited(path, tmp_path / "nested", lambda h: h["params"].update(alpha=json.loads("[" * 900 + "]" * 900))),
            "params.alpha=[[[[")


MEMORY_PROBE = """
import sys, tracemalloc
import numpy.lib.format
from fastprox.model_io import read_model
tracemalloc.start()
for path in sys.argv[1:]:
    try:
        read_model(path)
        print("loaded", path)
    except ValueError as e:
        print(e)
print(tracemalloc.get_traced_memory()[1])
"""


def peak_memory_of_reading(*paths):
    """(the lines read_model's errors print, the peak of the memory Python and NumPy
    allocated while reading the files, in bytes), in a fresh process (tracemalloc:
    a child's peak RSS starts at its parent's)."""
    lines = subprocess.run([sys.executable, "-c", MEMORY_PROBE, *map(str, paths)], capture_output=True,
                           text=True, check=True, timeout=120).stdout.splitlines()
    return lines[:-1], int(lines[-1])


def test_bombs_are_refused_before_they_are_decompressed(saved, tmp_path):
    """A 3 MB file with an unused member of 3 GiB of deflated zeros took 3.1 GB to
    load (np.load read every member); the reader refuses it, and members whose
    declared sizes are not what the header implies, before decompressing them,
    and zips of many entries before reading their directory."""
    path, _ = saved
    members = entries_of(path)
    gib = 1 << 30
    # member -> (its .npy header, GiB of zeros after it): a member no model has; a member
    # and a header whose .npy headers declare 3 GiB and 1 GiB (NumPy's strings stop at
    # 2 GiB); a member whose .npy header is right, but whose zip entry holds 3 GiB more
    bombs = {"junk": (b"", 3), "bstate": (npy_header((3 * gib // 16, 2)), 3),
             "header": (npy_header((), f"<U{gib // 4}"), 1), "gstamp": (npy_header((0,)), 3)}
    paths = []
    for name, (prefix, gibs) in bombs.items():
        paths.append(tmp_path / f"{name}.npz")
        zeros, size, crc = deflated_zeros(gibs * gib >> 24, prefix)
        member = f"{name}.npy"
        paths[-1].write_bytes(raw_zip([m for m in members if m[0] != member] + [(member, zeros, 8, crc, size)]))
        assert paths[-1].stat().st_size < 3.5e6
    paths.append(tmp_path / "directory.npz")
    paths[-1].write_bytes(raw_zip(members + [("x.npy", b"")] * 60_000))
    errors, peak = peak_memory_of_reading(*paths)
    assert [e.split(": ", 1)[0] for e in errors] == list(map(str, paths))
    assert "unknown member 'junk.npy'" in errors[0]
    assert "bstate has shape (201326592, 2)" in errors[1]
    assert "header holds 1073741824 bytes, more than the 4194304 a header may" in errors[2]
    assert "gstamp declares 3221225600 bytes, but its shape (0,) of float64 takes 128" in errors[3]
    assert "zip directory declares" in errors[4]
    assert peak < 16e6, peak


def test_unknown_repeated_and_misplaced_members_are_refused(saved, tmp_path):
    path, rewrite_saved = saved
    members = entries_of(path)
    path.write_bytes(raw_zip(members + [members[1]]))
    refused(path, f"member {members[1][0]!r} appears twice")
    path.write_bytes(raw_zip(members + [("extra.npy", members[1][1])]))
    refused(path, "unknown member 'extra.npy'")
    path.write_bytes(raw_zip([m + (0, None, None, 1) for m in members]))
    refused(path, "not a readable fastprox model file", "encrypted")
    save_model(ProxRegressor().fit(X, Y), path)
    refused(rewrite(path, classes=np.array([0.0, 1.0])), "a ProxRegressor has no classes")


def both(**values):
    """The same values in the learner and the params entries."""
    return lambda h: (h["learner"].update(values), h["params"].update(values))


VALUES = {
    "negative alpha": (learner_entry(alpha=-1.0), "learner: alpha=-1.0 must be >= 0.0"),
    "negative alpha in params": (lambda h: h["params"].update(alpha=-1.0), "params: alpha=-1.0 must be >= 0.0"),
    "NaN alpha": (learner_entry(alpha=float("nan")), "alpha=nan must be a finite number"),
    "negative eta0": (learner_entry(eta0=-0.5), "learner: eta0=-0.5 must be > 0.0"),
    "eta0 'auto' in the kernel": (learner_entry(eta0="auto"), "learner.eta0='auto' must be"),
    "l1_ratio above 1": (learner_entry(l1_ratio=2.0), "l1_ratio=2.0 must be >= 0.0 and <= 1.0"),
    "zero berhu_gamma": (learner_entry(berhu_gamma=0), "berhu_gamma=0 must be > 0.0"),
    "negative delta": (learner_entry(delta=-1.0), "delta=-1.0 must be >= 0.0"),
    "an integer boolean": (learner_entry(fit_intercept=1), "learner.fit_intercept=1 must be true or false"),
    "ovr and multinomial": (learner_entry(ovr=True, multinomial=True), "ovr and multinomial are both true"),
    "negative t": (lambda h: h["scalars"].update(t=-1), "scalars: t=-1 must be >= 0"),
    "t beyond 2^53": (lambda h: (h["scalars"].update(t=2**60), h["fitted"].update(t_=2**60)),
                      "t=1152921504606846976 must be"),
    "negative n_ops": (lambda h: h["scalars"].update(n_ops=-5), "n_ops=-5 must be >= 0"),
    "P of 0": (lambda h: h["scalars"].update(P=0.0), "P=0.0 must be > 0.0"),
    "P above 1": (lambda h: h["scalars"].update(P=1.5), "P=1.5 must be > 0.0 and <= 1.0"),
    "infinite Q": (lambda h: h["scalars"].update(Q=float("inf")), "Q=inf must be a finite number"),
    "t_ other than t": (lambda h: h["fitted"].update(t_=h["fitted"]["t_"] + 1), "but the kernel has taken"),
    "negative n_iter_": (lambda h: h["fitted"].update(n_iter_=-1), "n_iter_=-1 must be >= 0"),
    "version true": (lambda h: h.update(version=True), "model format version True"),
    "an unknown entry": (lambda h: h.update(extra=1), "has unknown entries ['extra']"),
    "a missing entry": (lambda h: h.pop("fitted"), "lacks ['fitted']"),
    "a missing parameter": (lambda h: h["params"].pop("max_iter"), "params entry lacks ['max_iter']"),
    "a scalars list": (lambda h: h.update(scalars=[1, 2]), "scalars entry is [1, 2], not a JSON object"),
    "class a list": (lambda h: h.update({"class": ["ProxClassifier"]}), "unknown model class ['ProxClassifier']"),
    "batch_size beyond a C int": (lambda h: h["params"].update(batch_size=2**40), "batch_size=1099511627776 must be"),
    "random_state a string": (lambda h: h["params"].update(random_state="x"), "params.random_state='x' must be null"),
    "unknown multi_class": (lambda h: h["params"].update(multi_class="crammer"),
                            "multi_class='crammer' is not supported"),
    "a loss other than the params'": (lambda h: h["params"].update(loss="hinge"),
                                      "params.loss='hinge' but the kernel was fitted with loss='log'"),
    "a regression loss": (both(loss="squared"), "loss='squared' is not supported"),
    "a penalty other than the params'": (lambda h: h["params"].update(penalty="l2"), "params.penalty='l2' but"),
    "an update other than the params'": (learner_entry(update="rda", schedule="adagrad"),
                                         "but the kernel was fitted with update='rda'"),
    "an intercept other than the params'": (lambda h: h["params"].update(fit_intercept=False),
                                            "params.fit_intercept=False but"),
    "unsupported combination": (both(penalty="berhu"), "penalty='berhu' has no exact lazy form under update='ftrl'"),
    "the class of the other kind": (lambda h: h.update({"class": "ProxRegressor"}), "loss='log' is not supported"),
}


@pytest.mark.parametrize("edit, message", VALUES.values(), ids=VALUES.keys())
def test_header_values_out_of_range_are_refused(saved, edit, message):
    """alpha < 0, eta0 < 0, t < 0, a loss other than the parameters' loaded and trained."""
    refused(saved[1](edit_header=edit), message)


CLASSES = {
    "unsorted": (np.array([1.0, -1.0]), "are not sorted and distinct"),
    "repeated": (np.array([1.0, 1.0]), "are not sorted and distinct"),
    "NaN": (np.array([-1.0, np.nan]), "classes: [-1.0, nan] are not sorted and distinct"),
    "continuous": (np.array([-1.0, 0.5]), "classes: Unknown label type: continuous"),
    "unsorted strings": (np.array(["b", "a"]), "['b', 'a'] are not sorted"),
    "strings too long": (np.array(["a" * 3 * 10**6, "b"]), "more than 256 each or 16777216 bytes in all"),
    "three for one output": (np.array([1.0, 2.0, 3.0]), "classes has shape (3,), but the model has 1 output(s)"),
    "booleans as numbers": (np.array([[1, 2]]), "classes has shape (1, 2)"),
    "complex": (np.array([1j, 2j]), "classes has dtype complex128"),
}


@pytest.mark.parametrize("classes, message", CLASSES.values(), ids=CLASSES.keys())
def test_classes_are_sorted_and_distinct(saved, classes, message):
    refused(saved[1](classes=classes), message)


def test_multiclass_kind_matches_the_params(tmp_path):
    path, copy = tmp_path / "m", tmp_path / "copy"
    save_model(ProxClassifier(multi_class="multinomial").fit(X, LABELS), path)
    refused(edited(path, copy, lambda h: h["params"].update(multi_class="ovr")),
            "params.multi_class='ovr' but the kernel was fitted with multi_class='multinomial'")
    refused(edited(path, copy, lambda h: h["learner"].update(multinomial=False)), "either one-vs-rest or multinomial")
    for key, value in (("alpha", 0.5), ("eta0", 2.0), ("l1_ratio", 0.5), ("delta", 3.0)):
        refused(edited(path, copy, lambda h: h["params"].update({key: value})),
                f"params.{key}={value} but the kernel was fitted with {key}=")
    refused(edited(path, copy, classes=np.array([0, 0, 1])), "are not sorted and distinct")
    save_model(ProxClassifier(penalty="l1_l2", schedule="invsqrt", groups=np.arange(3000) % 50).fit(X, LABELS), path)
    refused(edited(path, copy, lambda h: h["params"].update(groups=(np.arange(3000) % 49).tolist())),
            "params.groups differs from the kernel's groups")
    refused(edited(path, copy, groups=np.full(3000, -2)), "groups ids must be >= -1")


def nudge(row, column, by):
    """An edit of the state member: its entry (row, column) plus `by`."""
    def edit(path):
        state = members_of(path)["state"]
        state[row, column] += by
        return rewrite(path, state=state)
    return edit


def set_member(name, index, value):
    """An edit of member `name`: entry `index` set to `value`."""
    def edit(path):
        a = members_of(path)[name]
        a[index] = value
        return rewrite(path, **{name: a})
    return edit


ADAGRAD = dict(schedule="adagrad")
STATES = {
    "NaN in the state": (dict(update="ftrl"), Y, nudge(0, 0, np.nan), "state holds NaN or infinity"),
    "infinite intercept": (dict(update="ftrl"), Y, set_member("bstate", (0, 0), np.inf),
                           "bstate holds NaN or infinity"),
    "negative n": (dict(update="ftrl"), Y, nudge(0, 1, -1e6), "state holds n fields"),
    "a root not sqrt(n)": (dict(update="ftrl"), Y, nudge(0, 2, 1e-3), "state holds root fields"),
    "negative intercept G": (ADAGRAD, Y, set_member("bstate", (0, 1), -1.0), "bstate hold values"),
    "an AdaGrad step not eta0 / (delta + sqrt(G))": (ADAGRAD, Y, nudge(0, 3, 1e-3), "state holds eta fields"),
    "a stamp after t": (ADAGRAD, Y, nudge(0, 0, 1e9), "state holds last fields"),
    "a fractional stamp": (ADAGRAD, Y, nudge(0, 0, 0.5), "state holds last fields"),
    "negative G": (ADAGRAD, Y, nudge(0, 2, -1e9), "state holds G fields"),
    "a normalized step factor not eta0 / (m sqrt(G))": (dict(alpha=1e-3), Y, nudge(0, 4, 1e-3),
                                                         "state holds c fields"),
    "a negative scale m under l1": (dict(alpha=1e-3), Y, nudge(0, 1, -1e3), "state holds m fields"),
    "a negative scale m": (dict(), Y, nudge(0, 0, -1e3), "state holds m fields"),
    "a negative normalized G": (dict(), Y, nudge(0, 2, -1e3), "state holds G fields"),
    "a P stamp above 1": (dict(penalty="l2", schedule="invsqrt", alpha=1e-3), Y, nudge(0, 0, 1.0),
                          "state holds P fields"),
    "a Q stamp beyond Q": (dict(schedule="invsqrt", alpha=1e-3), Y, nudge(0, 0, 1e3), "state holds Q fields"),
    "a replay of 10^15 steps": (dict(penalty="sparse_group", schedule="invsqrt", groups=np.arange(3000) % 50,
                                     multi_class="multinomial"), LABELS, set_member("gstamp", 0, -1e15),
                                "gstamp, gnorm or bstate hold values"),
    "a fractional step stamp": (dict(penalty="sparse_group", schedule="invsqrt", multi_class="multinomial"),
                                LABELS, set_member("gstamp", 0, 0.5), "gstamp, gnorm or bstate hold values"),
    "a negative group norm": (dict(penalty="squared_group", schedule="invsqrt", groups=np.arange(3000) % 50,
                                   multi_class="multinomial"), LABELS, set_member("gnorm", 0, -1.0),
                              "gstamp, gnorm or bstate hold values"),
    "negative group weights": (dict(penalty="l1_l2", schedule="invsqrt", groups=np.arange(3000) % 50,
                                    group_weights=WEIGHTS_50), LABELS, set_member("group_weights", 0, -1.0),
                               "group_weights must be finite and >= 0"),
}


@pytest.mark.parametrize("params, labels, edit, message", STATES.values(), ids=STATES.keys())
def test_state_values_the_kernel_never_writes_are_refused(tmp_path, params, labels, edit, message):
    path = tmp_path / "m"
    save_model(ProxClassifier(**params).fit(X, labels), path)
    refused(edit(path), message)


def test_saving_refuses_what_loading_would(tmp_path):
    """The writer's output always loads: parameters changed since the fit in ways
    the kernel does not follow, invalid ones, and an overflowed model are refused
    when saving; t_ is the kernel's step count."""
    path = tmp_path / "m"
    est = ProxClassifier().fit(X, Y)
    for change, message in [(dict(penalty="l2"), "params.penalty='l2' but the kernel was fitted with penalty='l1'"),
                            (dict(alpha=-1.0), "params: alpha=-1.0 must be >= 0.0"),
                            (dict(alpha=1e-3), "params.alpha=0.001 but the kernel was fitted with alpha=0.0"),
                            (dict(eta0="auto", schedule="adagrad"), "params.schedule='adagrad' but the kernel"),
                            (dict(multi_class="softmax"), "multi_class='softmax' is not supported")]:
        before = est.get_params()
        with pytest.raises(ValueError, match="^the model cannot be saved: ") as info:
            save_model(est.set_params(**change), path)
        assert message in str(info.value)
        est.set_params(**before)
    est.t_ -= 5                     # as after an interrupted partial_fit
    save_model(est, path)
    assert load_model(path).t_ == est._learner.t
    state = est._learner.__getstate__()
    state["arrays"]["state"][7, -1] = np.inf      # as a step that overflowed leaves it
    est._learner.__setstate__(state)
    with pytest.raises(ValueError, match="its state holds NaN or infinity"):
        save_model(est, tmp_path / "overflowed")
    assert not (tmp_path / "overflowed").exists()


def edited(source, path, edit=None, **members):
    """A copy at path of the model file at source, rewritten (see `rewrite`)."""
    shutil.copyfile(source, path)
    return rewrite(path, edit, **members)


def test_predict_with_a_bad_model_prints_one_line(berhu_file, saved, tmp_path):
    """The command line names the file and what is wrong in one line, never a traceback."""
    data = tmp_path / "data.svm"
    dump_libsvm(X_TEST, np.ones(X_TEST.shape[0]), data)
    source, _ = saved
    models = [edited(source, tmp_path / "deep.npz", header=np.array("{" * 10**5)),
              heap_edit(emptied)(edited(berhu_file, tmp_path / "heap.npz"))]
    for name, edit in {"negative outputs": learner_entry(n_outputs=-1), "huge outputs": learner_entry(n_outputs=2**40),
                       "huge features": features(2**70), "too large": features(2**45),
                       "nested": lambda h: h.update(fitted=json.loads("[" * 900 + "]" * 900))}.items():
        models.append(edited(source, tmp_path / f"{name}.npz", edit))
    for model in models:
        run = subprocess.run([sys.executable, "-c", "import sys; from fastprox.cli import main; sys.exit(main())",
                              "predict", str(model), str(data)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 1 and run.stdout == "", run
        assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith(f"fastprox: error: {model}: "), run.stderr


def test_sparse_group_files_are_written_caught_up_and_bounded_when_read(tmp_path):
    """sparse_group replays a skipped prox per step when a group is read: save_model
    writes every group caught up (the same model, nothing pending), and a file whose
    stamps lie far behind t (which would make the reader replay for ever) is refused."""
    import scipy.sparse
    rng = np.random.default_rng(0)
    X, y = scipy.sparse.random(400, 60, density=0.05, format="csr", random_state=rng), np.r_[-1, 1].repeat(200)
    est = ProxClassifier(penalty="sparse_group", schedule="invsqrt", alpha=1e-3, eta0=0.1, shuffle=False)
    est.fit(X, y)
    assert np.min(est._learner.saved_arrays()["gstamp"][0]) < est.t_      # replays pending in memory
    path = tmp_path / "m.npz"
    save_model(est, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(np.asarray(loaded._learner.saved_arrays()["gstamp"][0]), est.t_)
    np.testing.assert_allclose(loaded.coef_, est.coef_, rtol=1e-12, atol=1e-15)
    loaded.partial_fit(X, y)
    est.partial_fit(X, y)
    np.testing.assert_allclose(loaded.coef_, est.coef_, rtol=1e-12, atol=1e-15)
    def far_ahead(header):                          # the same file, its step count pushed to 2^40
        header["scalars"]["t"] = header["fitted"]["t_"] = 1 << 40
    with pytest.raises(ValueError, match="would replay .* skipped proxes"):
        load_model(rewrite(path, far_ahead))


def test_each_kind_of_model_file_names_the_other(tmp_path):
    """A structured model file given to load_model, and a flat one given to the
    structured readers, are refused naming what the file holds and what reads it
    (`_registry.other_model_file`): load_model said "unknown member 'array_0.npy'", the
    structured reader "the header must hold exactly [...]"."""
    import scipy.sparse as sp
    from fastprox.structured import SequenceTagger
    from fastprox.structured.parser import load_parser
    from fastprox.structured.tagger import load_tagger, save_tagger
    X = sp.random(12, 6, density=0.5, format="csr", random_state=0)
    tagger = tmp_path / "tagger.model"
    save_tagger(SequenceTagger(random_state=0).fit(X, np.arange(12) % 2, [5, 7]), tagger)
    with pytest.raises(ValueError, match=r"holds a SequenceTagger \(fastprox tag train or parse train\), not a "
                                         r"ProxClassifier or ProxRegressor: read it with fastprox tag predict"):
        load_model(tagger)
    flat = tmp_path / "flat.model"
    save_model(ProxClassifier(max_iter=1).fit(X, np.arange(12) % 2), flat)
    for load in (load_tagger, load_parser):
        with pytest.raises(ValueError, match=r"holds a ProxClassifier \(fastprox train or save_model\), not a "
                                             r"SequenceTagger or DependencyParser: read it with fastprox predict"):
            load(flat)
