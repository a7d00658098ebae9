"""Brute-force references for the structured decoders, written from the contract's
"Structured outputs" (docs/contract.md) with NumPy and itertools alone: every label
sequence, every tree, enumerated and scored. For short inputs only (n <= 5).

Sequences: ``score(y) = sum_i E[i, y_i] + s[y_0] + sum_{i>=1} A[y_{i-1}, y_i] + e[y_{n-1}]``.
Trees: ``heads`` of length n + 1, ``heads[0] = -1``, ``heads[m]`` the head of word m;
``score = sum_m S[heads[m], m]``.
"""
import itertools
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def label_sequences(n, K):
    """Every sequence of n labels in 0..K-1, one a row (K**n rows; one empty row for n = 0)."""
    return np.array(list(itertools.product(range(K), repeat=n)), dtype=np.int64).reshape(K ** n, n)


def sequence_scores(E, A, s, e, Y):
    """The contract's score of each row of Y (0.0 for n = 0)."""
    n = Y.shape[1]
    if n == 0:
        return np.zeros(len(Y))
    emissions = E[np.arange(n), Y].sum(axis=1)
    transitions = A[Y[:, :-1], Y[:, 1:]].sum(axis=1)
    return emissions + s[Y[:, 0]] + transitions + e[Y[:, -1]]


def hamming(gold, Y):
    """Delta(gold, y) for each row y of Y: how many positions differ."""
    return (Y != np.asarray(gold)).sum(axis=1)


def smallest_from_the_end(Y):
    """The row of Y that is smallest compared from its last item backwards (the
    contract's Viterbi tie rule)."""
    return min(Y.tolist(), key=lambda y: y[::-1])


def best_sequences(E, A, s, e, gold=None):
    """(max over all sequences of score (+ Delta(gold, .) when gold is given), the
    rows reaching it exactly)."""
    n, K = E.shape
    Y = label_sequences(n, K)
    scores = sequence_scores(E, A, s, e, Y)
    if gold is not None:
        scores = scores + hamming(gold, Y)
    best = scores.max()
    return best, Y[scores == best]


def log_sum_exp(v):
    """log sum exp v with the maximum subtracted."""
    m = v.max()
    return m + np.log(np.exp(v - m).sum())


def crf_marginals(E, A, s, e):
    """(log Z, mu (n x K), xi (K x K)) by summing p(y) = exp(score(y) - log Z) over
    all sequences: mu[i, k] = P(y_i = k), xi[j, k] = sum_{i>=1} P(y_{i-1} = j, y_i = k)."""
    n, K = E.shape
    Y = label_sequences(n, K)
    scores = sequence_scores(E, A, s, e, Y)
    logZ = log_sum_exp(scores)
    p = np.exp(scores - logZ)
    mu = np.zeros((n, K))
    xi = np.zeros((K, K))
    for i in range(n):
        np.add.at(mu[i], Y[:, i], p)
        if i >= 1:
            np.add.at(xi, (Y[:, i - 1], Y[:, i]), p)
    return logZ, mu, xi


def is_tree(heads):
    """Whether heads (heads[0] = -1) give every word one head, none itself, and every
    word reaches the root 0."""
    n = len(heads) - 1
    for m in range(1, n + 1):
        seen = set()
        x = m
        while x != 0:
            if x in seen or not 0 <= heads[x] <= n or heads[x] == x:
                return False
            seen.add(x)
            x = heads[x]
    return True


def is_projective(heads):
    """Whether every word strictly between a head and its modifier descends from that
    head (the root 0 leftmost)."""
    def descends(x, h):
        while x != 0 and x != h:
            x = heads[x]
        return x == h

    for m in range(1, len(heads)):
        h = heads[m]
        if not all(descends(x, h) for x in range(min(h, m) + 1, max(h, m))):
            return False
    return True


@lru_cache(maxsize=None)
def trees(n, projective=False):
    """Every tree over words 1..n rooted at 0 (the projective ones alone when asked),
    as rows of heads, heads[0] = -1."""
    rows = []
    for assignment in itertools.product(range(n + 1), repeat=n):
        heads = (-1,) + assignment
        if is_tree(heads) and (not projective or is_projective(heads)):
            rows.append(heads)
    return np.array(rows, dtype=np.int64).reshape(len(rows), n + 1)


def tree_scores(S, H):
    """sum_m S[H[r, m], m] for each row r of heads H."""
    n = H.shape[1] - 1
    m = np.arange(1, n + 1)
    return S[H[:, 1:], m].sum(axis=1)


def best_tree_score(S, gold=None, projective=False, one_root=False):
    """max over all (projective) trees of score (+ Delta(gold, .) when gold is given);
    with ``one_root``, over the trees whose root heads one word."""
    n = S.shape[0] - 1
    H = trees(n, projective)
    if one_root:
        H = H[(H[:, 1:] == 0).sum(axis=1) == 1]
    scores = tree_scores(S, H)
    if gold is not None:
        scores = scores + hamming(np.asarray(gold)[1:], H[:, 1:])
    return scores.max()
