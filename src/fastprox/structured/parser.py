"""`DependencyParser`: an arc-factored dependency parser trained online, with every
rule, schedule and penalty of fastprox (the contract's "Structured outputs", trees;
Martins et al.'s online MKL over feature templates with ``penalty="squared_group"``).

Two ways in. **Rows given** (any features): ``fit(arcs, lengths, heads)``, where a
sentence of ``n`` words is ``(n + 1) * n`` CSR rows of ``arcs``, the arc ``h -> m``
in row ``h * n + m - 1`` of its block (``h = 0..n``, 0 the root; ``m = 1..n``; the
rows with ``h == m`` are ignored) and ``heads`` gives each word's head. **From
treebanks**: ``fit(sentences)`` with the sentences of `read_conllu` (``heads=True``)
or CoNLL-U paths, the arcs' features made per sentence by the templates of
`fastprox.structured.arcs.ArcFeatures`, one group per template. The training
loop is compiled (`fastprox.structured._parser`): per sentence, the arcs' scores,
the tree (Chu-Liu-Edmonds, or Eisner with ``projective=True``; cost-augmented under
the hinge loss), and the step with Phi(x, y^) - Phi(x, y) as sparse rows. The
estimator's shell (parameters, training calls, threads, pickling, model files) is
the structured estimators' (`fastprox.structured._estimator`, `model_file`).
"""
import os
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from .._concurrency import lock_of
from .._docstrings import sharing
from .._sklearn_names import PARSER_EQUIVALENTS, checking_names
from .._validation import CHECKED_BYTES, GROUP_PENALTIES, available_memory, float_csr, kernel_arrays, readable_size
from . import _parser
from ._estimator import NO_WEIGHTS, StructuredEstimator, sequence_weights, snapshot_array
from ._params import PARSER_DEFAULTS as DEFAULTS, PARSER_LOSSES
from .arcs import ArcFeatures
from .io import read_conllu
from .model_file import read_structured_model, write_structured_model
from .trees import find_cycle

__all__ = ["DependencyParser", "save_parser", "load_parser"]

#: The arc features' parameters that `DependencyParser` passes to `ArcFeatures`.
_FEATURE_PARAMS = ("templates", "bits", "lowercase", "pos")


