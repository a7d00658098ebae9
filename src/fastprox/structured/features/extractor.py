"""Feature extraction by templates: sequences in, one CSR row per item out.

:class:`TemplateFeatures` turns sequences (the readers' `Sequence` objects,
or mappings column name -> strings) into the learner's ``X``: the items of
all sequences stacked, one row each, one feature per template at most,
value 1. Each template owns a block of columns, so ``groups_`` (the
template of each column) lets the group penalties and MKL select whole
templates.

Two ways to number features:

- vocabulary (``bits=None``): ``fit`` grows a vocabulary of the features
  seen in training (at least ``min_count`` times: CRF++'s ``-f``), template
  after template (`keys` says their order within a template); ``transform`` drops
  features unseen in training. ``get_feature_names_out`` names them;
- hashing (``bits=B``): no vocabulary; every template gets a block of
  ``2^(B - ceil(log2 T))`` buckets for its ``T`` templates, a feature goes
  to a bucket by a stable hash of its values (`stable_hash`), so chunks of a
  stream and separate runs agree.

The work is done per column and per template with NumPy, never per feature
string: each column is factorized once per batch of items, atoms are
shifted code arrays with the sequence boundaries padded by placeholders,
and conjunctions are packed into exact int64 keys (`keys`) or folded hashes.
"""
from itertools import chain

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..._hashing import hash_indices
from .crfpp import parse_crfpp
from .defaults import as_templates
from .expressions import parse_expressions
from .items import Items, item_count
from .keys import KeyTable
from .params import block_bits, check_shared
from .rows import assemble, by_template
from .stable_hash import combine, seed
from .templates import Templates, placeholder
from .views import View

__all__ = ["TemplateFeatures"]

#: to_dict's format name and version.
FORMAT, VERSION = "fastprox.TemplateFeatures", 1


