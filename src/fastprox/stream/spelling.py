"""How the stream's messages name the settings that fix them.

The streaming engine serves two front ends: the ``fastprox`` command, whose
settings are options (``--classes 0,1,2``), and `fastprox.dask.fit`, whose
settings are a Python call's arguments (``classes=[0, 1, 2]``). A message that
tells the user what to give names it as the user would type it: the
`StreamModel`'s ``spelling`` says which (the command's unless its user sets it).
"""


class Spelling:
    """The names of the settings a stream's error messages advise.

    Parameters
    ----------
    classes : str
        The setting that lists the classes, by name.
    listed : str
        The same given a list: a format whose ``{}`` takes the labels.
    separator : str
        What separates the listed labels.
    regression : str
        The advice for real-valued targets.
    hash_bits : str
        The setting that hashes the features into fewer columns.
    """

    def __init__(self, classes, listed, separator, regression, hash_bits):
        self.classes_name, self.listed, self.separator = classes, listed, separator
        self.regression, self.hash_bits = regression, hash_bits

    def classes(self, labels):
        """The setting given these classes (labels formatted as strings)."""
        return self.listed.format(self.separator.join(labels))


#: The ``fastprox`` command's options.
COMMAND_LINE = Spelling("--classes", "--classes {}", ",", "give --regression", "--hash-bits")
#: `fastprox.dask.fit`'s arguments.
PYTHON_CALL = Spelling("classes=", "classes=[{}]", ", ", "train a ProxRegressor", "hash_bits=")