class DependencyParser(StructuredEstimator):
    """Arc-factored dependency parser trained online, one sentence per step, lazily and exactly.

    From CoNLL-U treebanks (the arcs' features made by templates, one group per
    template, so that ``penalty="squared_group"`` is Martins et al.'s online
    MKL) or from arcs given as CSR rows: a sentence of n words is (n + 1) n
    rows, the arc h -> m in row h n + m - 1 of its block (h = 0..n, 0 the root;
    the rows with h == m are ignored).

    Parameters
    ----------
    loss : {"hinge", "perceptron"}, default="hinge"
        ``"hinge"``: the structured SVM with the Hamming cost over heads
        (cost-augmented decoding; no step where the loss is 0); ``"perceptron"``:
        Collins' perceptron.
    penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma
        The rule (docs/contract.md; the manual's table of rules): every update,
        schedule and penalty but ``schedule="normalized"``. The defaults, FOBOS
        with the constant step 0.012 and no penalty, averaged (``average``), are
        the setting bench/dependency_parsing.py found best on UD English EWT.
    groups : "templates", array of int or None, default="templates"
        The group of each feature for the group penalties (read only under
        them): ``"templates"`` makes each arc template a group (sentences from
        treebanks; the MKL paper's setting with ``penalty="squared_group"``); an
        array gives them for arcs given as rows.
    group_weights, max_iter, shuffle, random_state, warm_start, verbose
        As for `SequenceTagger` (the structured estimators' shell), a sentence
        being an example; ``max_iter`` defaults to 6 passes (the averaged model
        at the smaller step keeps gaining until then on EWT).
    projective : bool, default=False
        Decode projective trees (Eisner, O(n^3)) rather than any tree
        (Chu-Liu-Edmonds, O(n^2)).
    templates, bits, lowercase, pos
        The arc features of treebank sentences (`ArcFeatures`); unused with
        rows. ``templates="mkl-ewt-feats-ctx"`` are the 46
        templates that online MKL ranked first on UD English EWT (``"mkl-ewt"``)
        and 34 of the UPOS|FEATS tags (``x`` atoms): the 14 of
        ``"mkl-ewt-feats"`` (each side's tag, the pair, each beside the other
        side's POS or word) and 20 beside a surrounding POS, the other side's
        lemma or the own neighbour's POS; ``"ewt-no-prefix"`` (the default)
        those less the 10 of 5-character prefixes (70); ``"all"`` the 136.
    average : bool or int, default=True
        As for `SequenceTagger`: keep the averaged iterate (the averaged
        perceptron's, MSTParser's), which ``coef_`` and predict read. On by
        default: the last iterate generalizes worse (it fits the training
        sentences' last steps); False keeps it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The arc features' weights w.
    features_ : ArcFeatures or None
        The arc features (treebanks); None with rows given.
    t_ : int
        Sentences stepped so far.
    n_features_in_ : int
    progressive_loss_ : float
        The mean loss of the sentences of the last training call, each at the
        model it was stepped with.

    Notes
    -----
    A step scores every candidate arc (O(sum of the arcs' non-zeros): the
    features outside the sentence are caught up lazily), decodes in O(n^2)
    (O(n^3) projective) and updates the features of the arcs where the decoded
    and gold trees differ. Memory holds the model and one sentence's arcs (the
    treebank's token codes besides: 40 bytes a word). Safe to share between
    threads as the flat estimators are.
    """

    _losses = PARSER_LOSSES
    _equivalents = PARSER_EQUIVALENTS

    @checking_names
    def __init__(self, loss=DEFAULTS["loss"], penalty=DEFAULTS["penalty"], alpha=DEFAULTS["alpha"],
                 l1_ratio=DEFAULTS["l1_ratio"], update=DEFAULTS["update"], schedule=DEFAULTS["schedule"],
                 eta0=DEFAULTS["eta0"], delta=DEFAULTS["delta"], rda_rho=DEFAULTS["rda_rho"],
                 berhu_gamma=DEFAULTS["berhu_gamma"], groups=DEFAULTS["groups"], group_weights=None,
                 max_iter=DEFAULTS["max_iter"], shuffle=DEFAULTS["shuffle"], random_state=None,
                 warm_start=False, verbose=0, projective=DEFAULTS["projective"], templates=DEFAULTS["templates"],
                 bits=DEFAULTS["bits"], lowercase=DEFAULTS["lowercase"], pos=DEFAULTS["pos"],
                 average=DEFAULTS["average"]):
        super().__init__(loss, penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma,
                         groups, group_weights, False, max_iter, shuffle, random_state, warm_start, verbose,
                         average)
        self.projective = projective
        self.templates = templates
        self.bits = bits
        self.lowercase = lowercase
        self.pos = pos

    # ------------------------------------------------------------------ training
    def fit(self, X, lengths=None, heads=None, sample_weight=None):
        """Train (from scratch unless warm_start) with `max_iter` passes.

        Parameters
        ----------
        X : sparse matrix or 2-d array, or iterable of sentences, or path(s)
            The arcs' rows of every sentence stacked (``sum (n + 1) n`` rows, as
            the class says); or CoNLL-U sentences (`read_conllu` with
            ``heads=True``), or the paths of CoNLL-U files.
        lengths : array of int, with rows
            Each sentence's number of words n >= 1.
        heads : array of int, with rows
            Each word's head (0 the root), the sentences' words in turn; each
            sentence's heads must form a tree.
        sample_weight : array of float or None
            One weight per sentence.

        Returns
        -------
        self : DependencyParser
            The trained parser.
        """
        return self._training((X, lengths, heads, sample_weight, None, None), incremental=False)

    @sharing(fit)
    def partial_fit(self, X, lengths=None, heads=None, sample_weight=None):
        """Continue the model with one pass over these sentences, in order.

        Returns
        -------
        self : DependencyParser
            The parser, trained on the sentences.
        """
        return self._training((X, lengths, heads, sample_weight, None, None), incremental=True)

    def _fit_reporting(self, X, lengths=None, heads=None, report=None, after_pass=None):
        """`fit`, calling ``report(order, losses, errors, word_start)`` after each
        chunk of sentences stepped (their ids, losses, and words wrong before their
        step) and ``after_pass(epoch)`` after each pass (the benchmarks' curves)."""
        return self._training((X, lengths, heads, None, report, after_pass), incremental=False)

    def new_learner(self, n_features, n_outputs, n_unpenalized):
        """The kernel, with the groups resolved (`_groups`)."""
        groups, self.groups = self.groups, self._groups()
        try:
            return super().new_learner(n_features, n_outputs, n_unpenalized)
        finally:
            self.groups = groups

    def check_same_rule(self):
        """The shell's check, and the arc features': a feature parameter that
        set_params changed since the fit (templates, bits, lowercase, pos) would
        continue the model on other columns, so it raises ValueError."""
        groups, self.groups = self.groups, self._groups()
        try:
            super().check_same_rule()
        finally:
            self.groups = groups
        features = getattr(self, "features_", None)
        if features is None:
            return
        given = ArcFeatures.settings(**{key: getattr(self, key) for key in _FEATURE_PARAMS})
        fitted = ArcFeatures.settings(features.template_names, features.bits, features.lowercase, features.pos)
        for key in _FEATURE_PARAMS:
            if given[key] != fitted[key]:
                raise ValueError(f"cannot continue training the model: {key}={getattr(self, key)!r} but the "
                                 f"model's arc features were made with {key}={fitted[key]!r} (set_params after "
                                 "the fit); set it back, or fit again"
                                 + (" with warm_start=False" if self.warm_start else ""))

    def _groups(self):
        """The kernel's groups: None unless the penalty is a group penalty; the
        templates' (`ArcFeatures.groups`) for ``groups="templates"``."""
        if self.penalty not in GROUP_PENALTIES:
            return None
        if isinstance(self.groups, str):
            if self.groups != "templates":
                raise ValueError(f"groups={self.groups!r}: give 'templates', an array of group ids, or None.")
            if getattr(self, "features_", None) is None:
                raise ValueError("groups='templates' needs treebank sentences (the arc templates); with arc "
                                 "rows, give each feature's group id as an array.")
            return self.features_.groups
        return self.groups

    def _arc_features(self):
        """A new ArcFeatures of the parser's templates, bits, lowercase and pos: a first
        training call's on sentences, and the command line's checks before any file is
        read (its options, the test sentences' arc memory)."""
        return ArcFeatures(self.templates, bits=self.bits, lowercase=self.lowercase, pos=self.pos)

    def _train(self, X, lengths, heads, sample_weight, report, after_pass, *, incremental, first):
        if not isinstance(self.projective, (bool, np.bool_)):
            raise ValueError(f"projective={self.projective!r} must be True or False.")
        if first:
            self.features_ = None if _arc_rows(X) else self._arc_features()
        data = self._data(X, lengths, heads, training=True)
        weights = sequence_weights(sample_weight, len(data["word_start"]) - 1, "sentence")
        if first:
            self.n_features_in_ = data["n_features"]
            self._learner = self.new_learner(self.n_features_in_, 1, 0)
        elif data["n_features"] != self.n_features_in_:
            raise ValueError(f"the arcs have {data['n_features']} features, but this DependencyParser "
                             f"expects {self.n_features_in_}.")
        self.__dict__.pop("_snapshot", None)
        self.run_passes(len(data["word_start"]) - 1, incremental,
                        lambda chunk, losses, errors: self._steps(data, chunk, weights, losses, errors),
                        None if report is None else lambda *chunk: report(*chunk, data["word_start"]),
                        after_pass)

    def _steps(self, data, chunk, weights, losses, errors):
        """The compiled loop over the sentences `chunk`."""
        loss, projective = _parser.LOSSES[self.loss], bool(self.projective)
        weights = NO_WEIGHTS if weights is None else weights
        if "tokens" in data:
            _parser.fit_tokens(self._learner._learner, self.features_.kernel, data["tokens"], data["starts"],
                               data["word_start"], data["heads"], chunk, weights, loss, projective, losses,
                               errors, data["example"])
        else:
            _parser.fit_rows(self._learner._learner, *data["arcs"], data["first_row"], data["word_start"],
                             data["heads"], chunk, weights, loss, projective, losses, errors, data["example"])

    # ------------------------------------------------------------------ the model
    def _weights(self):
        """w after the last step, read once per step count."""
        self.check_fitted()
        with lock_of(self).reading():
            snapshot = self.__dict__.get("_snapshot")
            if "_learner" in self.__dict__ and (snapshot is None or snapshot[0] != self._learner.t_):
                snapshot = (self._learner.t_, np.ascontiguousarray(self._learner.coef_[0], np.float64))
                self._snapshot = snapshot
        return snapshot[1]

    coef_ = snapshot_array(lambda self: self._weights(), "coef_", "w, (n_features,), read-only.")

    @sharing(fit)
    def predict(self, X, lengths=None):
        """The heads of the sentences' words, by the maximum spanning tree.

        Of sentences (or paths), the best tree with one word on the root: a
        CoNLL-U tree has one word with HEAD 0 (the UD scorer, conll18_ud_eval,
        refuses a file with more), where the arc-factored best tree may hang
        several from it. Of arc rows, the best tree, as training decodes.

        Returns
        -------
        ndarray of int64 or list of ndarray
            With rows, one array of every word's head in turn; with sentences
            (or paths), one array per sentence.
        """
        w = self._weights()
        data = self._data(X, lengths, None, training=False)
        if data["n_features"] != len(w):
            raise ValueError(f"the arcs have {data['n_features']} features, but this DependencyParser "
                             f"expects {len(w)}.")
        projective = bool(self.projective)
        if "tokens" in data:
            flat = _parser.predict_tokens(w, self.features_.kernel, data["tokens"], data["starts"],
                                          data["word_start"], projective)
            return np.split(flat, data["word_start"][1:-1])
        return _parser.predict_rows(w, *data["arcs"], data["first_row"], data["word_start"], projective)

    @sharing(fit)
    def score(self, X, lengths=None, heads=None):
        """The unlabelled attachment score of `predict` on these sentences.

        Returns
        -------
        float
            The share of words given their gold head, punctuation included.
        """
        if _arc_rows(X):
            gold = _rows(X, lengths, heads, "score")["heads"]
            predicted = self.predict(X, lengths)
        else:
            sentences = _sentences(X)
            predicted = np.concatenate(self.predict(sentences))
            gold = _tokens(self.features_, sentences, True)["heads"]
        return float(np.mean(predicted == gold))

    # ------------------------------------------------------------------ input
    def _data(self, X, lengths, heads, training):
        """The arrays the compiled loops read, checked (see `fit`)."""
        if _arc_rows(X):
            if getattr(self, "features_", None) is not None:
                raise ValueError("this parser reads treebank sentences (its arc templates make the rows): "
                                 "give sentences or CoNLL-U paths, not arc rows.")
            return _rows(X, lengths, heads, "train") if training else _rows(X, lengths, None)
        if lengths is not None or heads is not None:
            raise ValueError("lengths= and heads= go with arcs given as rows (a sparse matrix or 2-d array); "
                             "sentences read from CoNLL-U carry their own heads.")
        if getattr(self, "features_", None) is None:
            raise ValueError("this parser was trained on arc rows: give arc rows (a sparse matrix with "
                             "lengths=), not sentences.")
        return _tokens(self.features_, _sentences(X, training), training)



