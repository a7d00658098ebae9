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
loop is compiled (`fastprox._parser`): per sentence, the arcs' scores, the tree
(Chu-Liu-Edmonds, or Eisner with ``projective=True``; cost-augmented under the
hinge loss), and the step with Phi(x, y^) - Phi(x, y) as sparse rows.
"""
import os
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from .. import _parser
from .._concurrency import lock_of
from .._validation import GROUP_PENALTIES, _number, _one_of, kernel_arrays
from .arcs import ArcFeatures
from .io import read_conllu
from .learner import StructuredLearner, _weight
from .trees import find_cycle

__all__ = ["DependencyParser", "DEFAULTS"]

#: The defaults of `DependencyParser` and of ``fastprox parse train``: what
#: bench/dependency_parsing.py chose on UD English EWT (bench/results/dependency_parsing.md).
DEFAULTS = {"loss": "hinge", "update": "fobos", "schedule": "adagrad", "penalty": None, "alpha": 0.0,
            "eta0": 0.1, "n_epochs": 5, "bits": 24}


class DependencyParser:
    """Arc-factored dependency parser, trained online one sentence per step.

    Parameters
    ----------
    loss : {"hinge", "perceptron"}
        ``hinge``: the structured SVM with the Hamming cost over heads
        (cost-augmented decoding); ``perceptron``: Collins' perceptron.
    projective : bool, default False
        Decode projective trees (Eisner, O(n^3)) rather than any tree
        (Chu-Liu-Edmonds, O(n^2)).
    update, schedule, penalty, alpha, l1_ratio, eta0, delta, rda_rho, berhu_gamma
        The rule, as for `StructuredLearner` (every rule but the normalized
        schedule; the gradient step).
    groups : "templates", array of int or None, default "templates"
        The group of each feature for the group penalties: ``"templates"`` makes
        each arc template a group (treebanks only); an array gives them with
        rows given. Read only under a group penalty.
    group_weights : array or None
        Per-group weights of the group penalties.
    n_epochs : int
        Passes `fit` makes over the sentences.
    shuffle : bool, default True
        Visit the sentences in a new random order each pass.
    random_state : int, default 0
        The seed of the orders.
    templates, bits, lowercase, pos
        The arc features of treebank sentences (`ArcFeatures`); unused with rows.

    Attributes
    ----------
    learner_ : StructuredLearner
        The model (one score per arc, no intercept): ``coef_`` its weights.
    features_ : ArcFeatures or None
        The arc features (treebanks), None with rows given.
    n_epochs_ : int
        Passes made so far (`fit` and `partial_fit`).
    history_ : list of dict
        Per pass: ``wrong`` (words given a wrong head by the decoded trees), ``loss``.
    """

    def __init__(self, *, loss=DEFAULTS["loss"], projective=False, update=DEFAULTS["update"],
                 schedule=DEFAULTS["schedule"], penalty=DEFAULTS["penalty"], alpha=DEFAULTS["alpha"],
                 l1_ratio=0.15, eta0=DEFAULTS["eta0"], delta=1e-8, rda_rho=0.0, berhu_gamma=1.0,
                 groups="templates", group_weights=None, n_epochs=DEFAULTS["n_epochs"], shuffle=True,
                 random_state=0, templates=None, bits=DEFAULTS["bits"], lowercase=False, pos="UPOS"):
        self.loss, self.projective, self.update, self.schedule, self.penalty = (loss, projective, update,
                                                                                schedule, penalty)
        self.alpha, self.l1_ratio, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho, self.berhu_gamma, self.groups, self.group_weights = rda_rho, berhu_gamma, groups, group_weights
        self.n_epochs, self.shuffle, self.random_state = n_epochs, shuffle, random_state
        self.templates, self.bits, self.lowercase, self.pos = templates, bits, lowercase, pos

    # ------------------------------------------------------------------ training
    def fit(self, X, lengths=None, heads=None, sample_weight=None):
        """Train afresh: `n_epochs` passes over the sentences (X, lengths, heads as
        `partial_fit` takes them). Returns self."""
        _number("n_epochs", self.n_epochs, 1, integer=True)
        for name in ("learner_", "features_", "n_epochs_", "history_"):
            self.__dict__.pop(name, None)
        data = self._data(X, lengths, heads, sample_weight, training=True)
        for _ in range(self.n_epochs):
            self._pass(data)
        return self

    def partial_fit(self, X, lengths=None, heads=None, sample_weight=None):
        """One pass over the sentences, continuing the model.

        Parameters
        ----------
        X : sparse matrix, or iterable of sentences, or path(s)
            The arcs' rows of every sentence stacked (``sum (n + 1) n`` rows, as
            the module says); or CoNLL-U sentences (`read_conllu` with
            ``heads=True``), or the paths of CoNLL-U files.
        lengths : array of int, with rows
            Each sentence's number of words n >= 1.
        heads : array of int, with rows
            Each word's head (0 the root), the sentences' words in turn; each
            sentence's heads must form a tree.
        sample_weight : array of float or None
            One weight per sentence.
        """
        self._pass(self._data(X, lengths, heads, sample_weight, training=True))
        return self

    def _pass(self, data):
        state = getattr(self, "n_epochs_", 0)
        n = len(data["word_start"]) - 1
        order = (np.random.default_rng([self._seed(), state]).permutation(n) if self.shuffle
                 else np.arange(n)).astype(np.int64)
        loss = _parser.LOSSES.index(self.loss)
        learner = self.learner_._learner
        with lock_of(self.learner_).training():
            if "tokens" in data:
                wrong, total, _ = _parser.fit_tokens(learner, self.features_.kernel, data["tokens"], data["starts"],
                                                     data["word_start"], data["heads"], order, data["weight"],
                                                     loss, bool(self.projective), data["example"])
            else:
                wrong, total, _ = _parser.fit_rows(learner, *data["arcs"], data["first_row"], data["word_start"],
                                                   data["heads"], order, data["weight"], loss,
                                                   bool(self.projective), data["example"])
        self.n_epochs_ = state + 1
        self.history_ = getattr(self, "history_", []) + [{"wrong": int(wrong), "loss": float(total)}]

    # ------------------------------------------------------------------ prediction
    def predict(self, X, lengths=None):
        """The heads of the sentences' words: with rows (X sparse, lengths), one int64
        array of every word's head in turn; with sentences (or paths), a list of
        one int64 array per sentence."""
        self._check_fitted()
        data = self._data(X, lengths, None, None, training=False)
        w = np.ascontiguousarray(self.learner_.coef_[0], np.float64)
        if "tokens" in data:
            flat = _parser.predict_tokens(w, self.features_.kernel, data["tokens"], data["starts"],
                                          data["word_start"], bool(self.projective))
            return np.split(flat, data["word_start"][1:-1])
        return _parser.predict_rows(w, *data["arcs"], data["first_row"], data["word_start"],
                                    bool(self.projective))

    def score(self, X, lengths=None, heads=None):
        """The unlabelled attachment score (share of words given their gold head) of
        `predict` on these sentences (heads from the sentences, or given with rows)."""
        predicted = self.predict(X, lengths)
        if lengths is None:
            data = self._data(X, None, None, None, training=False)
            gold = data["heads"]
            predicted = np.concatenate(predicted)
        else:
            gold = np.asarray(heads)
        return float(np.mean(predicted == gold))

    @property
    def coef_(self):
        """The arcs' feature weights after the last step (1, d)."""
        self._check_fitted()
        return self.learner_.coef_

    # ------------------------------------------------------------------ input
    def _data(self, X, lengths, heads, sample_weight, training):
        """The arrays the compiled loops read, checked (see `partial_fit`)."""
        _one_of("loss", self.loss, _parser.LOSSES)
        if not isinstance(self.projective, (bool, np.bool_)):
            raise ValueError(f"projective={self.projective!r} must be True or False.")
        if sp.issparse(X):
            data = _rows(X, lengths, heads if training else None)
            if training:
                self._learner(X.shape[1], None)
        else:
            if lengths is not None or heads is not None:
                raise ValueError("lengths= and heads= go with arcs given as a sparse matrix; sentences "
                                 "read from CoNLL-U carry their own heads.")
            sentences = _sentences(X)
            if training and not hasattr(self, "features_"):
                features = ArcFeatures(self.templates, bits=self.bits, lowercase=self.lowercase, pos=self.pos)
                self._learner(features.n_features, features)
            elif not hasattr(self, "features_") or self.features_ is None:
                raise ValueError("this parser was trained on arc rows: predict from rows (a sparse "
                                 "matrix with lengths=), not from sentences.")
            data = _tokens(self.features_, sentences, training)
        n = len(data["word_start"]) - 1
        data["weight"] = (np.ones(n) if sample_weight is None
                          else _sample_weights(sample_weight, n))
        return data

    def _learner(self, n_features, features):
        """The model, made on the first training call (and grown for wider rows)."""
        if hasattr(self, "learner_"):
            if (features is None) != (self.features_ is None):
                raise ValueError("this parser was trained on " + ("arc rows" if self.features_ is None else
                                 "treebank sentences") + "; continue it with the same kind of input.")
            if features is None and n_features > self.learner_.n_features:
                self.learner_.grow(n_features)
            return
        groups = self.groups
        if self.penalty not in GROUP_PENALTIES:
            groups = None
        elif isinstance(groups, str):
            if groups != "templates":
                raise ValueError(f"groups={groups!r}: give 'templates', an array of group ids, or None.")
            if features is None:
                raise ValueError("groups='templates' needs treebank sentences (the arc templates); with "
                                 "arc rows, give each feature's group id as an array.")
            groups = features.groups
        self.learner_ = StructuredLearner(
            n_features, 1, update=self.update, schedule=self.schedule, penalty=self.penalty, alpha=self.alpha,
            l1_ratio=self.l1_ratio, eta0=self.eta0, delta=self.delta, rda_rho=self.rda_rho,
            berhu_gamma=self.berhu_gamma, groups=groups, group_weights=self.group_weights, fit_intercept=False)
        self.features_ = features

    def _seed(self):
        _number("random_state", self.random_state, 0, integer=True)
        return int(self.random_state)

    def _check_fitted(self):
        if not hasattr(self, "learner_"):
            raise ValueError("this DependencyParser is not fitted yet: call fit or partial_fit first.")

    def __repr__(self):
        return (f"DependencyParser(loss={self.loss!r}, projective={self.projective}, update={self.update!r}, "
                f"schedule={self.schedule!r}, penalty={self.penalty!r}, alpha={self.alpha})")


