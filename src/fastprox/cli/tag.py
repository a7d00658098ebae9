"""Label sequences: train a SequenceTagger on files of sentences, tag files with it.

  fastprox tag train FILE... [--test FILE] [--model OUT] --format conll|conllu|crfsuite|libsvm
                     [--columns w,pos,y] [--label NAME] [--templates FILE]
  fastprox tag predict MODEL FILE [--out PRED]

``train`` reads the training files (CoNLL columns with a blank line between
sentences, the label in the last column unless --label says; CoNLL-U treebanks,
the label the field --label names, UPOS by default, or XPOS, or FEATS, UDPipe's
tags; CRFsuite's attribute files; LIBSVM with qid: as the sequence id), turns
CoNLL and CoNLL-U items into feature rows by templates (CRF++'s template files, or
the shipped sets: ``conll2000`` for CoNLL columns, ``ud-pos`` for CoNLL-U, which
reads FORM only, as a tagger of raw text must), trains with Vowpal Wabbit's
progressive table on standard error (an example is a sentence) and scores --test:
per-item accuracy (as conlleval counts it: a CoNLL ``-DOCSTART-`` line with the
file's columns is an item tagged right; a bare one is written back as read) and, for IOB chunk tags, conlleval's chunk precision, recall and F1.
The model file (--model) holds the tagger and its feature extractor, no pickle.
``predict`` writes the input back with the predicted label as a last column
(CoNLL), in the label's field (CoNLL-U: every other field, comment, multiword-token
and empty-node line as it was), or one label a line with a blank line between
sequences (CRFsuite, LIBSVM), and scores labelled input the same way. A file is
unlabelled when its lines lack the label column (CoNLL), its words the label
(``_``; CoNLL-U), or when none of its labels is one the model knows (CRFsuite's
items begin with a label, which ``crfsuite tag`` reads and scores only with -t:
placeholders; a file whose items all have one of the model's labels is scored, with
a note that placeholders would make the scores meaningless). A gold label the model
was not trained on stops the command before any work, naming its file and line;
``--unknown-labels wrong`` scores such items as errors instead, as conlleval does
(CoNLL-2000's test.txt has two I-LST items, a label train.txt lacks).
"""
import time

from .._writes import check_output, naming
from ..structured._params import SEQUENCE_LOSSES, TAGGER_DEFAULTS
from .options import OptionError, path
from .structured import (StructuredTable, add_learner_options, add_predict_action, add_train_action, check_learner,
                         learner_params, score_lines, stderr_line)

FORMATS = ("conll", "conllu", "crfsuite", "libsvm")
#: The CoNLL-U fields a tagger may predict (--label), UDPipe's tags.
CONLLU_LABELS = ("UPOS", "XPOS", "FEATS")
#: Why a training set of each format may hold no feature at all (`run_train` refuses it).
NO_FEATURE = {"conll": " (the templates gave none: see --templates and --min-count)",
              "conllu": " (the templates gave none: see --templates and --min-count)",
              "crfsuite": " (CRFsuite's lines are LABEL<TAB>ATTRIBUTE<TAB>...: its fields are separated "
                          "by tabs; columns separated by spaces are CoNLL's: --format conll)",
              "libsvm": " (every row is empty)"}


