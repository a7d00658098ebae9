"""``fastprox train --scheduler ADDRESS``: the command's training on a Dask cluster
(fastprox.dask); the rest of the command (test metrics, the saved model, the
report) is the same as on one machine."""
import socket

from .._mixing import parallel_params
from ..dask._run import TIMEOUT, check_sync_rows, connected, quiet, run
from ..dask._shares import file_shares
from ..libsvm import read_once, source_name
from ..stream.files import check_readable, labelled_chunks
from ..stream.progress import NoBar
from .options import reading


#: How long the client tries to reach a scheduler that has not answered (Dask retries).
CONNECT_SECONDS = 20

#: How long `check_listening` waits for a TCP handshake before leaving it to the client.
PROBE_SECONDS = 2

#: The schemes of Dask's communications that run over TCP, which `check_listening` probes.
TCP_SCHEMES = ("tcp", "tls", "ws", "wss")


def check_listening(address):
    """OSError at once where nothing listens at the scheduler's ``address`` (its host
    refuses the connection): Dask's client would retry it until its timeout, 20 s of
    silence. Over plain TCP, OSError too where a listener accepts but sends nothing
    for CONNECT_SECONDS: a scheduler writes its handshake first, and Dask's client
    waits for it without a timeout (a silent listener held the command until the
    listener closed). A host that does not answer, a name that does not resolve or an
    address of another scheme is left to the client (and its timeout)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError:
        return
    if scheme not in TCP_SCHEMES:
        return
    try:
        probe = socket.create_connection((host, port), timeout=PROBE_SECONDS)
    except ConnectionRefusedError:
        raise OSError(f"--scheduler {address}: nothing listens there (connection refused); start the "
                      f"scheduler (dask scheduler) or give its address") from None
    except OSError:
        return
    with probe:
        if scheme == "tcp":
            probe.settimeout(CONNECT_SECONDS)
            try:
                probe.recv(1)
            except socket.timeout:      # (TimeoutError from Python 3.10; an OSError of its own before)
                raise OSError(f"--scheduler {address}: what listens there sent nothing for {CONNECT_SECONDS} s, "
                              f"where a Dask scheduler sends its handshake at once; give the scheduler's "
                              f"address (8786 by default)") from None
            except OSError:
                pass


def connect(address):
    """The Dask client of the scheduler at ``address`` (`check_listening` first). A
    service other than a scheduler there (a dashboard's or any web server's port)
    answers bytes that Dask reads as the length of its first message, exabytes,
    whose MemoryError would be worded as training's: OSError naming the address."""
    check_listening(address)
    from distributed import Client
    try:
        return Client(address, timeout=f"{CONNECT_SECONDS}s")
    except MemoryError:
        raise OSError(f"--scheduler {address}: what answers there is not a Dask scheduler (its reply is not "
                      f"Dask's protocol; the dashboard's port is not the scheduler's, 8786 by default)") from None


class ClusterSource:
    """What the command reads besides the training files: their name, the test file
    (read here, on the client, as `fastprox predict` reads)."""

    def __init__(self, args):
        self.name = ", ".join(map(source_name, args.data))
        self.test_path, self.test_name = args.test, args.test and source_name(args.test)
        self.bits, self.reading = args.hash_bits, reading(args)

    def test_chunks(self):
        if self.test_path is None:
            return None
        return labelled_chunks(self.test_path, bits=self.bits, **self.reading)


def train_on_cluster(args, est, n_features, width_origin):
    """Train ``est`` (the command's StreamModel) on the cluster at ``args.scheduler``,
    of width ``n_features`` (None: it grows) set by ``width_origin``: (source, the
    sequential mode's trainer or None, each pass's (mean loss, rows))."""
    if not args.data:
        raise ValueError("--scheduler trains on files that the workers read: give DATA")
    once = [source_name(p) for p in args.data if read_once(p)]
    if once:
        raise ValueError(f"--scheduler: {', '.join(once)} can be read only here (standard input, a pipe), "
                         f"not by the cluster's workers: give files")
    check_sync_rows(args.sync_rows)
    if args.test:
        check_readable([args.test])
    source = ClusterSource(args)
    est.width_origin = width_origin
    shares = file_shares(args.data, n_features=n_features, hash_bits=args.hash_bits, **reading(args))
    if not args.sequential:
        est.params = parallel_params(est.params)
    say = quiet if args.quiet else NoBar().write_line
    with connect(args.scheduler) as client:
        workers = args.workers or max(1, len(connected(client)))
        result = run(client, est, shares, None, args.passes, args.sequential, args.sync_rows, workers, say,
                     args.timeout or TIMEOUT)
    est.learner, est.classes = result.est.learner, result.est.classes
    if result.trainer is not None:
        result.trainer.table.write = say
    return source, result.trainer, result.losses
