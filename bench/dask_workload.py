"""The Dask benchmarks' workload: the synthetic files, the rule every run trains,
the commands that train it on one machine and on a cluster, and the environment the
user started the benchmark in. `bench.dask`, `bench.dask_pinned`,
`bench.dask_timeline`, `bench.dask_sim`, `bench.dask_cluster` and
`bench.stream_memory` share it."""
import os
import subprocess
import sys

import numpy as np

from bench.throughput import zipf_text

#: The features' ids and the distinct features per row of the files.
D = 1 << 20
PER_ROW = 60

#: The environment as the user gave it, read before any cluster starts: Dask's nanny
#: writes its workers' variables (``distributed.nanny.pre-spawn-environ``, among them
#: MALLOC_TRIM_THRESHOLD_=65536) into the environment of the process that starts them,
#: where every later child would inherit them. `fastprox train` and the client
#: processes run in this one, as a user's do (docs/dask.md: the allocator's thresholds).
USER_ENVIRON = dict(os.environ)


#: The rule every run trains: FOBOS + AdaGrad, the gradient step, l1 with alpha 1e-6
#: (as the estimator's and the command line's options).
RULE = dict(schedule="adagrad", step="gradient", alpha=1e-6)
RULE_OPTIONS = tuple(option for key, value in RULE.items() for option in (f"--{key}", str(value)))


CLUSTER_RUN = r"""
import sys, time, json
from distributed import Client
from fastprox import ProxClassifier, save_model
from fastprox.dask import fit
RULE = %r
address, passes, model, files = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
client = Client(address)
start, cpu = time.perf_counter(), time.process_time()
est = fit(ProxClassifier(**RULE), files, client=client, passes=passes)
save_model(est, model)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "rounds": est.cluster_rounds_}))
""" % (RULE,)


def passes_options(passes):
    """`fastprox train`'s options for ``passes`` passes over every row: from 2 passes
    on it holds every 10th row out unless told --holdout-off (the cluster trains on
    every row: the same rows, so the same model to compare)."""
    return ("--passes", str(passes)) + (("--holdout-off",) if passes > 1 else ())


def train_command(files, passes, model):
    """The command line of one machine's (or one half's) `fastprox train` of ``files``,
    ``passes`` passes by the benchmark's rule, to the model file ``model``, quiet."""
    return [sys.executable, "-c", "import sys; from fastprox.cli import main; sys.exit(main())",
            "train", *map(str, files), *passes_options(passes), *RULE_OPTIONS, "--model", str(model), "--quiet"]


def generate(directory, files, rows, seed=0, test_rows=100_000):
    """The training files and the test file of ``test_rows`` rows (kept if already there); their paths."""
    from fastprox import dump_libsvm
    directory.mkdir(parents=True, exist_ok=True)
    truth_rng = np.random.default_rng(12345)
    truth = truth_rng.normal(size=D) * (truth_rng.random(D) < 0.1)
    paths = [directory / f"part-{i:03d}.svm" for i in range(files)] + [directory / "test.svm"]
    for i, path in enumerate(paths):
        if path.exists():
            continue
        n, file_seed = (rows, seed + 1 + i) if i < files else (test_rows, seed + 999)
        X, _ = zipf_text(n, D, PER_ROW, file_seed)
        rank = np.argsort(np.random.default_rng(file_seed).permutation(D))   # id -> its Zipf rank
        X.indices = rank[X.indices].astype(X.indices.dtype)      # one rank -> id map for every file
        X.has_sorted_indices = False
        X.sort_indices()
        rng = np.random.default_rng(10_000 + i)
        y = np.where(X @ truth > 0, 1, -1)
        flip = rng.random(n) < 0.1
        y[flip] = -y[flip]
        dump_libsvm(X, y, path)
    return paths[:-1], paths[-1]


def uptime():
    """The load averages as `uptime` prints them."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def accuracy(model, test):
    """The test accuracy of the saved model file ``model`` on the LIBSVM file ``test``."""
    from fastprox import load_libsvm, load_model
    est = load_model(model)
    X, y = load_libsvm(test, n_features=est.n_features_in_)
    return est.score(X, y)