def add_arguments(parser):
    actions, train = add_train_action(parser, __doc__, "tagger", "training files")
    train.add_argument("--format", choices=FORMATS, required=True, help="the files' format")
    train.add_argument("--columns",
                       help="CoNLL: the columns' names, comma-separated, as templates name them (default: w,pos,y)")
    train.add_argument("--label", help="CoNLL: the label column (default: the last); CoNLL-U: the field to "
                                       f"predict, {', '.join(CONLLU_LABELS)} (default: UPOS)")
    train.add_argument("--templates", metavar="FILE", type=path,
                       help="a CRF++ template file (default: the shipped conll2000 set; CoNLL-U: ud-pos, FORM's "
                            "window, affixes and shapes); with CoNLL-U, %%x[row,col] numbers its ten fields from "
                            "0 (ID), FORM being 1")
    train.add_argument("--min-count", type=int, default=1, help="keep features seen at least this often")
    train.add_argument("--bits", type=int, help="hash features into 2^BITS columns (default: a vocabulary)")
    train.add_argument("--test", metavar="FILE", type=path, help="score the model on this labelled file")
    add_unknown_labels_option(train)
    train.add_argument("--model", metavar="OUT", type=path, help="write the model here")
    train.add_argument("--quiet", action="store_true", help="no table on standard error")
    add_learner_options(train, "SequenceTagger", TAGGER_DEFAULTS, SEQUENCE_LOSSES)
    train.set_defaults(tag_run=run_train)
    predict = add_predict_action(actions, parser, __doc__, "tag", run_predict, "the file to tag, in the model's format")
    add_unknown_labels_option(predict)


def add_unknown_labels_option(action):
    action.add_argument("--unknown-labels", choices=("stop", "wrong"), default="stop",
                        help="a gold label the model was not trained on: stop with its file and line (default), "
                             "or score its items as errors (as conlleval does)")


def run(args):
    return args.tag_run(args)


# ---------------------------------------------------------------------- reading
class Data:
    """A file's sequences as the tagger takes them: X, labels (None if the file has
    none), lengths, and what the writer needs (the sequences)."""

    def __init__(self, X, y, lengths, sequences):
        self.X, self.y, self.lengths, self.sequences = X, y, lengths, sequences


def _columns(text):
    names = tuple(n.strip() for n in text.split(","))
    if len(names) < 2 or not all(names):
        raise OptionError(f"--columns {text!r} must name at least two columns, comma-separated (w,pos,y)")
    if len(set(names)) != len(names):
        raise OptionError(f"--columns must not repeat a name: {text!r}")
    return names


def _read(paths, spec, labelled=True):
    """The sequences of ``paths`` under the reader settings ``spec`` (format, columns,
    label), as a list (CoNLL, CRFsuite) or (X, y, lengths) (LIBSVM)."""
    from ..structured.io import read_conll, read_conllu, read_crfsuite
    sequences = []
    for path in paths:
        if spec["format"] == "conll":
            columns = spec["columns"] if labelled else [c for c in spec["columns"] if c != spec["label"]]
            sequences += read_conll(path, columns, spec["label"] if labelled else None)
        elif spec["format"] == "conllu":
            sequences += read_conllu(path, spec["label"] if labelled else None)
        else:
            sequences += read_crfsuite(path)
    return sequences


def _libsvm(paths, n_features=None):
    import numpy as np
    import scipy.sparse as sp
    from ..structured.io import load_libsvm_sequences
    parts = [load_libsvm_sequences(path, n_features=n_features) for path in paths]
    width = max(p[0].shape[1] for p in parts)
    X = sp.vstack([sp.csr_matrix(p[0], shape=(p[0].shape[0], width)) for p in parts], format="csr")
    return X, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])


def _unlabelled_too(path, spec, quiet):
    """The sequences of a CoNLL or CoNLL-U file to tag: labelled (as trained) if its
    lines have the label column (CoNLL) or its words the label (CoNLL-U; FEATS, whose
    ``_`` is a value, unless every word's is ``_``), else without it; (sequences,
    labelled). A CoNLL-U file in which some words have the label and some not is
    tagged and not scored, with a warning naming the first word without one.

    A CoNLL-U file tagged for FEATS is read once, standard input too (FEATS's ``_``
    passes the labelled read, which fails only where the unlabelled one would); a
    file whose labelled read stops at a missing label is read again without it
    (standard input spooled into memory for that, `_rereadable`)."""
    from ..structured.io.sequence import without_labels
    from .errors import reworded
    if spec["format"] == "conllu" and spec["label"] == "FEATS":
        sequences = _read([path], spec)
        if all(v == "_" for s in sequences for v in s.labels):
            return without_labels(sequences), False
        return sequences, True
    source = _rereadable(path)
    try:
        return _read([_from_start(source)], spec), True
    except ValueError as labelled_error:
        try:
            sequences = _read([_from_start(source)], spec, labelled=False)
        except ValueError:
            raise labelled_error from None
        if spec["format"] == "conllu" and not quiet and any(v != "_" for s in sequences for v in s[spec["label"]]):
            stderr_line(f"fastprox: warning: {reworded(str(labelled_error), 'tag')}; the file is tagged, not scored")
        return sequences, False


