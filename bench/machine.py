"""A description of the machine a benchmark ran on."""
import os
import platform
import subprocess


def machine_summary():
    """CPU model (with its family and model numbers: a virtual machine's "Intel(R) Xeon(R)
    Processor" names several generations), cores, memory and OS, in one line."""
    model, numbers = "unknown CPU", {}
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            key, _, value = line.partition(":")
            if key == "Model name":
                model = value.strip()
            elif key in ("CPU family", "Model"):
                numbers[key] = value.strip()
    except OSError:
        pass
    if numbers:
        model += f" (family {numbers.get('CPU family', '?')}, model {numbers.get('Model', '?')})"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}"


def describe_machine():
    """The machine as a markdown list item."""
    return f"- Machine: {machine_summary()}"
