"""Readers and writer of sequence data (fastprox.structured.io): CoNLL columns,
CoNLL-U, CRFsuite attributes, LIBSVM with qid; round trips, compressed and
standard input, and every malformed input's message (file, line, fix)."""
import bz2
import gzip
import io
import lzma
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastprox import dump_libsvm
from fastprox.structured.io import (FIELDS, iter_libsvm_sequences, labels_and_lengths, load_libsvm_sequences,
                                    parsed, read_conll, read_conllu, read_crfsuite, write_sequences)
from fastprox.structured.trees import find_cycle

CONLL = """\
Confidence NN B-NP
in IN B-PP
the DT B-NP

He PRP B-NP
reckons VBZ B-VP
"""

CONLL2003 = """\
-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O

-DOCSTART- -X- -X- O

Peter NNP B-NP B-PER

"""

CONLLU = """\
# sent_id = s1
# text = Don't go.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t0:root\tSpaceAfter=No
3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

# sent_id = s2
1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t0:root\t_

"""


def write(tmp_path, text, name="data.txt", opener=open):
    path = tmp_path / name
    with opener(path, "wb") as f:
        f.write(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def error(call):
    """The message of the ValueError that consuming ``call()`` raises."""
    with pytest.raises(ValueError) as e:
        result = call()
        list(result) if hasattr(result, "__next__") else None
    return str(e.value)


# --- CoNLL columns ---------------------------------------------------------------

def test_conll_sequences_columns_and_lines(tmp_path):
    path = write(tmp_path, CONLL)
    seqs = list(read_conll(path, ("w", "pos", "y"), "y"))
    assert [len(s) for s in seqs] == [3, 2]
    assert seqs[0]["w"] == ("Confidence", "in", "the") and seqs[1].labels == ("B-NP", "B-VP")
    assert [s.line for s in seqs] == [1, 5] and seqs[0].source == str(path)
    assert seqs[0].layout.features == ("w", "pos")
    y, lengths = labels_and_lengths(seqs)
    assert y.tolist() == ["B-NP", "B-PP", "B-NP", "B-NP", "B-VP"] and lengths.tolist() == [3, 2]
    assert lengths.dtype == np.int64


def test_conll_whitespace_crlf_and_blank_runs(tmp_path):
    path = write(tmp_path, "\n \t\r\na\tA  x\r\nb B y\r\n\r\n\n  \nc C z")
    seqs = list(read_conll(path, ("w", "pos", "y"), "y"))
    assert [s["w"] for s in seqs] == [("a", "b"), ("c",)] and seqs[1].labels == ("z",)


def test_conll_unicode_spaces_belong_to_tokens(tmp_path):
    """Columns are separated by ASCII whitespace, as CRF++ and conlleval split them: a
    no-break space ("100 000" in French) or an ideographic space is a token's, and
    the token is written back whole (was: split, "4 columns, expected 3")."""
    path = write(tmp_path, "Le DET B-NP\n100\u00a0000 NUM I-NP\t\n\u3000x\u2003y X O\n\n")
    seq, = read_conll(path, ("w", "pos", "y"), "y")
    assert seq["w"] == ("Le", "100\u00a0000", "\u3000x\u2003y") and seq.labels == ("B-NP", "I-NP", "O")
    write_sequences(tmp_path / "out.txt", [seq], [["O", "O", "O"]])
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()[1] == "100\u00a0000 NUM I-NP O"


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_conll_empty_file_has_no_sequence(tmp_path, text):
    assert list(read_conll(write(tmp_path, text), ("w", "y"), "y")) == []


def test_conll_docstart_skipped_and_written_back(tmp_path):
    path = write(tmp_path, CONLL2003)
    seqs = list(read_conll(path, ("w", "pos", "chunk", "ne"), "ne"))
    assert [s["w"] for s in seqs] == [("EU", "rejects"), ("Peter",)]
    write_sequences(tmp_path / "out.txt", seqs)
    assert (tmp_path / "out.txt").read_text() == CONLL2003
    as_items = list(read_conll(path, ("w", "pos", "chunk", "ne"), "ne", docstart=False))
    assert [len(s) for s in as_items] == [1, 2, 1, 1]


def test_conll_docstart_lines_get_the_appended_column_too(tmp_path):
    """conlleval stops at a line whose number of columns differs from the first line's
    ("unexpected number of features: 4 (5)"): a -DOCSTART- line written back with
    predictions appended gets the column too, its own last field (O), as the
    CoNLL-2003 evaluation files have it (was: written with one column fewer)."""
    seqs = list(read_conll(write(tmp_path, CONLL2003), ("w", "pos", "chunk", "ne"), "ne"))
    write_sequences(tmp_path / "out.txt", seqs, [["B-ORG", "O"], ["B-LOC"]])
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert lines[0] == lines[5] == "-DOCSTART- -X- -X- O O" and lines[1] == lines[6] == ""
    assert {len(line.split(" ")) for line in lines if line} == {5}


def test_conll_bare_docstart_lines_are_written_back_as_read(tmp_path):
    """A bare one-field -DOCSTART- (and one of another width) was written back with
    its one field repeated, "-DOCSTART- -DOCSTART-", which no reader of the file
    expects; it is now written as it was read, byte for byte. A -DOCSTART- line with
    the items' columns takes the appended column, single-spaced as the items' lines
    (a trailing space made "O  O", an empty column to conlleval). -DOCSTART- lines
    after the last sequence were dropped; they are written after it."""
    text = ("-DOCSTART-\n\nEU NNP B-ORG\n\n-DOCSTART- -X-\t\nPeter NNP B-PER\n\n-DOCSTART- -X-  O \n\nx X O\n\n"
            "-DOCSTART- -X- O\n\n")
    seqs = list(read_conll(write(tmp_path, text), ("w", "pos", "ne"), "ne"))
    write_sequences(tmp_path / "out.txt", seqs, [["B-ORG"], ["B-PER"], ["O"]])
    assert (tmp_path / "out.txt").read_text().splitlines() == [
        "-DOCSTART-", "", "EU NNP B-ORG B-ORG", "", "-DOCSTART- -X-\t", "Peter NNP B-PER B-PER", "",
        "-DOCSTART- -X- O O", "", "x X O O", "", "-DOCSTART- -X- O O", ""]
    write_sequences(tmp_path / "out.txt", seqs)         # (the lines after the last sequence were dropped)
    assert (tmp_path / "out.txt").read_text() == text


def test_conll_missing_label_names_file_line_and_fix(tmp_path):
    path = write(tmp_path, "a A x\nb B\n")
    message = error(lambda: read_conll(path, ("w", "pos", "y"), "y"))
    assert message.startswith(f"{path}:2: 2 columns, expected 3 (w pos y)")
    assert "label column 'y' is missing" in message and "label=None" in message


def test_conll_wrong_column_count_names_file_line_and_fix(tmp_path):
    path = write(tmp_path, "a A x\n\nb B y z\n")
    message = error(lambda: read_conll(path, ("w", "pos", "y"), "y"))
    assert message.startswith(f"{path}:3: 4 columns, expected 3 (w pos y)")
    assert "same columns" in message


def test_conll_arguments_checked_at_the_call(tmp_path):
    path = write(tmp_path, CONLL)
    assert "not one of the columns" in error(lambda: read_conll(path, ("w", "pos"), "y"))
    assert "repeat" in error(lambda: read_conll(path, ("w", "w", "y"), "y"))
    assert "non-empty" in error(lambda: read_conll(path, ("w", "", "y"), "y"))


def test_conll_unlabelled_data(tmp_path):
    path = write(tmp_path, "a A\nb B\n")
    (seq,) = read_conll(path, ("w", "pos"))
    assert seq["pos"] == ("A", "B")
    with pytest.raises(ValueError, match="without a label column"):
        seq.labels


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open),
                                           (".bin", open)])