def _rereadable(path):
    """``path``, or its bytes in memory under its name when reading uses it up
    (standard input, a pipe): a file to tag is read again when it turns out
    unlabelled (a second read of standard input found nothing, and the command wrote
    an empty file)."""
    import io
    from ..libsvm.sources import open_source, read_once, source_name
    if not read_once(path):
        return path
    with open_source(path) as f:
        spooled = io.BytesIO(f.read())
    spooled.name = source_name(path)
    return spooled


def _from_start(source):
    """``source`` ready to be read from its start (a path as it is)."""
    if hasattr(source, "seek"):
        source.seek(0)
    return source


# ---------------------------------------------------------------------- train
def run_train(args):
    import numpy as np
    from ..structured.io import labels_and_lengths
    from ..structured.tagger import SequenceTagger, save_tagger
    outputs = [args.model] if args.model else []
    for out in outputs:
        check_output(out, "--model", args.data + ([args.test] if args.test else []))
    spec = _reader_spec(args)
    features, extractor = None, None
    if args.format in ("conll", "conllu"):
        extractor = _template_features(args)
    elif args.format == "crfsuite":
        from ..structured.features import AttributeFeatures
        extractor = AttributeFeatures(bits=args.bits)
    check_learner(SequenceTagger(**learner_params(args)), extractor and extractor.check_params)
    if args.format == "libsvm":
        X, y, lengths = _libsvm(args.data)
        y = y.astype(np.int64) if np.all(y == np.round(y)) else y
    else:
        sequences = _read(args.data, spec)
        lengths = ()            # (no sequence: refused below, not by the extractor's fit, naming no file)
        if sequences:
            X = extractor.fit_transform(sequences)
            y, lengths = labels_and_lengths(sequences)
            features = extractor.to_dict()
    if len(lengths) == 0:
        raise ValueError(f"{args.data[0]}: no sequences to train on (the files hold no items)")
    if X.nnz == 0:
        raise ValueError(f"{args.data[0]}: no item has a feature, nothing to learn from{NO_FEATURE[args.format]}")
    test = None
    if args.test:                           # (read and checked before the training)
        test = _test_data(args.test, spec, extractor, X.shape[1])
        if len(test.lengths) == 0:
            raise ValueError(f"--test {args.test}: no sequences to score the model on")
        _check_unknown_labels(test, np.unique(y), args.test, args.unknown_labels)
    model = SequenceTagger(**learner_params(args, lambda: None if extractor is None else extractor.groups_))
    table = StructuredTable(None if args.quiet else stderr_line)
    start = time.process_time()
    model._fit_reporting(X, y, lengths, table.report)
    seconds = time.process_time() - start
    if not args.quiet:
        table.summary(X.shape[1], seconds)
    if args.model:
        with naming(args.model, f"--model {args.model}"):
            save_tagger(model, args.model, {"reader": spec, "features": features})
    if test is not None:
        for line in score_lines(test.y, model.predict(test.X, test.lengths), test.lengths, "test",
                                _docstarts(test, spec)):
            stderr_line(line)
    return 0


