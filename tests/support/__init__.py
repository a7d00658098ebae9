"""Helpers the tests share that are not tests themselves: the contract written the
slow way (`reference`, `reference_multiclass`), brute-force references of the
decoders (`structured_reference`), the command run as a user runs it
(`cli_process`), arrays at odd addresses (`unaligned`), the shared data's one
route (`shared`) and ``train -p``'s lines written a row at a time (`prediction_lines`)."""