def save_parser(model, path, extras=None):
    """Write the fitted DependencyParser ``model`` to a structured model file
    (`fastprox.structured.model_file`): w, the parameters, its arc features'
    ``to_dict`` (treebanks), and ``extras`` (plain data) beside them."""
    w = model._weights()
    fitted = {"t_": int(model.t_), "n_features_in_": int(model.n_features_in_),
              "progressive_loss_": float(getattr(model, "progressive_loss_", 0.0))}
    params = model.get_params()
    if params["random_state"] is not None and not isinstance(params["random_state"], int):
        params["random_state"] = None       # (a RandomState object: the passes are over)
    features = None if model.features_ is None else model.features_.to_dict()
    write_structured_model(path, "DependencyParser", params, fitted, w.reshape(-1, 1), {}, np.array(["arc"]),
                           {**(extras or {}), "features": features})


def load_parser(path):
    """(the DependencyParser, the extras) of a file `save_parser` wrote: it predicts
    as the saved one did; training it again starts a new model (the file holds no
    training state). ValueError naming the file for anything wrong."""
    saved = read_structured_model(path, "DependencyParser")
    try:
        model = DependencyParser(**saved.params)
        coef = saved.arrays["coef"]
        t, d = saved.fitted["t_"], saved.fitted["n_features_in_"]
        if not (isinstance(t, int) and t >= 0 and d == coef.shape[0] and coef.shape[1] == 1):
            raise ValueError("fitted.t_ must be an integer >= 0 and fitted.n_features_in_ w's length")
        model.check_params()
        features = saved.extras.get("features")
        model.features_ = None if features is None else ArcFeatures.from_dict(features)
        if model.features_ is not None and model.features_.n_features != d:
            raise ValueError(f"the arc features have {model.features_.n_features} columns, w {d}")
    except (KeyError, TypeError, ValueError) as e:
        what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(f"{path}: {what}") from None
    model.t_, model.n_features_in_ = t, d
    model.progressive_loss_ = saved.fitted.get("progressive_loss_", 0.0)
    model._snapshot = (t, np.ascontiguousarray(coef[:, 0]))
    return model, saved.extras