def _reader_spec(args):
    """How train reads its files, as the model file records it (extras.reader): the
    format, and CoNLL's columns and label or CoNLL-U's label field; OptionError for
    reader options that do not fit the format."""
    spec = {"format": args.format}
    if args.format == "conll":
        spec["columns"] = list(_columns(args.columns or "w,pos,y"))
        spec["label"] = args.label or spec["columns"][-1]
        if spec["label"] not in spec["columns"]:
            raise OptionError(f"--label {spec['label']!r} is not one of --columns {args.columns!r}")
    elif args.format == "conllu":
        if args.columns is not None:
            raise OptionError("--columns names CoNLL's columns; CoNLL-U's are its ten fields (--label chooses the "
                              "one to predict)")
        spec["label"] = args.label or "UPOS"
        if spec["label"] not in CONLLU_LABELS:
            raise OptionError(f"--label {spec['label']!r}: a CoNLL-U tagger predicts {', '.join(CONLLU_LABELS)}")
    else:
        for option, value in (("--columns", args.columns), ("--label", args.label), ("--templates", args.templates)):
            if value is not None:
                raise OptionError(f"{option} is for CoNLL and CoNLL-U files, whose items templates make rows of; "
                                  f"--format {args.format} gives the features itself")
    return spec


def _template_features(args):
    from ..structured.features import TemplateFeatures, read_crfpp
    from ..structured.io import FIELDS
    conllu = args.format == "conllu"
    templates = read_crfpp(args.templates) if args.templates else "ud-pos" if conllu else "conll2000"
    return TemplateFeatures(templates, columns=FIELDS if conllu else None, bits=args.bits, min_count=args.min_count)


def _test_data(path, spec, extractor, n_features):
    """A labelled file's Data, its rows by the training's extractor."""
    from ..structured.io import labels_and_lengths
    if spec["format"] == "libsvm":
        X, y, lengths = _libsvm([path], n_features)
        return Data(X[:, :n_features], y.astype(int) if (y == y.round()).all() else y, lengths, None)
    sequences = _read([path], spec)
    y, lengths = labels_and_lengths(sequences)
    return Data(extractor.transform(sequences), y, lengths, sequences)


def _check_unknown_labels(data, classes, path, policy):
    """Stop (``policy`` "stop": a ValueError) or warn ("wrong": a line on standard
    error) naming the file and line of the first gold label the model does not know
    and how many items have one: the model cannot predict them, and the scores count
    them wrong (as conlleval does; CoNLL-2000's test.txt has an I-LST that train.txt
    has not)."""
    import numpy as np
    known = set(np.asarray(classes).tolist())
    unknown = [label not in known for label in np.asarray(data.y).tolist()]
    if not any(unknown):
        return
    where = path
    if data.sequences is not None:
        first = unknown.index(True)
        for sequence in data.sequences:
            if first < len(sequence):
                where = f"{sequence.source}:{_item_line(sequence, first)}"
                break
            first -= len(sequence)
    label = np.asarray(data.y)[unknown.index(True)]
    what = f"{where}: label {str(label)!r} is not one the model was trained on ({sum(unknown)} item(s) have such labels)"
    if policy == "stop":
        raise ValueError(f"{what}: train on data that has it, or pass --unknown-labels wrong to score those "
                         "items as errors (as conlleval does)")
    stderr_line(f"fastprox: warning: {what}: the scores count them wrong (train on data that has them to "
                "predict them)")


def _item_line(sequence, i):
    """The line of item ``i`` of ``sequence`` in its file."""
    from ..structured.io import FIELDS
    from ..structured.io.conllu import word_lines
    if not hasattr(sequence, "columns"):
        return sequence.item_lines[i]
    return word_lines(sequence)[i] if sequence.names == FIELDS else sequence.line + i


