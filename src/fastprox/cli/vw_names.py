"""Vowpal Wabbit's option names on fastprox's command line.

VW users type VW's options. Those fastprox spells the same but with dashes
(VW's ``--readable_model``, ``--holdout_off``, ``--early_terminate``...) are read
as fastprox's (`dashed`); ``-b`` is ``--hash-bits`` itself (options.py). Those
that fastprox spells otherwise, or does not need, are refused by argparse as any
unknown option is, and the one-line error then says what to give instead
(`hints`). docs/from_vw.md gives the whole table.

``fastprox tag`` and ``parse`` are what CRFsuite, CRF++, UDPipe and MaltParser
users type theirs at (`STRUCTURED_EQUIVALENTS`); of VW's, those of the learner's
options that these commands have too (`VW_LEARNER`): VW's other advice names
options they lack (VW's ``-t`` is not CRFsuite's, which scores).
"""

#: VW options -> what fastprox's command line does instead (their values, if any, follow them).
VW_EQUIVALENTS = {
    "--bit_precision": "use --hash-bits B (or -b B)",
    "--loss_function": "use --loss log for logistic (the default), --loss hinge, or --regression for squared",
    "-l": "use --eta0", "--learning_rate": "use --eta0",
    "--power_t": "use --schedule invsqrt (0.5) or --schedule inv (1), with --step gradient",
    "--sgd": "use --schedule invsqrt --step gradient",
    "--adaptive": "use --schedule adagrad",
    "--normalized": "use --schedule normalized (the default, with --step invariant)",
    "--invariant": "use --step invariant (the default)",
    "--l1": "use --penalty l1 --alpha L",
    "--l2": "use --penalty l2 --alpha L",
    "--ftrl": "use --update ftrl",
    "--oaa": "use --classes 1,2,...,K",
    "-c": "drop it: fastprox needs no cache", "--cache": "drop it: fastprox needs no cache",
    "--cache_file": "drop it: fastprox needs no cache",
    "-k": "drop it: fastprox keeps no cache", "--kill_cache": "drop it: fastprox keeps no cache",
    "-t": "use fastprox predict MODEL DATA", "--testonly": "use fastprox predict MODEL DATA",
    "--initial_regressor": "use -i MODEL", "--final_regressor": "use -f OUT",
    "--link": "use fastprox predict --proba for probabilities",
    "--binary": "drop it: fastprox predict writes labels",
    "--noconstant": "use --no-intercept",
    "--random_seed": "use --seed",
    "--initial_t": "use --t0 (the offset of the invsqrt and inv schedules)",
    "--save_resume": "drop it: a fastprox model file always holds what -i MODEL needs to continue",
    "-r": "use -p FILE (fastprox train: each example's raw score before its update)",
    "--raw_predictions": "use -p FILE (fastprox train: each example's raw score before its update)",
    "--audit": "use --invert-hash FILE (each weight with its feature's name) or --readable-model FILE",
    "--bfgs": "drop it: fastprox trains online; --passes N repeats the data (with VW's holdout)",
    "--conjugate_gradient": "drop it: fastprox trains online; --passes N repeats the data (with VW's holdout)",
    "--ect": "use --classes 1,2,...,K (one-vs-rest, or --multi-class multinomial)",
    "--csoaa": "fastprox reads one label per example, not costs: --classes 1,2,...,K",
}

#: What differs for ``fastprox predict`` (VW's ``vw -t -i MODEL -d DATA -p OUT``), which
#: takes the model and the data as its arguments, from `VW_EQUIVALENTS`.
VW_PREDICT = {
    "-t": "drop it: fastprox predict never trains", "--testonly": "drop it: fastprox predict never trains",
    "-i": "give the model as the first argument: fastprox predict MODEL DATA",
    "--initial_regressor": "give the model as the first argument: fastprox predict MODEL DATA",
    "-d": "give the data as the second argument: fastprox predict MODEL DATA",
    "--data": "give the data as the second argument: fastprox predict MODEL DATA",
    "-r": "use --raw (each row's raw score, written to -p FILE or standard output)",
    "--raw_predictions": "use --raw (each row's raw score, written to -p FILE or standard output)",
}


#: The VW options of `VW_EQUIVALENTS` whose advice holds for ``tag train`` and ``parse train`` too.
VW_LEARNER = ("-l", "--learning_rate", "--adaptive", "--l1", "--l2", "--ftrl", "--random_seed")

