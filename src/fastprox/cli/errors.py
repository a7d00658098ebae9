"""Error messages in the command line's words.

The library's checks (fastprox._validation, the LIBSVM reader, the kernel)
name the fix in Python's terms: ``alpha=-1.0 must be >= 0.0``, ``pass
allow_nonfinite=True``, ``pass a larger n_features``. `reworded` turns such a
message into the options of ``fastprox train``, ``predict`` and ``info``:
``param=value`` and ``param in (...)`` become ``--option value`` and
``--option in (...)``, as does ``param must`` opening the message; the reader's
advice the flags that follow it; a CSV file, a file in Vowpal Wabbit's text
format (a '|' in its token or its first line: `_vw_text`), and sequence and tree
data (CoNLL, CRFsuite, CoNLL-U: `_token_table`) are recognized as such. The structured commands' (``tag``, ``parse``)
messages take their learner's options the same way (``max_iter=0`` is
``--passes 0``: fastprox.cli.structured.LEARNER_OPTIONS).
"""
import re

#: Reader advice -> the command line's (fastprox.libsvm's messages).
_PHRASES = (
    ("pass a larger n_features, or None to take it from the file",
     "give a larger --n-features, or none to let the model grow with the data"),
    ("pass allow_nonfinite=True to accept NaN and infinity",
     "fastprox takes finite numbers only: remove or replace NaN and infinity"),
    ("pass zero_based=True (or 'auto') if the file's indices start at 0",
     "give --zero-based if the file's indices start at 0"),
    ("zero_based='auto' took the file as one-based", "the file was taken as one-based"),
    ("pass zero_based=True to read it as zero-based", "give --zero-based to read it as zero-based"),
    ("or pass a larger max_line_bytes", "or give a larger --max-line-bytes"),
    ("hash them into fewer buckets,", "hash them into fewer buckets with --hash-bits,"),
    ("or lower eta0)", "or lower --eta0)"),
    ("drop groups or", "drop --groups or"),
    ("drop group_weights or", "drop --group-weights or"),
    ("groups must be a vector", "--groups must be a vector"),
    ("groups must hold integer", "--groups must hold integer"),
    ("groups ids must be", "--groups ids must be"),
    ("or turn average off.", "or drop --average."),
)

#: The structured readers' and extractors' advice -> the commands' (tag, parse).
_STRUCTURED_PHRASES = (
    ("None (a vocabulary) or an integer", "an integer"),
    ("min_count=1 or bits=None", "min_count=1 or drop --bits"),     # (no --bits value means None)
    ("; to read unlabelled data, leave the label out of columns and pass label=None",
     " (fastprox tag predict reads files whose lines all leave it out)"),
    (", or pass label=None to read unlabelled data", " (fastprox tag predict reads files whose words all leave it out)"),
    ("or turn average off.", "or turn averaging off: --average 0 (parse train averages by default)."),
)

#: What each structured command can do about a model too large for memory (a
#: MemoryError, or ModelTooLarge's "use fewer features (...)", which names train's
#: fixes): they hold their data, so no --chunk-rows; their model's width is --bits,
#: or tag's vocabulary.
LESS_MEMORY = {"tag": "use fewer features (a smaller --bits, or a larger --min-count for a vocabulary)",
               "parse": "use fewer features (a smaller --bits)"}

#: Parameters as the library names them -> options (train's estimator options and more).
_OPTIONS = {"n_features": "--n-features", "random_state": "--seed", "groups": "--groups",
            "group_weights": "--group-weights", "classes": "--classes", "zero_based": "--zero-based",
            "max_line_bytes": "--max-line-bytes", "sync_rows": "--sync-rows"}

_CSV = re.compile(r"multi-label row \(label '([^']*)'\) is not supported; give one label per line")
_VW = re.compile(r"(feature|label|index|value) '\S*\|\S*'")     # (a token: no spaces, quotes maybe)
_TOO_LARGE = re.compile(r"(index '[^']*' is too large \(at most \d+\); renumber the features below that)")
#: The LIBSVM reader's syntax errors that a file of tokens (`_token_table`) gives.
_SYNTAX = re.compile(r"(?P<source>.+?):\d+: (label '\S*' is not a number|feature '\S*' has no ':')")
#: What a file of tokens is, and the command that reads it (`_token_table`'s kinds).
_TOKEN_TABLES = {
    "conllu": ("CoNLL-U dependency trees (one word a line, ten columns separated by tabs)",
               "fastprox parse train reads them"),
    "crfsuite": ("CRFsuite items (one token a line: its label, then attributes, separated by tabs)",
                 "fastprox tag train FILE --format crfsuite reads them"),
    "conll": ("CoNLL columns (one token a line, its label last)", "fastprox tag train FILE --format conll reads them"),
}
_CONLLU_ID = re.compile(r"\d+([-.]\d+)?")
#: The tag readers' refusal of a line's width: the CoNLL reader's (columns) or the CoNLL-U one's (fields).
_TAG_WIDTH = re.compile(r"(?P<head>(?P<source>.+?):\d+: \d+ (?:(?P<conll>columns?)|tab-separated fields?), "
                        r"expected \d+ \([^)]*\))")
#: What a file of another format than the tag reader's is, and the command that reads it.
_TAG_FORMATS = {"conllu": "CoNLL-U (ten fields separated by tabs), which tag train --format conllu reads",
                "conll": "CoNLL columns (separated by spaces), which tag train --format conll reads",
                "crfsuite": "CRFsuite items (a label, then attributes, separated by tabs), which tag train "
                            "--format crfsuite reads"}


