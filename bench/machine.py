"""A description of the machine a benchmark ran on."""
import os
import platform
import subprocess


def machine_summary():
    """CPU model (with its vendor, family and model numbers: a virtual machine's "Intel(R)
    Xeon(R) Processor" names several generations), cores, memory and OS, in one line."""
    model, numbers = "unknown CPU", {}
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            key, _, value = line.partition(":")
            if key == "Model name":
                model = value.strip()
            elif key in ("Vendor ID", "CPU family", "Model"):
                numbers[key] = value.strip()
    except OSError:
        pass
    if numbers:
        model += (f" ({numbers.get('Vendor ID', '?')}, family {numbers.get('CPU family', '?')}, "
                  f"model {numbers.get('Model', '?')})")
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}"


def describe_machine():
    """The machine as a markdown list item."""
    return f"- Machine: {machine_summary()}"


def describe_lanes():
    """The instruction set fastprox's normalized and AdaGrad rows run in on this machine
    (chosen at import, `fastprox._kernels.lanes`), as a markdown list item."""
    from fastprox import _kernels
    return (f"- Lanes: {_kernels.lanes()} (the import's choice among the sets this CPU runs: "
            f"{', '.join(_kernels.lanes_available())}; the models' bits are the same in each)")