# ---------------------------------------------------------------------- predict
def run_predict(args):
    from ..libsvm import source_name
    from ..structured.tagger import load_tagger
    check_output(args.out, "--out", [args.model, args.data]) if args.out != "-" else None
    model, extras = load_tagger(args.model)
    spec, features = extras.get("reader"), extras.get("features")
    if not isinstance(spec, dict) or spec.get("format") not in FORMATS or (
            spec["format"] == "conllu" and spec.get("label") not in CONLLU_LABELS):
        raise ValueError(f"{args.model}: the model file does not say how to read its input (extras.reader)")
    data, labelled = _predict_data(args.data, spec, features, model.n_features_in_, args.quiet)
    crfsuite = spec["format"] == "crfsuite" and len(data.y) > 0
    if labelled and crfsuite and not set(data.y.tolist()) & set(model.classes_.tolist()):
        labelled = False        # (placeholders: crfsuite tag reads a label first, scores it with -t only)
        if not args.quiet:
            stderr_line(f"fastprox: note: {args.data}: no label of the file is one the model knows "
                        f"({_some(data.y)}): read as placeholders, the file is tagged, not scored")
    if labelled:
        _check_unknown_labels(data, model.classes_, args.data, args.unknown_labels)
    predicted = model.predict(data.X, data.lengths)
    with naming(args.out, f"--out {args.out}"):
        _write(args.out, data, predicted, spec)
    if labelled and not args.quiet:
        if crfsuite and len(model.classes_) > 1 and (data.y == data.y[0]).all():
            stderr_line(f"fastprox: note: {args.data}: every item's label is {str(data.y[0])!r}, one of the "
                        f"model's: scored as gold labels; if they are placeholders (crfsuite tag scores only "
                        f"with -t), the scores mean nothing (--quiet prints none)")
        for line in score_lines(data.y, predicted, data.lengths, source_name(args.data), _docstarts(data, spec)):
            stderr_line(line)
    return 0


def _some(labels):
    """A few of the distinct ``labels``, quoted, for a message."""
    distinct = list(dict.fromkeys(labels.tolist()))
    return ", ".join(map(repr, distinct[:3])) + (", ..." if len(distinct) > 3 else "")


def _docstarts(data, spec):
    """The number of CoNLL ``-DOCSTART-`` lines with the items' columns kept with
    ``data``'s sequences: conlleval counts each as an item, tagged right (the written
    line repeats its label). A bare ``-DOCSTART-`` is written back as it was read and
    not counted: conlleval stops at it (a line with another number of columns)."""
    from ..structured.io.conll import docstart_columns
    if spec["format"] != "conll":
        return 0
    return sum(docstart_columns(line, len(s.names)) is not None for s in data.sequences
               for line in s.comments + s.closing)


def _predict_data(path, spec, features, n_features, quiet):
    """(Data, labelled) of the file to tag."""
    from ..structured.io import labels_and_lengths
    if spec["format"] == "libsvm":
        data = _test_data(path, spec, None, n_features)
        return data, True
    if spec["format"] in ("conll", "conllu"):
        from ..structured.features import TemplateFeatures
        sequences, labelled = _unlabelled_too(path, spec, quiet)
        extractor = TemplateFeatures.from_dict(features)
    else:
        from ..structured.features import AttributeFeatures
        sequences, labelled = _read([path], spec), True
        if sequences and not any(s.attributes for s in sequences):     # (each line's text a label)
            raise ValueError(f"{path}: no item has an attribute, nothing to tag by (the model reads CRFsuite's "
                             f"lines, LABEL<TAB>ATTRIBUTE<TAB>...; columns separated by spaces are CoNLL's, "
                             f"which a model of fastprox tag train --format conll reads)")
        extractor = AttributeFeatures.from_dict(features)
    y, lengths = labels_and_lengths(sequences) if labelled else (None, None)
    if lengths is None:
        import numpy as np
        lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    return Data(extractor.transform(sequences), y, lengths, sequences), labelled


def _write(out, data, predicted, spec):
    """The input with the predicted labels (CoNLL: a last column; CoNLL-U: in the label's
    field), or one label a line with a blank line after each sequence."""
    if spec["format"] in ("conll", "conllu"):
        from ..structured.io import write_sequences
        write_sequences(out, data.sequences, predicted, column=spec["label"] if spec["format"] == "conllu" else None)
        return
    import sys
    from .._writes import atomic_write
    starts = [0]
    for n in data.lengths:
        starts.append(starts[-1] + int(n))
    text = "".join("".join(f"{label}\n" for label in predicted[a:b]) + "\n" for a, b in zip(starts, starts[1:]))
    if out == "-":
        sys.stdout.write(text)
    else:
        atomic_write(out, lambda f: f.write(text.encode("utf-8")))
