"""torch._dynamo.exc: the errors of compiled functions."""

__all__ = ["FailOnRecompileLimitHit", "RecompileLimitExceeded", "TorchDynamoException",
           "Unsupported"]


class TorchDynamoException(RuntimeError):
    """The base of torch.compile's errors."""


class Unsupported(TorchDynamoException):
    """What a compiled function cannot compile (a graph break) under fullgraph=True,
    with the reason and the line."""


class RecompileLimitExceeded(TorchDynamoException):
    """A compiled function reached torch._dynamo.config.recompile_limit."""


class FailOnRecompileLimitHit(RecompileLimitExceeded):
    """Raised instead of running eagerly when the recompile limit is hit."""