def test_conll_compressed_input_read_by_content(tmp_path, suffix, opener):
    path = write(tmp_path, CONLL, "data" + suffix, opener)
    plain = [s.columns for s in read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y")]
    assert [s.columns for s in read_conll(path, ("w", "pos", "y"), "y")] == plain


def test_conll_stdin_and_file_objects(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(CONLL.encode()))))
    (first, second) = read_conll("-", ("w", "pos", "y"), "y")
    assert first.source == "<stdin>" and second["w"] == ("He", "reckons")
    (_, second) = read_conll(io.BytesIO(CONLL.encode()), ("w", "pos", "y"), "y")
    assert second.source == "<stream>" and second.line == 5
    with pytest.raises(TypeError, match=r"<stream>: open the file in binary mode \('rb'\)"):
        list(read_conll(io.StringIO(CONLL), ("w", "pos", "y"), "y"))        # was "can't concat str to bytes"


def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path):
    marked, plain = write(tmp_path, "\ufeff" + CONLL, "marked.txt"), write(tmp_path, CONLL, "plain.txt")
    columns = ("w", "pos", "y")
    assert [s.columns for s in read_conll(marked, columns, "y")] == [s.columns for s in read_conll(plain, columns, "y")]


def test_text_that_is_not_utf8_or_binary(tmp_path):
    path = write(tmp_path, b"a A x\nb\xe9 B y\n")
    message = error(lambda: read_conll(path, ("w", "pos", "y"), "y"))
    assert message.startswith(f"{path}:2: byte 0xe9 (column 2) is not UTF-8") and "iconv" in message
    path = write(tmp_path, b"a A x\x00\n")
    assert error(lambda: read_conll(path, ("w", "pos", "y"), "y")).startswith(f"{path}:1: NUL byte")