#: The structured tools' options -> (whose, what ``fastprox tag`` / ``parse`` does
#: instead), by command and action.
_TO_FILE = {"-o": ("crf_test's and MaltParser's", "use --out PRED"), "--output": ("UDPipe's", "use --out PRED"),
            "--outfile": ("UDPipe's", "use --out PRED")}
STRUCTURED_EQUIVALENTS = {
    ("tag", "train"): {
        "-b": ("VW's", "use --bits B"), "--bit_precision": ("VW's", "use --bits B"),
        "-m": ("CRFsuite's", "use --model OUT"),
        "-c": ("CRF++'s", "use --alpha, the penalty's strength (a larger C is a smaller --alpha)"),
        "-f": ("CRF++'s", "use --min-count N"),
        "-a": ("CRF++'s", "use --penalty l1 or l2 for CRF-L1 or CRF-L2, --loss hinge for MIRA"),
        "-p": ("CRF++'s", "drop it: training takes one thread"),
        "-t": ("CRF++'s", "drop it: fastprox info MODEL describes the model"),
    },
    ("tag", "predict"): {
        "-m": ("CRFsuite's and crf_test's", "give the model as the first argument: fastprox tag predict MODEL FILE"),
        "--model": ("UDPipe's", "give the model as the first argument: fastprox tag predict MODEL FILE"),
        "-t": ("CRFsuite's", "drop it: a labelled file is scored (--quiet: not)"),
        "--test": ("CRFsuite's", "drop it: a labelled file is scored (--quiet: not)"),
        "-q": ("CRFsuite's", "use --out /dev/null to write no labels (--quiet prints no scores)"),
        **_TO_FILE,
    },
    ("parse", "train"): {
        "-b": ("VW's", "use --bits B"), "--bit_precision": ("VW's", "use --bits B"),
        "-c": ("MaltParser's", "use --model OUT"),
        "-m": ("MaltParser's", "drop it: parse train learns"),
        "-i": ("MaltParser's", "give the treebank as the argument: fastprox parse train FILE"),
    },
    ("parse", "predict"): {
        "-c": ("MaltParser's", "give the model as the first argument: fastprox parse predict MODEL FILE"),
        "--model": ("UDPipe's", "give the model as the first argument: fastprox parse predict MODEL FILE"),
        "-m": ("MaltParser's", "drop it: parse predict parses"),
        "-i": ("MaltParser's", "give the file as the second argument: fastprox parse predict MODEL FILE"),
        **_TO_FILE,
    },
}


def dashed(args, options):
    """``args`` with each ``--name_with_underscores[=value]`` whose dashed spelling is
    one of ``options`` (a parser's option strings) spelled so, up to a bare ``--``."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if name.startswith("--") and "_" in name and name.replace("_", "-") in options:
            out[i] = name.replace("_", "-") + eq + value
    return out


def hints(message, command=None, action=None):
    """argparse's ``unrecognized arguments: ...`` message with, for each option of
    another tool in it, what fastprox's ``command`` (and ``action``, for ``tag`` and
    ``parse``) does instead: VW's (`VW_EQUIVALENTS`, for predict `VW_PREDICT`
    first), the structured tools' (`STRUCTURED_EQUIVALENTS`); other messages as
    they are."""
    prefix = "unrecognized arguments: "
    if not message.startswith(prefix):
        return message
    if command in ("tag", "parse"):
        table = {name: ("VW's", VW_EQUIVALENTS[name]) for name in VW_LEARNER} if action == "train" else {}
        table.update(STRUCTURED_EQUIVALENTS.get((command, action), {}))
    else:
        table = {name: ("VW's", advice) for name, advice in
                 ({**VW_EQUIVALENTS, **VW_PREDICT} if command == "predict" else VW_EQUIVALENTS).items()}
    known = [arg for arg in message[len(prefix):].split() if arg.partition("=")[0] in table]
    if not known:
        return message
    said = "; ".join(f"{table[arg.partition('=')[0]][0]} {arg}: {table[arg.partition('=')[0]][1]}" for arg in known)
    vw = any(table[arg.partition("=")[0]][0] == "VW's" for arg in known)
    return f"{message} ({said}{'; docs/from_vw.md' if vw else ''})"
