"""The compiler's one dispatch convention: a pass handles node class ``N`` in ``<pass>_N``.

Every walk over Python ASTs or the IR (``frontend``/``exprs``, ``wgsl``, ``vectorize``,
``proofs``, ``uniform``) subclasses ``Visitor``. The main pass of a class is ``visit_N``
(``self.visit(node)``); a class with more than one walk over the same nodes names the others,
e.g. ``region_N`` (``self.dispatch("region", node)``). Each class builds its tables once, when
it is defined, so a visit is one dict lookup. A node without a method goes to ``default`` (or
``<pass>_default``): an error, or what a pass that cares about a few nodes does with the rest.
"""

from __future__ import annotations

import re

_METHOD = re.compile(r"([a-z]+)_([A-Z]\w*)$")


class Visitor:
    _tables: dict = {}
    _visitors: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        tables: dict = {}
        for name in dir(cls):
            m = _METHOD.match(name)
            if m:
                tables.setdefault(m.group(1), {})[m.group(2)] = getattr(cls, name)
        cls._tables = tables
        cls._visitors = tables.get("visit", {})

    def visit(self, node, *args):
        method = self._visitors.get(type(node).__name__)
        if method is None:
            return self.default(node, *args)
        return method(self, node, *args)

    def dispatch(self, walk: str, node, *args):
        method = self._tables.get(walk, {}).get(type(node).__name__)
        if method is None:
            return getattr(self, walk + "_default")(node, *args)
        return method(self, node, *args)

    def default(self, node, *args):
        raise NotImplementedError(f"{type(self).__name__} has no visit_{type(node).__name__}")
