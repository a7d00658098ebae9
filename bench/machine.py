"""A description of the machine a benchmark ran on."""
import os
import platform
import subprocess


def machine_summary():
    """CPU model, cores, memory and OS, in one line."""
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}"


def describe_machine():
    """The machine as a markdown list item."""
    return f"- Machine: {machine_summary()}"