class _Endless(io.RawIOBase):
    """A stream of ``byte`` without end (``/dev/zero``, ``yes | tr -d '\\n'``) after
    ``head``, that fails the test once more than ``budget`` bytes are read from it."""

    def __init__(self, head, byte, budget):
        self.head, self.byte, self.left = head, byte, budget

    def readable(self):
        return True

    def readinto(self, buffer):
        assert self.left > 0, "read past the line bound: the reader holds an endless line"
        n = min(len(buffer), self.left)
        data = (self.head + self.byte * n)[:n]
        self.head = self.head[n:]
        buffer[:n] = data
        self.left -= n
        return n


@pytest.mark.parametrize("byte, problem", [(b"a", "line longer than 4096 bytes"), (b"\x00", "NUL byte")])
@pytest.mark.parametrize("read", [lambda s: read_conll(s, ("w", "pos", "y"), "y"), read_conllu, read_crfsuite])
def test_an_endless_line_is_refused_at_the_bound(monkeypatch, byte, problem, read):
    """The structured readers held a line however long, as the LIBSVM and VW readers
    do not: ``tag train --format conll /dev/zero`` grew to the memory's end (2.7 GB
    under a 3 GB limit, then 'out of memory ... --chunk-rows'). A line longer than
    the bound (MAX_LINE_BYTES, as theirs) is refused with its line and what it means."""
    from fastprox.structured.io import lines
    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(lines, "PIECE_BYTES", 1000)
    stream = io.BufferedReader(_Endless(b"a A x\n" if read is not read_conllu else b"# c\n", byte, 1 << 20))
    message = error(lambda: list(read(stream)))
    assert message.startswith("<stream>:2: ") and problem in message


def test_conll2000_round_trip(shared_structured, tmp_path):
    (train,) = shared_structured("conll2000/train.txt")
    seqs = list(read_conll(train, ("w", "pos", "y"), "y"))
    assert len(seqs) == 8936 and sum(map(len, seqs)) == 211727
    assert len({t for s in seqs for t in s.labels}) == 22
    write_sequences(tmp_path / "train.txt.gz", seqs)
    with gzip.open(tmp_path / "train.txt.gz") as f:
        assert f.read() == train.read_bytes()


# --- the writer ----------------------------------------------------------------------