def _sample_weights(values, n):
    w = np.asarray(values, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}; give one weight per sentence ({n},).")
    for h in w.tolist():
        _weight(h)
    return np.ascontiguousarray(w)


def _rows(X, lengths, heads):
    """The arrays of sentences given by rows, checked: lengths >= 1, the rows
    (n + 1) n a sentence, the heads a tree each."""
    if lengths is None:
        raise ValueError("arcs given as rows need lengths=, each sentence's number of words.")
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
    X = X.tocsr()
    if X.shape[0] != first_row[-1]:
        raise ValueError(f"the arcs have {X.shape[0]} rows where sentences of these lengths have "
                         f"{first_row[-1]}: (n + 1) * n rows a sentence of n words, the arc h -> m in row "
                         f"h * n + m - 1 of its block (h = 0..n, m = 1..n).")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    arrays = kernel_arrays(X)
    if not np.all(np.isfinite(arrays[0])):
        raise ValueError("the arcs' values contain NaN or infinity; remove or replace them.")
    data = {"arcs": arrays, "first_row": first_row, "word_start": word_start,
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


def _sentences(X):
    """The sentences of X: CoNLL-U sentences (read with heads), or the paths of
    CoNLL-U files (one, or several)."""
    if isinstance(X, (str, os.PathLike)):
        X = [X]
    if not isinstance(X, Iterable):
        raise ValueError(f"give the arcs as a sparse matrix (with lengths=), CoNLL-U sentences or paths; "
                         f"got {type(X).__name__}.")
    out = []
    for item in X:
        if isinstance(item, (str, os.PathLike)):
            out.extend(read_conllu(item, heads=True))
        else:
            out.append(item)
    return out


def _tokens(features, sentences, training):
    """The arrays of treebank sentences: their token codes stacked, and their gold
    heads where they have them (required to train)."""
    if not sentences:
        raise ValueError("no sentence to parse.")
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
            "heads": heads, "example": example}
