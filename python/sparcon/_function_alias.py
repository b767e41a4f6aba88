"""entmax's autograd ``Function`` class names, for code that calls ``<Name>Function.apply``."""


def function_alias(name, fn, module):
    """A class ``name`` whose static ``apply`` is ``fn``: ``SparsemaxFunction.apply(X, dim)`` is
    ``sparsemax(X, dim)``, with the positional order of entmax's ``Function.forward``. sparcon's
    ops carry their own autograd, so the class is not a ``torch.autograd.Function`` (no
    ``forward``/``backward`` to subclass)."""
    doc = (f"entmax's ``{name}``: ``{name}.apply(...)`` is :func:`{module}.{fn.__name__}`. "
           "Not a torch.autograd.Function: the op has its own autograd.")
    return type(name, (), {"__doc__": doc, "__module__": module, "apply": staticmethod(fn)})