def _arc_rows(X):
    """Whether X gives the arcs as rows: a scipy sparse matrix, or a 2-d NumPy array
    (`_rows` makes it CSR), as scikit-learn's estimators take either; else X is
    sentences or paths."""
    return sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2)


def _rows(X, lengths, heads, needs_heads=None):
    """The arrays of sentences given by rows, checked: lengths >= 1, the rows
    (n + 1) n a sentence, the heads a tree each, and given when `needs_heads`
    (the use that reads them: "train", "score")."""
    if lengths is None:
        raise ValueError("arcs given as rows need lengths=, each sentence's number of words.")
    if heads is None and needs_heads:
        raise ValueError(f"arcs given as rows need heads= to {needs_heads}: each word's head (0 the root), "
                         f"the sentences' words in turn.")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and not np.issubdtype(lengths.dtype, np.integer)):
        raise ValueError(f"lengths must be a vector of integers (words per sentence); got shape "
                         f"{lengths.shape}, dtype {lengths.dtype}.")
    lengths = lengths.astype(np.int64)
    empty = np.flatnonzero(lengths < 1)
    if empty.size:
        raise ValueError(f"sentence {empty[0]} has {lengths[empty[0]]} words; a sentence has at least one "
                         f"word (drop the empty ones from lengths and their rows from the arcs).")
    word_start = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=word_start[1:])
    first_row = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum((lengths + 1) * lengths, out=first_row[1:])
    X = float_csr(X)
    if X.shape[0] != first_row[-1]:
        raise ValueError(f"the arcs have {X.shape[0]} rows where sentences of these lengths have "
                         f"{first_row[-1]}: (n + 1) * n rows a sentence of n words, the arc h -> m in row "
                         f"h * n + m - 1 of its block (h = 0..n, m = 1..n).")
    arrays = kernel_arrays(X)
    if not np.all(np.isfinite(arrays[0])):
        raise ValueError("the arcs' values contain NaN or infinity; remove or replace them.")
    data = {"arcs": arrays, "first_row": first_row, "word_start": word_start, "n_features": X.shape[1],
            "example": lambda s: f"sentence {s} (arc rows {first_row[s]}..{first_row[s + 1] - 1})"}
    data["heads"] = None if heads is None else _gold_heads(heads, lengths, word_start)
    return data


