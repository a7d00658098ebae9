"""Vowpal Wabbit (pip `vowpalwabbit`), run in-process by its own driver
(`vowpalwabbit.Workspace(arg_list=[...])`, the code path of the `vw` command
and of `python -m vowpalwabbit`), logistic loss.

Three configurations: VW's defaults as a user gets them (adaptive,
normalized, invariant updates, learning rate 0.5, no penalty), the same with
the suite's penalty `--l1 alpha` (VW's l1 is per example, as alpha), and
`--sgd --l1 alpha` (plain SGD with VW's 1/sqrt(t) decay). Each is fed two ways: from its binary cache (`--cache_file`: parsed once, untimed;
the closest VW comes to training from memory; this is the one-pass table's
entry) and from its text format (`-d`, parsing included: the file table).
VW parses on a second thread; on this 2-core machine it gets both cores.

Feature names are the column numbers, so VW's weight of column j sits at
(j + hash("f")) & mask (VW's rule for numeric names), and `-b` is chosen so
that every column has its own weight: the model maps back onto the columns
exactly (checked against VW's own predictions in the tests of the suite).
The weights are read from `--readable_model` in an untimed extra run.
"""
import math
import os
import re

import numpy as np
import vowpalwabbit

from .base import Peer

NAMESPACE = "f"
_CONSTANT_HASH = 11650396  # VW's hash of its constant (intercept) feature
_WEIGHT_LINE = re.compile(r"^(\d+):(\S+)")


class VW(Peer):
    library = "Vowpal Wabbit"

    def __init__(self, name, options):
        self.name = name
        self.options = ["--loss_function", "logistic", "--quiet", *options]

    def prepare(self, problem):
        self.problem = problem
        self.bits = max(18, math.ceil(math.log2(problem.n_features + 1)))
        self.cache = problem.vw_cache_path(self.bits)

    def _run(self, *args):
        workspace = vowpalwabbit.Workspace(arg_list=[*self.options, "-b", str(self.bits), *args])
        workspace.finish()

    def _train_args(self, passes, source):
        args = ["--holdout_off", "--passes", str(passes)] if passes > 1 else []
        return args + source

    def fit(self, X, y, passes=1):
        if X.shape != self.problem.X_train.shape:
            raise ValueError("VW trains from the prepared problem's cache only")
        self._source = ["-d", self.problem.vw_path(), "--cache_file", self.cache]  # VW reads the cache
        self._passes = passes
        self._run(*self._train_args(passes, self._source))
        self._weights = None
        return self

    def fit_file(self, problem):
        self.prepare(problem)
        self._source = ["-d", problem.vw_path()]
        self._passes = 1
        self._run(*self._source)
        self._weights = None
        return self

    def weights(self):
        if self._weights is None:
            self._weights = self._read_model()
        return self._weights

    def _read_model(self):
        """Re-run the last training (deterministic) writing a readable model;
        map VW's hashed weights back onto the columns."""
        path = os.path.join(self.problem.workdir, f"vw_{os.getpid()}_{id(self)}.txt")
        self._run(*self._train_args(self._passes, self._source), "--readable_model", path)
        table = np.zeros(1 << self.bits)
        with open(path) as f:
            for line in f:
                match = _WEIGHT_LINE.match(line)
                if match:
                    table[int(match.group(1))] = float(match.group(2))
        os.remove(path)
        mask = (1 << self.bits) - 1
        hasher = vowpalwabbit.Workspace(arg_list=["--quiet"])
        offset = hasher.hash_space(NAMESPACE)
        hasher.finish()
        columns = (np.arange(self.problem.n_features) + offset) & mask
        return table[columns], float(table[_CONSTANT_HASH & mask])


def make(alpha):
    l1 = ["--l1", repr(alpha)]
    return [VW("VW defaults", []), VW("VW --l1", l1), VW("VW --sgd --l1", ["--sgd", *l1])]


def oaa_accuracy(problem, options=("--loss_function", "logistic")):
    """Test accuracy of VW's one-against-all reduction (`--oaa K`, VW's defaults
    otherwise; logistic loss unless `options` say else) after one pass over the
    problem's training rows in their order: its labels, any K values, are mapped to
    1..K (VW's multiclass labels) and its predictions back."""
    classes = np.unique(problem.y_train)
    bits = max(18, math.ceil(math.log2(problem.n_features * len(classes) + 1)))
    paths = {name: os.path.join(problem.workdir, f"oaa_{name}") for name in ("train", "test", "model", "pred")}
    for name, X, y in (("train", problem.X_train, problem.y_train), ("test", problem.X_test, problem.y_test)):
        with open(paths[name], "w") as out:
            for i in range(X.shape[0]):
                row = X.getrow(i)
                label = np.searchsorted(classes, y[i]) + 1 if y[i] in classes else 1
                out.write(f"{label} |{NAMESPACE} "
                          + " ".join(f"{j}:{float(v)!r}" for j, v in zip(row.indices, row.data)) + "\n")
    common = ["--quiet", "-b", str(bits)]
    vowpalwabbit.Workspace(arg_list=["--oaa", str(len(classes)), *options, *common, "-d", paths["train"],
                                     "-f", paths["model"]]).finish()
    vowpalwabbit.Workspace(arg_list=[*common, "-t", "-i", paths["model"], "-d", paths["test"],
                                     "-p", paths["pred"]]).finish()
    with open(paths["pred"]) as f:
        predicted = classes[np.array([int(float(line.split()[0])) for line in f]) - 1]
    return float(np.mean(predicted == problem.y_test))
