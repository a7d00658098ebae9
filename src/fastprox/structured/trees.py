"""Checks on dependency trees given as head arrays.

A sentence of ``n`` words is a tree when ``heads[m - 1]``, the head of word
``m`` (words are numbered from 1, 0 is the root), lies in ``0..n``, differs
from ``m``, and following heads from any word reaches 0: no cycle. Several
words may hang from the root, as the arc-factored decoders allow.
"""

__all__ = ["find_cycle"]


def find_cycle(heads):
    """The words of a cycle of ``heads``, each followed by its head, or None.

    ``heads`` holds each word's head, all in ``0..n``; a word that is its own
    head is a cycle of one word. O(n): each word is walked once.

    Examples
    --------
    >>> find_cycle([2, 0, 2])
    >>> find_cycle([2, 3, 1])
    [1, 2, 3]
    """
    n = len(heads)
    state = [0] * (n + 1)       # 0 unseen, 1 on the current walk, 2 reaches the root
    state[0] = 2
    for start in range(1, n + 1):
        walk, m = [], start
        while state[m] == 0:
            state[m] = 1
            walk.append(m)
            m = int(heads[m - 1])
        if state[m] == 1:       # the walk came back to itself
            return walk[walk.index(m):]
        for w in walk:
            state[w] = 2
    return None

