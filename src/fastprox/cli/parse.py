"""Parse sentences: train a DependencyParser on CoNLL-U treebanks, parse files with it.

  fastprox parse train FILE... [--test FILE] [--model OUT] [--templates NAMES] [--bits B]
                       [--projective]
  fastprox parse predict MODEL FILE [--out PRED.conllu]

``train`` reads CoNLL-U treebanks (multiword-token and empty-node lines skipped,
HEAD checked: every sentence a tree), makes each sentence's candidate arcs by
McDonald-style templates (fastprox.structured.arcs, hashed, one group per template
for the group penalties), trains with Vowpal Wabbit's progressive table on standard
error (an example is a sentence; its "items" are words, its "errors" the words the
model's tree gave a wrong head before the step, its "features" the candidate arcs)
and scores --test: the unlabelled attachment score with and without punctuation
(UPOS PUNCT). The defaults are those bench/dependency_parsing.py chose on UD English
EWT. The model file (--model) holds the parser and its arc templates, no pickle.
``predict`` writes the input back parsed: the predicted HEAD, one word on the root
(a CoNLL-U tree has one), DEPREL ``root`` for it and ``dep`` (UD's unspecified
relation) for the others, DEPS ``_`` (the parser does not label: the input's
relations beside other heads would pass for its own with a scorer), every other
column, and every comment, multiword-token and empty-node line, as it was; when the
file has gold heads, it prints the same scores (gold heads that are not a tree: a
warning naming the line, and no score).
"""
import time

from .._writes import check_output, naming
from ..structured._params import PARSER_DEFAULTS, PARSER_LOSSES
from .options import path
from .structured import (StructuredTable, add_learner_options, add_predict_action, add_train_action, check_learner,
                         learner_params, stderr_line)


def add_arguments(parser):
    actions, train = add_train_action(parser, __doc__, "parser", "training treebanks (CoNLL-U)")
    train.add_argument("--templates", metavar="NAMES", default=PARSER_DEFAULTS["templates"],
                       help="the arc templates: a set ('all'; 'table-1': McDonald et al.'s 76; 'mkl-ewt': the 46 "
                            "that online MKL chose on EWT; "
                            "'mkl-ewt-feats': those and the 14 of the UPOS|FEATS tags; 'mkl-ewt-feats-ctx': those and "
                            "20 more of the UPOS|FEATS tags beside a surrounding POS or a lemma; "
                            "'ewt-no-prefix': those less the 10 of 5-character prefixes, the default) or names "
                            "of fastprox.structured.arcs.TEMPLATES, comma-separated")
    train.add_argument("--bits", type=int, default=PARSER_DEFAULTS["bits"],
                       help="hash the arc features into 2^BITS columns")
    train.add_argument("--lowercase", action="store_true", help="lowercase the words")
    train.add_argument("--pos", choices=("UPOS", "XPOS", "UPOS+FEATS"), default=PARSER_DEFAULTS["pos"],
                       help="what the templates' POS atoms read: a field, or UPOS and FEATS joined")
    train.add_argument("--no-average", dest="average", action="store_const", const=False,
                       default=PARSER_DEFAULTS["average"],
                       help="keep the last iterate, not the averaged one (DependencyParser(average=False); "
                            "--average 0 says the same)")
    train.add_argument("--projective", action="store_true",
                       help="decode projective trees (Eisner) rather than any tree (Chu-Liu-Edmonds)")
    train.add_argument("--test", metavar="FILE", type=path, help="score the model on this treebank")
    train.add_argument("--model", metavar="OUT", type=path, help="write the model here")
    train.add_argument("--quiet", action="store_true", help="no table on standard error")
    add_learner_options(train, "DependencyParser", PARSER_DEFAULTS, PARSER_LOSSES, intercept=False)
    train.set_defaults(parse_run=run_train)
    add_predict_action(actions, parser, __doc__, "parse", run_predict, "the CoNLL-U file to parse")