def _gold_heads(heads, lengths, word_start):
    """Each sentence's heads as int64, checked to form a tree (ValueError naming the
    sentence, the word and the fix)."""
    heads = np.asarray(heads)
    if heads.ndim != 1 or (heads.size and not np.issubdtype(heads.dtype, np.integer)):
        raise ValueError(f"heads must be a vector of integers (each word's head, 0 the root); got shape "
                         f"{heads.shape}, dtype {heads.dtype}.")
    if len(heads) != word_start[-1]:
        raise ValueError(f"heads has {len(heads)} entries for the {word_start[-1]} words of the sentences "
                         f"(one head per word).")
    heads = heads.astype(np.int64)
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    word = np.arange(len(heads)) - word_start[sentence] + 1
    bad = np.flatnonzero((heads < 0) | (heads > lengths[sentence]) | (heads == word))
    if bad.size:
        i = bad[0]
        s, n = sentence[i], lengths[sentence[i]]
        raise ValueError(f"sentence {s}, word {word[i]} (heads[{i}]): head {heads[i]} is "
                         f"{'the word itself' if heads[i] == word[i] else 'outside 0..' + str(n)}; a head "
                         f"is 0 (the root) or another word of the sentence, 1..{n}.")
    for s in range(len(lengths)):
        cycle = find_cycle(heads[word_start[s]:word_start[s + 1]])
        if cycle is not None:
            raise ValueError(f"sentence {s}: the heads form a cycle through words "
                             f"{' -> '.join(map(str, cycle))}; the heads of a sentence must form a tree "
                             f"(following heads from any word reaches the root 0).")
    return heads


