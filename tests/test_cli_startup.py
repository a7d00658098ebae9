"""`fastprox COMMAND` imports that command's module and what it uses, not the other
commands' (their summaries are needed only by ``fastprox --help``): a command's
start-up is part of every run's time. The console script (`console`) ends the process
without the interpreter's teardown, and loses nothing by it."""
import ast
import os
import re
import subprocess
import sys

from fastprox.cli import COMMANDS, build_parser
from tests.support.cli_process import SRC


def test_a_command_imports_no_other_command():
    for command in ("train", "predict", "info"):
        code = ("import sys\nfrom fastprox.cli import build_parser\nbuild_parser(%r)\n"
                "print(sorted(m for m in sys.modules if m.startswith('fastprox.cli.')))" % command)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        imported = {name.rpartition(".")[2] for name in ast.literal_eval(out)}
        assert command in imported and not imported & (set(COMMANDS) - {command}), (command, imported)


def test_the_whole_parser_lists_every_command_with_its_summary():
    text = build_parser().format_help()
    for command in COMMANDS:
        assert f"    {command} " in text


def _console(tmp_path, before, *argv):
    """``fastprox ARGV`` through `console` in a fresh interpreter, ``before`` run first."""
    code = f"{before}\nimport sys\nfrom fastprox.cli import console\nsys.exit(console())"
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": SRC})


def _vw_file(tmp_path):
    path = tmp_path / "d.vw"
    path.write_text("".join(f"{1 if i % 3 else -1} |a x{i % 7} y:{1 + i % 4} |b z{i % 5}\n" for i in range(500)))
    return path


def test_the_console_script_ends_at_once_losing_nothing(tmp_path):
    data = _vw_file(tmp_path)
    usual = subprocess.run([sys.executable, "-c", "import sys; from fastprox.cli import main; sys.exit(main())",
                            *map(str, ("train", data, "-q", "ab", "--model", tmp_path / "usual.model",
                                       "--hash-bits", 12))],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC})
    # an object freed at the interpreter's teardown says so: at once, it is not
    quick = _console(tmp_path, "class Late:\n    def __del__(self):\n        print('torn down')\nlate = Late()",
                     "train", data, "-q", "ab", "--model", tmp_path / "quick.model", "--hash-bits", 12)
    assert usual.returncode == quick.returncode == 0, quick.stderr
    assert (tmp_path / "usual.model").read_bytes() == (tmp_path / "quick.model").read_bytes()
    shown = [re.sub(r"time: .*|usual|quick", "", text) for text in (usual.stdout, quick.stdout)]
    assert shown[0] == shown[1] and "progressive loss" in shown[1] and "torn down" not in quick.stdout
    assert usual.stderr == quick.stderr


def test_the_console_script_keeps_exit_functions_threads_and_statuses(tmp_path):
    data = _vw_file(tmp_path)
    said = _console(tmp_path, "import atexit\natexit.register(print, 'exit function ran')",
                    "train", data, "--model", tmp_path / "m.model", "--quiet")
    assert said.returncode == 0 and said.stdout.endswith("exit function ran\n")
    waited = _console(tmp_path, "import threading, time\n"
                      "threading.Thread(target=lambda: (time.sleep(0.5), print('thread ended'))).start()",
                      "train", data, "--model", tmp_path / "m.model", "--quiet")
    assert waited.returncode == 0 and "thread ended" in waited.stdout
    failed = _console(tmp_path, "", "train", tmp_path / "missing.vw", "--model", tmp_path / "m.model")
    assert failed.returncode == 1 and failed.stderr.startswith("fastprox: error: ")
    misused = _console(tmp_path, "", "train", data, "--no-such-option")
    assert misused.returncode == 2 and "Traceback" not in misused.stderr


def test_python_dash_m_fastprox_is_the_command(tmp_path):
    """``python -m fastprox ARGS`` runs this checkout's command (there was no __main__:
    "No module named fastprox.__main__"), output and exit status alike."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "fastprox", "info", str(data)], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "") and done.stdout.startswith(f"{data}\n  rows       2\n")
    done = subprocess.run([sys.executable, "-m", "fastprox", "info", str(tmp_path / "absent")], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.endswith("absent: No such file or directory\n")


def test_without_the_dask_extra_the_cluster_names_the_extra_to_install(tmp_path):
    """A user who installed fastprox without its dask extra and asks for a cluster (or
    imports fastprox.dask) is told which extra installs what is missing: the command
    said "pip install fastprox", which they had done, and Python said only "No module
    named 'distributed'"."""
    without = "import sys; sys.modules['distributed'] = None"     # an import of it fails, as where absent
    (tmp_path / "d.svm").write_text("1 1:1\n-1 2:1\n")
    run = _console(tmp_path, without, "train", "d.svm", "--scheduler", "tcp://127.0.0.1:1")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "fastprox.dask needs Dask's distributed scheduler" in run.stderr
    assert 'pip install "fastprox[dask]"' in run.stderr
    python = subprocess.run([sys.executable, "-c", f"{without}\nimport fastprox.dask"], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": SRC})
    assert python.returncode == 1
    assert "ImportError: fastprox.dask needs Dask's distributed scheduler" in python.stderr
    assert 'pip install "fastprox[dask]"' in python.stderr