def run(args):
    return args.parse_run(args)


def run_train(args):
    import numpy as np
    from ..structured.io import read_conllu
    from ..structured.parser import DependencyParser, check_arc_memory, save_parser
    for out in [args.model] if args.model else []:
        check_output(out, "--model", args.data + ([args.test] if args.test else []))
    templates = args.templates if "," not in args.templates else [t.strip() for t in args.templates.split(",")]
    model = DependencyParser(**learner_params(args, lambda: "templates"), projective=args.projective,
                             templates=templates, bits=args.bits, lowercase=args.lowercase, pos=args.pos)
    check_learner(model, model._arc_features)
    sentences = [s for path in args.data for s in read_conllu(path, heads=True)]
    if not sentences:
        raise ValueError(f"{args.data[0]}: no sentences to train on")
    test = list(read_conllu(args.test, heads=True)) if args.test else None     # (checked before the training)
    if test == []:
        raise ValueError(f"--test {args.test}: no sentences to score the model on")
    if test:
        check_arc_memory(test, model._arc_features())
    table = StructuredTable(None if args.quiet else stderr_line)
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    arcs = np.zeros(lengths.sum() + 1, dtype=np.int64)     # a word's share of its sentence's arcs
    arcs[1:] = np.cumsum(np.repeat(lengths + 1, lengths))
    start = time.process_time()
    model._fit_reporting(sentences, report=lambda order, losses, errors, words: table.report(
        order, losses, errors, words, arcs))
    if not args.quiet:
        table.summary(model.n_features_in_, time.process_time() - start)
    if args.model:
        with naming(args.model, f"--model {args.model}"):
            save_parser(model, args.model)
    if test is not None:
        for line in uas_lines(test, model.predict(test), "test"):
            stderr_line(line)
    return 0


def run_predict(args):
    from ..libsvm import source_name
    from ..structured.io import parsed, read_conllu, write_sequences
    from ..structured.io.conllu import gold_heads
    from ..structured.parser import load_parser
    if args.out != "-":
        check_output(args.out, "--out", [args.model, args.data])
    model, _ = load_parser(args.model)
    if model.features_ is None:
        raise ValueError(f"{args.model}: this parser was trained on arc rows, not on treebanks: it cannot "
                         "make the arcs of a CoNLL-U file")
    sentences, labelled = list(read_conllu(args.data)), True     # read once: it may be standard input
    try:
        for sentence in sentences:
            sentence.heads = gold_heads(sentence)
    except ValueError as e:     # no gold heads (or not a tree): parse it all the same
        labelled = False
        if not args.quiet and any(head != "_" for s in sentences for head in s["HEAD"]):
            stderr_line(f"fastprox: warning: {e}; the file is parsed, not scored")
    if not sentences:
        raise ValueError(f"{args.data}: no sentences to parse")
    predicted = model.predict(sentences)
    with naming(args.out, f"--out {args.out}"):
        write_sequences(args.out, map(parsed, sentences, predicted))
    if labelled and not args.quiet:
        for line in uas_lines(sentences, predicted, source_name(args.data)):
            stderr_line(line)
    return 0


def uas_lines(sentences, predicted, what):
    """The attachment scores of predicted heads against the sentences' gold heads,
    with every word and without punctuation (n/a where sentences of punctuation
    alone leave no word to score): lines to print."""
    from ..structured.metrics import PUNCT, uas
    gold = [s.heads for s in sentences]
    upos = [s["UPOS"] for s in sentences]
    words = sum(len(s) for s in sentences)
    scored = sum(tag != PUNCT for tags in upos for tag in tags)
    without = f"{100 * uas(gold, predicted, upos):.2f}%" if scored else "n/a"
    return [f"{what}: {len(sentences)} sentences, {words} words, UAS {100 * uas(gold, predicted):.2f}% "
            f"(all words), {without} (without punctuation)"]
