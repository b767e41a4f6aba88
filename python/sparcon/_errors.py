"""Exception classes that keep both kinds of caller working: code written for sparcon catches
``ValueError`` (every bad argument), code written for ``entmax`` catches what torch raises
inside entmax (``IndexError`` for a dim out of range, ``RuntimeError`` for the rest).

The operators raise ``ValueError`` (``c10::ValueError``) naming the argument; the Python
functions re-raise it, with the same message, as one of these subclasses. Inside TorchScript
there is no ``try``: a scripted module raises what the operator raised (``torch.jit.Error`` in
torch 1.13, its message naming the argument)."""


class SparconError(ValueError, RuntimeError):
    """A bad argument or input: a ValueError (sparcon) that is also a RuntimeError (entmax,
    where torch raises inside entmax's own computation: shapes that do not broadcast, a target
    out of range, ...)."""


class SparconIndexError(SparconError, IndexError):
    """``dim`` out of range for the tensor: a ValueError (sparcon) that is also an IndexError
    (torch's "Dimension out of range", raised inside entmax)."""


def translate(exc):
    """The SparconError / SparconIndexError with the message of the operator's ValueError."""
    message = str(exc)
    if ": dim = " in message and "out of range" in message:
        return SparconIndexError(message)
    return SparconError(message)


def call(fn, *args):
    """fn(*args), an operator's ValueError re-raised as SparconError / SparconIndexError (eager
    only: the callers branch on torch.jit.is_scripting() before reaching this)."""
    try:
        return fn(*args)
    except SparconError:
        raise
    except ValueError as exc:
        raise translate(exc) from None

