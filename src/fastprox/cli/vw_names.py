"""Vowpal Wabbit's option names on fastprox's command line.

VW users type VW's options. Those fastprox spells the same but with dashes
(VW's ``--readable_model``, ``--holdout_off``, ``--early_terminate``...) are read
as fastprox's (`dashed`); ``-b`` is ``--hash-bits`` itself (options.py). Those
that fastprox spells otherwise, or does not need, are refused by argparse as any
unknown option is, and the one-line error then says what to give instead
(`hints`). docs/from_vw.md gives the whole table.
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


def hints(message, command=None):
    """argparse's ``unrecognized arguments: ...`` message with, for each VW option
    in it, what fastprox's ``command`` does instead (`VW_EQUIVALENTS`, for predict
    `VW_PREDICT` first); other messages as they are."""
    prefix = "unrecognized arguments: "
    if not message.startswith(prefix):
        return message
    table = {**VW_EQUIVALENTS, **VW_PREDICT} if command == "predict" else VW_EQUIVALENTS
    known = [arg for arg in message[len(prefix):].split() if arg.partition("=")[0] in table]
    if not known:
        return message
    said = "; ".join(f"VW's {arg}: {table[arg.partition('=')[0]]}" for arg in known)
    return f"{message} ({said}; docs/from_vw.md)"
