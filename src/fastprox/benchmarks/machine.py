"""A markdown description of the machine a benchmark ran on."""
import os
import platform
import subprocess


def describe_machine():
    """CPU model, cores, memory and OS, as markdown list items."""
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"- Machine: {model}, {os.cpu_count()} cores, {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}")