def reworded(message, command="train"):
    """``message`` with the library's parameters and advice replaced by ``command``'s
    options (``tag`` and ``parse``: the learner's only)."""
    if command in _STRUCTURED:
        from .._validation import FEWER_FEATURES
        message = message.replace(FEWER_FEATURES, LESS_MEMORY[command])
        for old, new in _STRUCTURED_PHRASES:
            message = message.replace(old, new)
        if command == "tag" and (width := _TAG_WIDTH.match(message)):
            kind = _token_table(width.group("source"))
            if kind is not None and kind != ("conll" if width.group("conll") else "conllu"):
                message = f"{width.group('head')}: this looks like {_TAG_FORMATS[kind]}"
        return _named(message, *_STRUCTURED_NAMES)
    for old, new in _PHRASES:
        message = message.replace(old, new)
    message = _CSV.sub(r"label '\1' holds commas: this looks like a CSV file (commas), or a multi-label "
                       r"row; fastprox reads LIBSVM text, one label per line: LABEL INDEX:VALUE ...",
                       message)
    syntax = _SYNTAX.match(message)
    if _VW.search(message) or syntax and _vw_text(syntax.group("source")):    # (the reader's advice, replaced)
        message = (message.split(";")[0] + ": this looks like Vowpal Wabbit's text format ('|'), "
                   "not LIBSVM text (LABEL INDEX:VALUE ...): give --format vw")
    elif syntax and (kind := _token_table(syntax.group("source"))):
        what, fix = _TOKEN_TABLES[kind]
        message = f"{message.split(';')[0]}: this looks like {what}, not LIBSVM text (LABEL INDEX:VALUE ...): {fix}"
    message = _TOO_LARGE.sub(r"\1 (--hash-bits hashes the indices up to it, no larger), or write them "
                             r"as Vowpal Wabbit feature names, which --format vw hashes whatever their length",
                             message)
    return _named(message, *_NAMES)


def _vw_text(source):
    """Whether the data file ``source``'s first line of data holds a '|', as VW text's
    do (`vw.reader.sniffed_format`): its LIBSVM syntax error may name a token before
    it (VW's importance weight, ``1 2.0 |a x``; a tag, ``1 'id|a x``). A source read
    once (standard input, a pipe), or one that cannot be read, is not."""
    from ..vw.reader import sniffed_format
    try:
        return sniffed_format(source) == "vw"
    except (OSError, ValueError):
        return False


def _token_table(source):
    """What the data file ``source`` holds if its first line of data reads as one
    token of sequence or tree data (a key of _TOKEN_TABLES), else None: a CoNLL-U
    word (ten fields separated by tabs, the first an id), CRFsuite's item (fields
    separated by tabs, every one after the label an attribute with '='), CoNLL's
    columns (two words or more, none after the first with LIBSVM's ':'). Comments
    ('#'), blank lines and CoNLL's -DOCSTART- are passed over; a source read once
    (standard input, a pipe) is not read again: None."""
    from ..libsvm.sources import open_source, read_head, read_once
    try:
        if read_once(source):
            return None
        with open_source(source) as f:
            head = read_head(f, 1 << 16)
    except (OSError, ValueError):
        return None
    for line in head.decode("utf-8", "replace").lstrip("\ufeff").splitlines():
        if not line.strip() or line.startswith(("#", "-DOCSTART-")):
            continue
        fields, words = line.split("\t"), line.split()
        if len(fields) == 10 and _CONLLU_ID.fullmatch(fields[0]):
            return "conllu"
        if len(fields) >= 2 and all("=" in field for field in fields[1:]):
            return "crfsuite"
        return "conll" if len(words) >= 2 and not any(":" in word for word in words[1:]) else None
    return None


def _options():
    """Parameter -> option, train's estimator options included."""
    from .train import ESTIMATOR_OPTIONS
    options = {param: "--" + option.replace("_", "-") for option, param in ESTIMATOR_OPTIONS.items()}
    return {**options, **_OPTIONS}


def _structured_options():
    """Parameter -> option, of the structured commands' learners."""
    from .structured import LEARNER_OPTIONS
    return {param: "--" + option.replace("_", "-") for option, param in LEARNER_OPTIONS.items()}


def _names(option_of):
    """(the pattern of the parameters of ``option_of``, ``option_of``): name=VALUE
    ('quoted' or bare) or name= alone; "name in"; names with an underscore alone."""
    return re.compile(r"\b(%s)(?:=('[^']*'|[^\s,;)]+)?|(?= in )|\b)" % "|".join(
        sorted(option_of, key=len, reverse=True))), option_of


#: The commands whose messages take the learner's options only.
_STRUCTURED = ("tag", "parse")
_NAMES = _names(_options())
_STRUCTURED_NAMES = _names(_structured_options())


def _named(message, pattern, option_of):
    """``message`` with each parameter that ``pattern`` finds replaced by its option."""
    return pattern.sub(lambda match: _option(match, option_of), message)


def _option(match, option_of):
    """The replacement of one parameter: its option, and its value unquoted."""
    name, value = match.group(1), match.group(2)
    text = match.group(0)
    opening = match.start() == 0 and match.string[match.end():].startswith(" must")
    if ("=" not in text and " in " not in match.string[match.end():match.end() + 4] and "_" not in name
            and not opening):
        return text         # an English word ("the loss", "the penalty"): left alone
    option = option_of[name]
    return option if not value else f"{option} {value.strip(chr(39))}"
