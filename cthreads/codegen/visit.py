"""The compiler's one dispatch convention: a node goes to the ``visit_<class name>`` method.

Every pass over Python ASTs or the IR (``frontend``/``exprs``, ``wgsl``, ``vectorize``,
``proofs``, ``uniform``) subclasses ``Visitor``; each class builds its name -> method table
once, when it is defined, so a visit is one dict lookup. A node without a method goes to
``default`` (an error, or the generic walk of a pass that only cares about a few nodes).
"""

from __future__ import annotations


class Visitor:
    _visitors: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visitors = {name[len("visit_"):]: getattr(cls, name) for name in dir(cls)
                         if name.startswith("visit_")}

    def visit(self, node, *args):
        method = self._visitors.get(type(node).__name__)
        if method is None:
            return self.default(node, *args)
        return method(self, node, *args)

    def default(self, node, *args):
        raise NotImplementedError(f"{type(self).__name__} has no visit_{type(node).__name__}")