class TemplateFeatures(BaseEstimator):
    """Features of the items of sequences from templates.

    Parameters
    ----------
    templates : str, Templates or list of str, default="conll2000"
        A named template set (``"conll2000"``: CRF++'s chunking template;
        ``"ud-pos"``: a CoNLL-U word's tags from FORM), a
        CRF++ template file read by `read_crfpp`, or feature expressions such
        as ``["w[0]", "w[-1]|w[0]", "lower(w[0])", "suffix3(w[0])"]``.
    columns : sequence of str, optional
        The names CRF++'s ``%x[row,col]`` numbers: ``col`` is
        ``columns[col]``. By default the sequences' columns but the label
        (`Sequence.layout.features`). Expressions name columns themselves.
    bits : int or None, default=None
        None: number features with a vocabulary made by ``fit``. An integer:
        hash them into at most ``2**bits`` columns, a block per template.
    min_count : int, default=1
        Keep only the features seen at least this many times in training
        (vocabulary only; CRF++'s and crfsgd's ``-f``).
    dtype : {np.float64, np.float32}, default=np.float64
        The values' type.
    batch_items : int, default=65536
        Items processed at once (memory for temporaries grows with it).

    Attributes
    ----------
    templates_ : Templates
        The templates, column numbers resolved to names.
    n_features_ : int
        The number of columns of ``X``.
    groups_ : ndarray of int64
        The template of each column (0 for the first template...).
    offsets_ : ndarray of int64
        The first column of each template's block, and ``n_features_`` last.
    transitions_ : bool
        Whether the templates ask for label transitions (CRF++'s ``B``).
    """

    def __init__(self, templates="conll2000", *, columns=None, bits=None, min_count=1,
                 dtype=np.float64, batch_items=1 << 16):
        self.templates = templates
        self.columns = columns
        self.bits = bits
        self.min_count = min_count
        self.dtype = dtype
        self.batch_items = batch_items

    # --- the transformer ---------------------------------------------------------

    def fit(self, sequences, y=None):
        """Learn the vocabulary (or, hashing, only the templates' columns) from
        ``sequences``, an iterable of sequences read once. Returns self."""
        self._fit(sequences, transform=False)
        return self

    def fit_transform(self, sequences, y=None):
        """``fit`` then ``transform`` in one pass over ``sequences``: the rows of
        all their items, stacked (a CSR matrix of n_items x ``n_features_``)."""
        return self._fit(sequences, transform=True)

    def transform(self, sequences):
        """The rows of all items of ``sequences``, stacked in order: a CSR
        matrix of n_items x ``n_features_``, sorted indices, values 1;
        features unseen in training have no column (vocabulary)."""
        check_is_fitted(self, "n_features_")
        parts, n = [], 0
        for batch in self._batches(iter(sequences)):
            items = Items.of(batch, self.columns_)
            parts.append(by_template(self._columns(items)) + (None,))
            n += items.n
        return assemble(parts, n, self.n_features_, self.dtype, sorted_rows=True)

    def get_feature_names_out(self, input_features=None):
        """The name of each column (vocabulary only): the template's expansion,
        CRF++'s string for CRF++ templates (``U05:He/said``), ``EXPR=VALUES``
        for expressions (``w[-1]|w[0]=He|said``)."""
        check_is_fitted(self, "n_features_")
        if self.bits is not None:
            raise ValueError("hashed features have no names (a bucket holds any feature whose "
                             "hash lands there); use bits=None for a vocabulary")
        names = []
        for template, atoms, table in zip(self.templates_, self._atoms, self.tables_):
            codes = table.unpack(np.arange(len(table.keys)))
            words = [np.array(self.views_[v].vocabulary, dtype=object)[c]
                     for (v, _), c in zip(atoms, codes)]
            names += [template.feature_name(values) for values in zip(*words)] if atoms \
                else [template.feature_name(())] * len(table.keys)
        return np.array(names, dtype=object)

    # --- setting up from the first sequence -------------------------------------

    def check_params(self):
        """ValueError for ``bits``, ``min_count``, ``dtype`` or ``batch_items`` out of
        range or at odds (the fastprox command checks them before reading data)."""
        check_shared(self.dtype, self.bits, self.batch_items)
        if not (isinstance(self.min_count, (int, np.integer)) and self.min_count >= 1):
            raise ValueError(f"min_count must be a positive integer, not {self.min_count!r}")
        if self.bits is not None and self.min_count != 1:
            raise ValueError("min_count counts features in a vocabulary; with bits (hashing) "
                             "nothing is counted: pass min_count=1 or bits=None")

    def _setup(self, first):
        """Resolve the templates against the first sequence's columns; make the
        views and the placeholders' codes or hashes."""
        self.check_params()
        templates = as_templates(self.templates)
        label = getattr(getattr(first, "layout", None), "label", None)
        numbered = [t for t in templates if any(isinstance(a.column, int) for a in t.atoms)]
        names = self._numbered_columns(first, templates) if numbered else ()
        for t in numbered:
            for atom in t.atoms:
                if atom.column >= len(names):
                    raise ValueError(f"{templates.source}:{t.line}: {t.text!r} reads column "
                                     f"{atom.column}, but the items have {len(names)} "
                                     f"({', '.join(names)}; col counts from 0, the label not "
                                     f"included)")
        self._numbered = names
        resolved = [t.resolved(names) for t in templates]
        for t in resolved:
            for atom in t.atoms:
                if atom.column == label:
                    raise ValueError(f"{templates.source}: {t.text!r} reads the label column "
                                     f"{label!r}, which is not known when predicting; features "
                                     f"may read the other columns only")
                try:
                    first[atom.column]
                except (KeyError, IndexError, TypeError):
                    raise ValueError(f"{templates.source}: {t.text!r} reads column "
                                     f"{atom.column!r}, which the sequences do not have") from None
        self.templates_ = Templates(templates.kind, templates.lines, resolved, templates.transitions,
                                    templates.source)
        self.transitions_ = templates.transitions
        self._make_views()

    def _numbered_columns(self, first, templates):
        """The column names CRF++'s numbers refer to."""
        if self.columns is not None:
            names = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
            if not all(isinstance(n, str) for n in names):
                raise ValueError(f"columns must be a sequence of column names, not {self.columns!r}")
            return names
        layout = getattr(first, "layout", None)
        if layout is None:
            raise ValueError(f"{templates.source}: CRF++ templates number columns (%x[row,col]); "
                             f"pass columns=('w', 'pos', ...) to name them, since these "
                             f"sequences do not say their columns' order")
        return layout.features

    def _make_views(self, stored=None):
        """The views the templates read (each column-and-functions once; the
        ``stored`` ones, vocabularies included, when given), each template's
        atoms as (view, offset), and the placeholders' values."""
        views, atoms = {}, []
        for t in self.templates_:
            atoms.append([(views.setdefault((a.column, a.functions), len(views)), a.offset)
                          for a in t.atoms])
        if stored is not None and [view.key for view in stored] != list(views):
            raise ValueError("the stored views do not match the templates' columns and functions")
        self.views_ = stored if stored is not None else [View(*key) for key in views]
        self._atoms = atoms
        self.columns_ = tuple(dict.fromkeys(view.column for view in self.views_))
        reach = [[0, 0] for _ in self.views_]
        for template_atoms in atoms:
            for v, offset in template_atoms:
                reach[v][offset > 0] = max(reach[v][offset > 0], abs(offset))
        self._pads = []
        for view, (back, ahead) in zip(self.views_, reach):
            texts = ([placeholder(-k) for k in range(1, back + 1)],
                     [placeholder(k) for k in range(1, ahead + 1)])
            if self.bits is None:
                self._pads.append(tuple(view.codes(t, grow=True) for t in texts))
            else:
                self._pads.append(tuple(view.hashes(t) for t in texts))

    # --- numbering features ------------------------------------------------------

    def _batches(self, sequences):
        """Lists of consecutive sequences of about batch_items items."""
        batch, size = [], 0
        for sequence in sequences:
            batch.append(sequence)
            size += item_count(sequence)
            if size >= self.batch_items:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _view_values(self, items, grow=False):
        """Each view's value of every item: codes (vocabulary) or hashes."""
        out = []
        for view in self.views_:
            local, distinct = items.local[view.column]
            values = view.values(distinct)
            mapped = view.hashes(values) if self.bits is not None else view.codes(values, grow)
            out.append(mapped[local])
        return out

    def _atom_values(self, items, values, atoms):
        return [items.shifted(values[v], offset, *self._pads[v]) for v, offset in atoms]

    def _columns(self, items):
        """Each template's column of every item (-1 for none), after fitting."""
        values = self._view_values(items)
        columns = []
        for t, atoms in enumerate(self._atoms):
            atom_values = self._atom_values(items, values, atoms)
            if self.bits is None:
                key, valid = self.tables_[t].pack(atom_values, items.n)
                column = self.tables_[t].lookup(key, valid)
                columns.append(np.where(column >= 0, column + self.offsets_[t], -1))
            else:
                columns.append(self._buckets(t, atom_values, items.n) + self.offsets_[t])
        return columns

    def _buckets(self, t, atom_values, n):
        """Template ``t``'s bucket of each item: its values' folded hash,
        bucketed by fastprox.hashing's multiplicative hash."""
        h = np.full(n, seed(self.templates_.templates[t].text), np.uint64)
        for values in atom_values:
            h = combine(h, values)
        _, buckets, _, _ = hash_indices(np.ones(n), h.view(np.int64), np.arange(n + 1, dtype=np.int64),
                                        self._block_bits)
        return np.frombuffer(buckets, dtype=np.int32 if self._block_bits <= 31 else np.int64)

    def _fit(self, sequences, transform):
        sequences = iter(sequences)
        first = next(sequences, None)
        if first is None:
            raise ValueError("fit needs at least one sequence")
        self._setup(first)
        sequences = chain([first], sequences)
        if self.bits is not None:
            self._hashing_blocks()
            return self.transform(sequences) if transform else None
        values, lengths = [[] for _ in self.views_], []
        for batch in self._batches(sequences):
            items = Items.of(batch, self.columns_)
            lengths.append(items.lengths)
            for v, mapped in enumerate(self._view_values(items, grow=True)):
                values[v].append(mapped)
        items = Items(np.concatenate(lengths))
        values = [np.concatenate(v) for v in values]
        radices = [len(view.index) for view in self.views_]
        self.tables_, fitted = [], []
        for atoms in self._atoms:
            table = KeyTable([radices[v] for v, _ in atoms])
            key, valid = table.pack(self._atom_values(items, values, atoms), items.n, fitting=True)
            fitted.append(table.fit(key, valid, self.min_count))
            self.tables_.append(table)
        self._vocabulary_blocks()
        if not transform:
            return None
        columns = [np.where(column >= 0, column + offset, -1)
                   for column, offset in zip(fitted, self.offsets_)]
        return assemble([by_template(columns) + (None,)], items.n, self.n_features_, self.dtype,
                        sorted_rows=True)

    def _vocabulary_blocks(self):
        sizes = np.array([len(table.keys) for table in self.tables_], np.int64)
        self._blocks(sizes)

    def _hashing_blocks(self):
        self._block_bits = block_bits(self.bits, len(self._atoms))
        self._blocks(np.full(len(self._atoms), 1 << self._block_bits, np.int64))

    def _blocks(self, sizes):
        self.offsets_ = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_features_ = int(self.offsets_[-1])

    @property
    def groups_(self):
        """The template of each column (int64, length ``n_features_``), made when
        read: a wide hashed matrix need not hold it."""
        check_is_fitted(self, "n_features_")
        return np.repeat(np.arange(len(self.offsets_) - 1, dtype=np.int64), np.diff(self.offsets_))

    # --- plain-data state ----------------------------------------------------------

    def _check_tables(self, stored_views):
        """ValueError unless the vocabularies and tables read back fit the
        templates: one table per template, radices equal to the vocabularies'
        sizes (placeholders included, no repeated value), keys as `KeyTable.check`."""
        for view, stored in zip(self.views_, stored_views):
            if len(view.index) != len(stored["vocabulary"]):
                raise ValueError(f"the vocabulary of {view!r} repeats values or lacks placeholders")
        if len(self.tables_) != len(self._atoms):
            raise ValueError(f"{len(self.tables_)} tables for {len(self._atoms)} templates")
        for template, atoms, table in zip(self.templates_, self._atoms, self.tables_):
            if table.radices != [len(self.views_[v].index) for v, _ in atoms]:
                raise ValueError(f"the radices of {template.text!r} do not match its vocabularies")
            table.check()

    def to_dict(self):
        """The fitted state as plain data: str, int, bool, None, lists, dicts and
        NumPy arrays (int64), no pickle; :meth:`from_dict` rebuilds it."""
        check_is_fitted(self, "n_features_")
        state = {"format": FORMAT, "version": VERSION,
                 "params": {"templates_kind": self.templates_.kind,
                            "templates": list(self.templates_.lines),
                            "templates_source": self.templates_.source,
                            "columns": (None if self.columns is None else [self.columns]
                                        if isinstance(self.columns, str) else list(self.columns)),
                            "bits": None if self.bits is None else int(self.bits),
                            "min_count": int(self.min_count),
                            "dtype": np.dtype(self.dtype).name,
                            "batch_items": int(self.batch_items)},
                 "numbered_columns": list(self._numbered),
                 "views": [{"column": view.column, "functions": list(view.functions),
                            "vocabulary": view.vocabulary if self.bits is None else []}
                           for view in self.views_]}
        if self.bits is None:
            state["tables"] = [{"radices": table.radices,
                                "fold_at": sorted(table.folds),
                                "fold_keys": [table.folds[a] for a in sorted(table.folds)],
                                "keys": table.keys}
                               for table in self.tables_]
        return state

    @classmethod
    def from_dict(cls, state):
        """The fitted extractor whose :meth:`to_dict` gave ``state``."""
        try:
            if state["format"] != FORMAT or state["version"] != VERSION:
                raise ValueError(f"not a {FORMAT} version {VERSION} state: format "
                                 f"{state['format']!r}, version {state['version']!r}")
            p = state["params"]
            if p["templates_kind"] not in ("crfpp", "expressions"):
                raise ValueError(f"unknown templates_kind {p['templates_kind']!r}")
            templates = (parse_expressions(p["templates"], p["templates_source"])
                         if p["templates_kind"] == "expressions" else
                         parse_crfpp("\n".join(p["templates"]), p["templates_source"]))
            self = cls(templates, columns=p["columns"], bits=p["bits"], min_count=p["min_count"],
                       dtype=np.dtype(p["dtype"]).type, batch_items=p["batch_items"])
            self.check_params()
            self._numbered = tuple(state["numbered_columns"])
            resolved = [t.resolved(self._numbered) for t in templates]
            self.templates_ = Templates(templates.kind, templates.lines, resolved,
                                        templates.transitions, templates.source)
            self.transitions_ = templates.transitions
            self._make_views([View(v["column"], v["functions"], v["vocabulary"])
                              for v in state["views"]])
            if self.bits is None:
                self.tables_ = [KeyTable(t["radices"], dict(zip(t["fold_at"], t["fold_keys"])),
                                         t["keys"]) for t in state["tables"]]
                self._check_tables(state["views"])
                self._vocabulary_blocks()
            else:
                self._hashing_blocks()
        except (KeyError, TypeError, IndexError) as e:
            raise ValueError(f"incomplete or malformed {FORMAT} state ({e!r}); it must come "
                             f"from TemplateFeatures.to_dict") from None
        return self