def _sentences(X, heads=True):
    """The sentences of X: CoNLL-U sentences, or the paths of CoNLL-U files (one, or
    several), read with their heads (checked) unless ``heads`` is False."""
    if isinstance(X, (str, os.PathLike)):
        X = [X]
    if not isinstance(X, Iterable):
        raise ValueError(f"give the arcs as rows (a sparse matrix or 2-d array, with lengths=), CoNLL-U "
                         f"sentences or paths; got {type(X).__name__}.")
    out = []
    for item in X:
        if isinstance(item, (str, os.PathLike)):
            out.extend(read_conllu(item, heads=heads))
        else:
            out.append(item)
    return out


def check_arc_memory(sentences, features):
    """Refuse (MemoryError, naming its line) the longest of ``sentences`` (read by
    `read_conllu`) if its arcs under ``features`` (an ArcFeatures) would not fit in
    the memory available now.

    A sentence of n words has ``(n + 1) * n`` candidate arcs, whose rows are held at
    once (a row start, and a column a template each) with its ``(n + 1)^2`` arc
    scores: the memory grows with the square of its length. A sentence of 10,000
    words (an unsplit document) needs tens of GB; it was allocated until the system
    ran out, or refused naming no line.
    """
    sentence = max(sentences, key=len)
    n = len(sentence)
    need = (n + 1) * n * (8 + 4 * len(features.templates)) + 8 * (n + 1) ** 2
    if need <= CHECKED_BYTES:
        return
    free = available_memory()
    if free is not None and need > free:
        raise MemoryError(f"{sentence.source}:{sentence.line}: the sentence starting here has {n} words, whose "
                          f"{(n + 1) * n} candidate arcs need {readable_size(need)} to parse, but only "
                          f"{readable_size(free)} of memory is available (it grows with the square of a "
                          f"sentence's length); split it into sentences")


def _tokens(features, sentences, training):
    """The arrays of treebank sentences: their token codes stacked, and their gold
    heads where they have them (required to train)."""
    if not sentences:
        raise ValueError("no sentence to parse.")
    check_arc_memory(sentences, features)
    tokens, starts = features.corpus(sentences)
    lengths = np.diff(starts) - 3
    word_start = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=word_start[1:])
    missing = [s for s in sentences if getattr(s, "heads", None) is None]
    if training and missing:
        raise ValueError(f"{missing[0].source}:{missing[0].line}: a sentence without heads; read the "
                         f"treebank with read_conllu(..., heads=True) to train.")
    heads = None if missing else np.concatenate([np.asarray(s.heads, np.int64) for s in sentences])

    def example(s):
        sentence = sentences[s]
        return f"{sentence.source}:{sentence.line} (sentence {s})"
    return {"tokens": np.ascontiguousarray(tokens), "starts": starts, "word_start": word_start,
            "heads": heads, "example": example, "n_features": features.n_features}