def test_append_column_for_conlleval(tmp_path):
    seqs = list(read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y"))
    write_sequences(tmp_path / "a.txt", seqs, [["O", "O", "O"], ["B-NP", "O"]])
    flat = np.array(["O", "O", "O", "B-NP", "O"])
    write_sequences(tmp_path / "b.txt", seqs, flat)
    text = (tmp_path / "a.txt").read_text()
    assert text == (tmp_path / "b.txt").read_text()
    assert text.splitlines()[:2] == ["Confidence NN B-NP O", "in IN B-PP O"] and text.endswith("O\n\n")
    again = list(read_conll(tmp_path / "a.txt", ("w", "pos", "y", "p"), "y"))
    assert again[1]["p"] == ("B-NP", "O")


def test_replace_a_column(tmp_path):
    seqs = list(read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y"))
    write_sequences(tmp_path / "out.txt", seqs, [["X"] * 3, ["Y"] * 2], column="pos")
    assert (tmp_path / "out.txt").read_text() == CONLL.replace(" NN ", " X ").replace(" IN ", " X ") \
        .replace(" DT ", " X ").replace(" PRP ", " Y ").replace(" VBZ ", " Y ") + "\n"


@pytest.mark.parametrize("values,match", [
    ([["O"] * 3], "ran out"),
    ([["O"] * 3, ["O"] * 2, ["O"]], "more entries"),
    ([["O"] * 2, ["O"] * 2], "2 values for the 3 items"),
    (np.array(["O"] * 4), "fewer than the items"),
    (np.array(["O"] * 6), "6 entries but the sequences 5"),
    ([["O", "a b", "O"], ["O"] * 2], "holds whitespace"),
    ([["O", "", "O"], ["O"] * 2], "empty"),
])
def test_writer_refuses_and_writes_nothing(tmp_path, values, match):
    seqs = list(read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y"))
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(ValueError, match=match):
        write_sequences(target, seqs, values)
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["data.txt", "out.txt"]


def test_writer_argument_errors(tmp_path):
    seqs = list(read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y"))
    with pytest.raises(ValueError, match="no values"):
        write_sequences(tmp_path / "o", seqs, column="y")
    with pytest.raises(ValueError, match="not one of w, pos, y"):
        write_sequences(tmp_path / "o", seqs, [["a"] * 3, ["b"] * 2], column="z")


def test_writer_to_stdout(tmp_path, capsysbinary):
    seqs = list(read_conll(write(tmp_path, CONLL), ("w", "pos", "y"), "y"))
    write_sequences("-", seqs)
    assert capsysbinary.readouterr().out.decode() == CONLL + "\n"


# --- CoNLL-U -------------------------------------------------------------------------

def test_conllu_words_comments_and_skipped_lines(tmp_path):
    path = write(tmp_path, CONLLU, "a.conllu")
    first, second = read_conllu(path, label="UPOS", heads=True)
    assert first.names == FIELDS and first["FORM"] == ("Do", "n't", "go", ".")
    assert first.labels == ("AUX", "PART", "VERB", "PUNCT") and first.heads.tolist() == [3, 3, 0, 3]
    assert first.heads.dtype == np.int32
    assert first.comments == ("# sent_id = s1", "# text = Don't go.")
    assert [where for where, _ in first.extra] == [0, 3] and first.line == 1
    assert second.line == 10 and second.heads.tolist() == [0]
    assert first.layout.features == tuple(f for f in FIELDS if f != "UPOS")


def test_conllu_round_trip_and_predicted_heads(tmp_path):
    path = write(tmp_path, CONLLU, "a.conllu")
    seqs = list(read_conllu(path, heads=True))
    write_sequences(tmp_path / "same.conllu", seqs)
    assert (tmp_path / "same.conllu").read_text() == CONLLU
    write_sequences(tmp_path / "pred.conllu", seqs, np.array([2, 0, 2, 3, 0]), column="HEAD")
    before, after = CONLLU.splitlines(), (tmp_path / "pred.conllu").read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 3
    for a, b in changed:
        fa, fb = a.split("\t"), b.split("\t")
        assert fa[:6] == fb[:6] and fa[7:] == fb[7:] and fa[6] != fb[6]
    assert [s.heads.tolist() for s in read_conllu(tmp_path / "pred.conllu", heads=True)] == [[2, 0, 2, 3], [0]]


def test_parsed_sentences_carry_the_parse_and_every_other_line(tmp_path):
    """An unlabelled parse: HEAD the parser's, DEPREL root / dep, DEPS _ (not the gold
    relations and graph, which a scorer would take for the parser's); comments,
    multiword tokens, empty nodes and the other fields as they were."""
    seqs = list(read_conllu(write(tmp_path, CONLLU, "a.conllu")))
    write_sequences(tmp_path / "parsed.conllu", map(parsed, seqs, [[2, 0, 2, 3], [0]]))
    expected = (CONLLU.replace("3\taux\t3:aux", "2\tdep\t_").replace("3\tadvmod\t3:advmod", "0\troot\t_")
                .replace("0\troot\t0:root\tSpaceAfter", "2\tdep\t_\tSpaceAfter")
                .replace("3\tpunct\t3:punct", "3\tdep\t_").replace("0\troot\t0:root\t_", "0\troot\t_\t_"))
    assert (tmp_path / "parsed.conllu").read_text() == expected
    message = error(lambda: parsed(seqs[1], [0, 1]))
    assert message.startswith(f"2 heads for the 1 words of the sentence at {tmp_path / 'a.conllu'}:10; give one head per word")


def test_conllu_append_column(tmp_path):
    seqs = list(read_conllu(write(tmp_path, CONLLU, "a.conllu")))
    write_sequences(tmp_path / "out.conllu", seqs, [["p"] * 4, ["q"]])
    lines = (tmp_path / "out.conllu").read_text().splitlines()
    assert lines[2].endswith("\t_") and lines[3].endswith("\tp") and lines[6].split("\t")[10] == "_"


def conllu_error(tmp_path, text, **kwargs):
    path = write(tmp_path, text, "bad.conllu")
    return str(path), error(lambda: read_conllu(path, **kwargs))


WORD = "{}\tw\tw\tX\tX\t_\t{}\tdep\t_\t_\n"


@pytest.mark.parametrize("text,kwargs,line,expected", [
    ("1\tw\tw\tX\tX\t_\t0\troot\t_\n", {}, 1, "9 tab-separated fields, expected 10"),
    (WORD.format(1, 0) + WORD.format(3, 1), {}, 2, "word ID '3' where 2 was expected"),
    (WORD.format(1, 0) + "# late\n", {}, 2, "comment line among a sentence's words"),
    ("# sent_id = x\n\n" + WORD.format(1, 0), {}, 1, "sentence without words"),
    ("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n\n", {}, 1, "sentence without words"),
    (WORD.format(1, 0).replace("\tX\t", "\t_\t", 1), {"label": "UPOS"}, 1, "word 1 has no UPOS ('_')"),
    (WORD.format(1, 0) + WORD.format(2, "one"), {"heads": True}, 2, "HEAD 'one' of word 2 is not an integer"),
    (WORD.format(1, 0) + WORD.format(2, "_"), {"heads": True}, 2, "HEAD '_' of word 2 is not an integer"),
    (WORD.format(1, 0) + WORD.format(2, 3), {"heads": True}, 2, "HEAD 3 of word 2 is outside 0..2"),
    (WORD.format(1, -1), {"heads": True}, 1, "HEAD -1 of word 1 is outside 0..1"),
    (WORD.format(1, 0) + WORD.format(2, 1) + WORD.format(3, 0), {"heads": True}, 3,
     "words 1 and 3 both have HEAD 0: a CoNLL-U tree has one word on the root 0"),
])
def test_conllu_errors_name_file_line_and_fix(tmp_path, text, kwargs, line, expected):
    path, message = conllu_error(tmp_path, text, **kwargs)
    assert message.startswith(f"{path}:{line}: {expected}")
    assert any(fix in message for fix in ("separate fields by tabs", "numbered 1, 2, 3", "comments go before",
                                          "at least one word", "label=None", "HEAD is 0 for the root",
                                          "attach the others to a word"))


def test_conllu_cycle_names_the_sentence(tmp_path):
    text = WORD.format(1, 0) + "\n# sent_id = loop\n" + WORD.format(1, 3) + WORD.format(2, 0) + WORD.format(3, 1)
    path, message = conllu_error(tmp_path, text, heads=True)
    assert message.startswith(f"{path}:3: the gold heads of the sentence starting here (sent_id = loop) "
                              f"form a cycle: 1 -> 3 -> 1")
    assert "must reach the root 0" in message
    path, message = conllu_error(tmp_path, WORD.format(1, 1), heads=True)
    assert message.startswith(f"{path}:1: ") and "cycle: 1 -> 1" in message
    assert list(read_conllu(path)) != []        # heads unchecked without heads=True


@given(st.lists(st.lists(st.sampled_from(["0", "1", "2", "3", "9", "-1", "_", "x"]), min_size=1, max_size=4),
                min_size=1, max_size=3),
       st.lists(st.integers(0, 4), max_size=3), st.booleans())
@settings(max_examples=60, deadline=None)
def test_gold_heads_checks_a_read_sentence_as_the_reader_does(tmp_path_factory, sentences, extras, comment):
    """`gold_heads` (a sentence read once, then checked: parse predict reads its
    input once) gives read_conllu(heads=True)'s heads, or its error, word for word
    and line for line, multiword tokens and comments included."""
    from fastprox.structured.io.conllu import gold_heads
    blocks = []
    for heads in sentences:
        lines = ["# sent_id = s"] if comment else []
        for m, head in enumerate(heads, 1):
            lines += [f"{m}-{m + 1}\tab\t_\t_\t_\t_\t_\t_\t_\t_"] * extras.count(m - 1)
            lines.append(WORD.format(m, head).rstrip("\n"))
        blocks.append("\n".join(lines) + "\n")
    path = write(tmp_path_factory.mktemp("g"), "\n".join(blocks), "g.conllu")
    try:
        expected = [s.heads.tolist() for s in read_conllu(path, heads=True)]
    except ValueError as e:
        expected = str(e)
    try:
        got = [gold_heads(s).tolist() for s in read_conllu(path)]
    except ValueError as e:
        got = str(e)
    assert got == expected


def test_conllu_label_must_be_a_field(tmp_path):
    assert "not a CoNLL-U field" in error(lambda: read_conllu(write(tmp_path, CONLLU), label="upos"))


def test_conllu_feats_underscore_is_a_label(tmp_path):
    """FEATS's `_` is the empty set of features, a tag a FEATS tagger predicts (UDPipe's,
    scored by the UD scorer's UFeats): read as a label, where UPOS's `_` is refused."""
    text = WORD.format(1, 0) + WORD.format(2, 1).replace("\t_\t1", "\tNumber=Sing\t1")
    (sentence,) = read_conllu(write(tmp_path, text), label="FEATS")
    assert sentence.labels == ("_", "Number=Sing")
    assert "word 1 has no XPOS" in error(lambda: list(read_conllu(write(tmp_path, text.replace("\tX\t_", "\t_\t_")),
                                                                    label="XPOS")))


def test_ud_ewt_dev_round_trip(shared_structured, tmp_path):
    (dev,) = shared_structured("ud_english_ewt/en_ewt-ud-dev.conllu")
    seqs = list(read_conllu(dev, label="UPOS", heads=True))
    assert len(seqs) == 2001 and sum(map(len, seqs)) == 25147
    write_sequences(tmp_path / "dev.conllu.xz", seqs)
    with lzma.open(tmp_path / "dev.conllu.xz") as f:
        assert f.read() == dev.read_bytes()


def brute_force_is_tree(heads):
    n = len(heads)
    for m in range(1, n + 1):
        h, steps = m, 0
        while h != 0 and steps <= n:
            h, steps = heads[h - 1], steps + 1
        if h != 0:
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.lists(st.integers(0, n), min_size=n, max_size=n)))
def test_find_cycle_against_brute_force(heads):
    cycle = find_cycle(heads)
    assert (cycle is None) == brute_force_is_tree(heads)
    if cycle is not None:       # each word of the cycle is followed by its head
        assert [heads[m - 1] for m in cycle] == cycle[1:] + cycle[:1]


# --- CRFsuite attributes -----------------------------------------------------------

CRFSUITE = """\
B-NP\tw=He\tpos=PRP\tw=He:2
B-VP\t\tw=said:0.5\tnum\\:1\tback\\\\slash\\x:3
O

@weight:2.5
O\tw=.
"""


def test_crfsuite_attributes_weights_escapes(tmp_path):
    first, second = read_crfsuite(write(tmp_path, CRFSUITE))
    assert first.labels == ("B-NP", "B-VP", "O") and first.counts == (3, 3, 0)
    assert first.attributes == ("w=He", "pos=PRP", "w=He", "w=said", "num:1", "back\\slash\\x")
    assert first.weights == (1.0, 1.0, 2.0, 0.5, 1.0, 3.0) and first.weight == 1.0
    assert second.weights is None and second.weight == 2.5 and second.line == 5 and len(second) == 1
    assert labels_and_lengths([first, second])[1].tolist() == [3, 1]


@pytest.mark.parametrize("line,expected", [
    ("O\tw=a:x", "weight 'x' of 'w=a' is not a finite number"),
    ("O\tw=a:nan", "weight 'nan' of 'w=a' is not a finite number"),
    ("O\tw=a:1:2", "field 'w=a:1:2' has a second ':'"),
    ("O\t:1", "attribute ':1' has no name"),
    ("nmod:poss\tw=a", "label 'nmod:poss' holds ':'"),
    ("@weigth:2", "unknown declaration '@weigth'"),
    ("@weight", "@weight needs a weight"),
])
def test_crfsuite_errors_name_file_line_and_fix(tmp_path, line, expected):
    path = write(tmp_path, "O\tw=x\n" + line + "\n")
    message = error(lambda: read_crfsuite(path))
    assert message.startswith(f"{path}:2: {expected}")


def test_crfsuite_sequence_of_declarations_only(tmp_path):
    path = write(tmp_path, "O\ta\n\n@weight:2\n\nO\tb\n")
    assert error(lambda: read_crfsuite(path)).startswith(f"{path}:3: sequence without items")


def escape(name):
    return name.replace("\\", "\\\\").replace(":", "\\:")


names = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\t\n\r\x85\u2028\u2029"),
                min_size=1, max_size=6).filter(lambda s: not s.startswith("@"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(names, st.lists(st.tuples(names, st.none() | st.floats(-1e6, 1e6)), max_size=4)),
                min_size=1, max_size=5))
def test_crfsuite_escapes_round_trip(tmp_path_factory, items):
    lines = ["\t".join([escape(label)] + [escape(a) + ("" if w is None else f":{w!r}") for a, w in attrs])
             for label, attrs in items]
    path = tmp_path_factory.mktemp("crf") / "x.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (seq,) = read_crfsuite(path)
    assert seq.labels == tuple(label for label, _ in items)
    assert seq.attributes == tuple(a for _, attrs in items for a, _ in attrs)
    weights = tuple(1.0 if w is None else w for _, attrs in items for _, w in attrs)
    assert (seq.weights or (1.0,) * len(weights)) == weights


# --- LIBSVM with qid -----------------------------------------------------------------

def libsvm_file(path, qids, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(len(qids), 9, density=0.3, format="csr", random_state=rng)
    y = rng.integers(0, 3, len(qids))
    dump_libsvm(X, y, path, query_id=qids)
    return X, y


def test_libsvm_sequences_are_runs_of_qid(tmp_path):
    qids = np.repeat([4, 4, 9, 1, 4], [2, 3, 1, 5, 2])
    X, y = libsvm_file(tmp_path / "q.svm.gz", qids)
    X2, y2, lengths, seq_qids = load_libsvm_sequences(tmp_path / "q.svm.gz")
    assert lengths.tolist() == [5, 1, 5, 2] and seq_qids.tolist() == [4, 9, 1, 4]
    assert (X2 != X).nnz == 0 and y2.tolist() == y.tolist() and lengths.dtype == np.int64


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 5, 100])
def test_libsvm_sequences_streamed_whole(tmp_path, chunk_rows):
    qids = np.repeat([4, 7, 9, 1, 4, 2], [2, 7, 1, 5, 2, 1])
    X, y = libsvm_file(tmp_path / "q.svm", qids)
    chunks = list(iter_libsvm_sequences(tmp_path / "q.svm", chunk_rows=chunk_rows))
    assert np.concatenate([c[2] for c in chunks]).tolist() == [2, 7, 1, 5, 2, 1]
    assert np.concatenate([c[3] for c in chunks]).tolist() == [4, 7, 9, 1, 4, 2]
    for Xc, yc, lengths, _ in chunks:
        assert Xc.shape[0] == len(yc) == lengths.sum()
    stacked = sp.vstack([sp.csr_matrix(c[0], shape=(c[0].shape[0], X.shape[1])) for c in chunks])
    assert (stacked != X).nnz == 0


def test_libsvm_sequences_empty_file(tmp_path):
    write(tmp_path, "", "e.svm")
    (X, y, lengths, qids), = iter_libsvm_sequences(tmp_path / "e.svm")
    assert X.shape[0] == 0 and len(y) == len(lengths) == len(qids) == 0


def test_libsvm_sequences_need_qid(tmp_path):
    path = write(tmp_path, "1 qid:3 1:1\n0 2:1\n", "n.svm")
    for call in (lambda: load_libsvm_sequences(path), lambda: iter_libsvm_sequences(path)):
        message = error(call)
        assert message.startswith(f"{path}:2: no qid: after the label")
        assert "give every line a qid:INTEGER" in message and "query_id" not in message
