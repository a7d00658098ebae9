"""The two Python interpreters a start-up-bound benchmark runs its commands in: this
machine's as it is, and a clean one over the same installed packages.

This machine's interpreter runs, at every start, the ``.pth`` files of its
site-packages. One of them, ``_sandboxing_egress_ca.pth``, is written by the sandbox
at container start (its first line says so): it imports certifi to append a proxy's
certificate, and certifi's import brings in pathlib, re and importlib.resources. A
user's Python has no such file, and every Python process here pays for it. The clean
interpreter is a virtual environment (``python -m venv --without-pip``) whose
site-packages holds one ``.pth`` file of one line, the base interpreter's
site-packages directory: a path line only extends ``sys.path``, none of that
directory's ``.pth`` files run, and nothing is installed twice.

Run: ``python -m bench.interpreters`` prints what the clean interpreter skips and
what that costs (``-X importtime``).
"""
import re
import site
import subprocess
import sys
from pathlib import Path

#: The names of the two interpreters, as the reports' columns name them.
MACHINE, CLEAN = "this machine", "clean"


def skipped_pth():
    """The ``.pth`` files of this interpreter's site-packages that run code at start
    (a line starting with ``import``), which the clean interpreter does not run:
    ``[(path, text)]``."""
    found = []
    for folder in site.getsitepackages():
        for path in sorted(Path(folder).glob("*.pth")):
            lines = path.read_text(errors="replace").splitlines()
            if any(line.startswith(("import ", "import\t")) for line in lines):
                found.append((path, "\n".join(lines)))
    return found


def pth_names(text):
    """The modules a ``.pth`` file's ``text`` names after ``import``."""
    return re.findall(r"\bimport\s+(\w+)", text)


def start_imports(python, *flags, code="pass"):
    """``{module: (cumulative microseconds, depth)}`` of what ``python [flags] -X
    importtime -c CODE`` imports (``python`` an interpreter's path; depth 1 the
    modules imported by no other, 2 those they import, ...)."""
    done = subprocess.run([str(python), *flags, "-X", "importtime", "-c", code], capture_output=True,
                          text=True, check=True)
    found = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
        if match:
            found[match.group(3)] = int(match.group(1)), (len(match.group(2)) + 1) // 2
    return found


def clean_interpreter(folder):
    """The clean interpreter made under ``folder`` (a virtual environment whose one
    ``.pth`` names this interpreter's site-packages): its ``python``'s path. Refused
    (SystemExit) if its start still imports a module only this interpreter's start
    imports through its ``.pth`` files."""
    folder = Path(folder)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    packages = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    (Path(packages) / "base_site_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    named = {name for _, text in skipped_pth() for name in pth_names(text)}
    bare = start_imports(sys.executable, "-S", code="import site")     # (site, no site-packages)
    kept = (named & set(start_imports(python))) - set(bare)
    if kept:
        raise SystemExit(f"the clean interpreter {python} still imports {sorted(kept)} at start")
    return python


def describe(clean):
    """The ``.pth`` files the clean interpreter ``clean`` skips and the modules that
    only this one's ``site`` imports itself (cumulative milliseconds of ``-X
    importtime``), as one markdown sentence."""
    base, skipped = start_imports(sys.executable), set(start_imports(clean))
    top = {name: us for name, (us, depth) in base.items() if name not in skipped and depth == 2 and us >= 100}
    files = "; ".join(f"`{path}` (importing {', '.join(dict.fromkeys(pth_names(text)))})"
                      for path, text in skipped_pth())
    return (f"The clean interpreter runs none of these `.pth` files of this machine's site-packages: {files}. "
            "What they import at every start, by `-X importtime` (cumulative): "
            + ", ".join(f"{name} {us / 1000:.1f} ms" for name, us in sorted(top.items(), key=lambda i: -i[1]))
            + ".")


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        clean = clean_interpreter(Path(tmp) / "venv")
        print(clean)
        print(describe(clean))
