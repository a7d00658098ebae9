"""What the suite reads off a trained peer: the training objective (mean log
loss + alpha ||w||_1, the intercept unpenalized: the objective LIBLINEAR -s 6
minimizes), test accuracy and log-loss, non-zero weights."""
import numpy as np


def log_loss(margins, y):
    """Mean log(1 + exp(-y m)), computed without overflow."""
    return float(np.mean(np.logaddexp(0.0, -y * margins)))


def objective(peer, X, y, alpha):
    return log_loss(peer.decision(X), y) + alpha * peer.l1_norm()


def evaluate(peer, problem, alpha):
    """The columns of the quality tables for a trained `peer`."""
    test_margins = peer.decision(problem.X_test)
    return {
        "objective": objective(peer, problem.X_train, problem.y_train, alpha),
        "test_accuracy": float(np.mean(np.where(test_margins > 0, 1.0, -1.0) == problem.y_test)),
        "test_log_loss": log_loss(test_margins, problem.y_test),
        "nonzeros": peer.n_nonzero(),
    }
