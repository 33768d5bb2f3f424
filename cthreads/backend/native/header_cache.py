"""Make wgpu-py's lazy C type lookups cheap (a cold-start fix).

wgpu-py names C types by string (``ffi.new("WGPUBufferDescriptor *")``) and cffi parses each
new string the first time it is seen. To parse it, cffi feeds pycparser a preamble declaring
*every* typedef of the header (``typedef int X;`` for the ~400 names of wgpu.h) plus the type,
and a first launch meets dozens of such strings: most of the cold start went there (see
docs/performance.md, "Start-up and argument packing").

A typedef name that does not occur in the text being parsed cannot change how it parses, so
this module gives wgpu-py's own parser a ``_parse`` that declares only the typedef names that
occur in the text. The result is the same parse, from a preamble of a handful of lines. Only
the parser instance of wgpu's ``ffi`` is touched; when cffi's internals are not as expected
nothing is changed.
"""

from __future__ import annotations

import re
import types

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def speed_up_type_parsing(ffi) -> bool:
    """Install the filtered ``_parse`` on ``ffi``'s parser; True when installed."""
    try:
        parser = ffi._parser
    except Exception:
        return False
    return _install_fast_parse(parser)


def _install_fast_parse(parser) -> bool:
    """``speed_up_type_parsing`` on a cffi ``Parser`` instance."""
    try:
        from cffi import cparser  # noqa: PLC0415
        needed = (cparser._preprocess, cparser._common_type_names, cparser._get_parser,
                  cparser.CDEF_SOURCE_STRING, parser._declarations, parser.convert_pycparser_error)
    except Exception:
        return False
    del needed
    if getattr(parser, "_cthreads_fast", False):
        return True
    lock = getattr(cparser, "lock", None)
    pycparser = cparser.pycparser

    def _parse(self, csource):
        csource, macros = cparser._preprocess(csource)
        used = set(_WORD.findall(csource))
        ctn = cparser._common_type_names(csource)
        typenames = []
        for name in self._declarations:
            if name.startswith("typedef "):
                name = name[8:]
                ctn.discard(name)
                if name in used:
                    typenames.append(name)
        typenames = sorted(typenames) + sorted(ctn)
        lines = ['# 1 "<cdef automatic initialization code>"']
        lines += [f"typedef int {t};" for t in typenames]
        lines.append("typedef int __dotdotdotint__, __dotdotdotfloat__, __dotdotdot__;")
        lines.append(f'# 1 "{cparser.CDEF_SOURCE_STRING}"')
        lines.append(csource)
        lines.append("")
        if lock is not None:
            lock.acquire()
        try:
            ast = cparser._get_parser().parse("\n".join(lines))
        except pycparser.c_parser.ParseError as e:
            self.convert_pycparser_error(e, csource)
        finally:
            if lock is not None:
                lock.release()
        return ast, macros, csource

    parser._parse = types.MethodType(_parse, parser)
    parser._cthreads_fast = True
    return True


#: instance attributes of a parser that are not its parse's state (caches, installed methods)
_NOT_STATE = ("_structnode2type", "_parse", "_cthreads_fast", "parse_type_and_quals")


def parser_state(parser) -> dict:
    """What a cache entry keeps of a cffi parser after its ``parse`` of the header."""
    return {k: v for k, v in vars(parser).items() if k not in _NOT_STATE}


def _answer_known_types(parser, types: dict) -> None:
    """Make ``parser.parse_type_and_quals`` answer the type strings of ``types`` from there
    (the same objects a parse would build: they were built by one, on these declarations)."""
    parse = parser.parse_type_and_quals

    def parse_type_and_quals(cdecl):
        hit = types.get(cdecl)
        return hit if hit is not None else parse(cdecl)

    parser.parse_type_and_quals = parse_type_and_quals


def cache_dir() -> str:
    """The user's cache folder for cthreads (``CTHREADS_CACHE_DIR`` overrides)."""
    from ... import config  # noqa: PLC0415  (lazy: this module is kept light to import)
    return config.current().cache_dir


def _is_private(st) -> bool:
    """True when the file or folder ``st`` describes is the user's and nobody else can write it.

    The same rule as ssh's for keys: owned by the user, not writable by group or others.
    """
    import os  # noqa: PLC0415
    getuid = getattr(os, "getuid", None)
    return getuid is None or (st.st_uid == getuid() and not st.st_mode & 0o022)


def _model_classes() -> dict:
    """cffi's C type classes by name: the only objects a cache entry may describe."""
    from cffi import model  # noqa: PLC0415
    return {name: c for name, c in vars(model).items()
            if isinstance(c, type) and issubclass(c, model.BaseTypeByIdentity)}


_PLAIN = (bool, int, float, str)


def _encode(state: dict, classes: dict, types: dict | None = None) -> dict:
    """A JSON-able description of the parser's state: plain values, tuples as arrays, other
    containers tagged by kind, and cffi type objects as numbered records (shared and cyclic
    references kept). ``types``: parsed type strings (``parse_type_and_quals`` results by
    string) to keep too, sharing the state's objects; those that hold a type object of their
    own that compares by identity are left out."""
    allowed = {c: name for name, c in classes.items()}
    objects: list = []
    index: dict[int, int] = {}
    pending: list = []

    def enc(v):
        if v is None or v.__class__ in _PLAIN:
            return v
        kind = v.__class__
        if kind is tuple:                    # the common container: a bare JSON array
            return [enc(x) for x in v]
        if kind is list:
            return {"L": [enc(x) for x in v]}
        if kind is set or kind is frozenset:
            return {"S": [enc(x) for x in v]}
        if kind is dict:
            return {"D": [[enc(k), enc(x)] for k, x in v.items()]}
        if kind in allowed:
            i = index.get(id(v))
            if i is None:
                i = index[id(v)] = len(objects)
                objects.append([allowed[kind], None])
                pending.append(v)
            return {"O": i}
        raise TypeError(f"a {kind.__name__} cannot be cached")

    def drain(done):
        while done < len(pending):           # breadth first: no deep recursion on type chains
            obj = pending[done]
            objects[done][1] = {k: enc(x) for k, x in vars(obj).items()}
            done += 1
        return done

    doc = {"objects": objects, "state": enc(state)}
    done = drain(0)
    if types:
        known = set(index)                   # the objects the declarations hold
        kept = {k: v for k, v in types.items()
                if k.__class__ is str and _built_on(v, known, classes)}
        doc["types"] = enc(kept)
        drain(done)
    return doc


def _built_on(value, known: set, classes: dict) -> bool:
    """True when the parsed type ``value`` holds no type object of its own that compares by
    identity (a struct, union or enum not among the declarations): decoded as a copy, such an
    object would be a different C type from the declared one. Types compared by value
    (pointers, arrays, functions, primitives) are fine as copies."""
    by_value = classes.get("BaseType")
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        kind = v.__class__
        if v is None or kind in _PLAIN:
            continue
        if kind in (tuple, list, set, frozenset):
            stack.extend(v)
        elif kind is dict:
            stack.extend(v.keys())
            stack.extend(v.values())
        elif id(v) in known or id(v) in seen:
            continue
        elif by_value is not None and isinstance(v, by_value):
            seen.add(id(v))
            stack.extend(vars(v).values())
        else:
            return False
    return True


def _settable(cls, name) -> bool:
    """An attribute a cache entry may set: a private data name that shadows no method."""
    return (isinstance(name, str) and name.isidentifier() and not name.startswith("__")
            and not callable(getattr(cls, name, None)))


def _decode(doc: dict, classes: dict, parser_cls) -> tuple[dict, dict]:
    """The parser state and the parsed types ``_encode`` described; ValueError (or another
    Exception) when the entry is not exactly such a description. Only cffi type objects and
    plain data are created."""
    records = doc["objects"]
    objects = []
    for name, _ in records:
        cls = classes[name]
        objects.append(cls.__new__(cls))

    def dec(v):
        kind = v.__class__
        if kind is str or kind is int or v is None or kind is bool or kind is float:
            return v
        if kind is list:
            return tuple([dec(x) for x in v])
        [(tag, body)] = v.items()
        if tag == "O":
            if body.__class__ is not int or body < 0:
                raise ValueError("bad object reference")
            return objects[body]
        if body.__class__ is not list:
            raise ValueError("bad container")
        if tag == "L":
            return [dec(x) for x in body]
        if tag == "S":
            return {dec(x) for x in body}
        if tag == "D":
            return {dec(k): dec(x) for k, x in body}
        raise ValueError(f"unknown tag {tag!r}")

    checked = set()                          # (class, attribute name) pairs found settable
    for obj, (_, attrs) in zip(objects, records):
        cls = obj.__class__
        for k, x in attrs.items():
            if (cls, k) not in checked:
                if not _settable(cls, k):
                    raise ValueError(f"bad attribute name {k!r}")
                checked.add((cls, k))
        vars(obj).update({k: dec(x) for k, x in attrs.items()})
    state = dec(doc["state"])
    if state.__class__ is not dict or not all(_settable(parser_cls, k) for k in state):
        raise ValueError("bad parser state")
    types = dec(doc.get("types", {"D": []}))
    model_types = tuple(classes.values())
    for k, v in types.items() if types.__class__ is dict else [(None, None)]:
        if not (k.__class__ is str and v.__class__ is tuple and len(v) == 2
                and isinstance(v[0], model_types) and v[1].__class__ is int):
            raise ValueError("bad parsed type")
    return state, types


def _read_entry(folder: str, path: str):
    """The decoded JSON document at ``path``; raises when it is missing, unreadable, or the
    folder or the file can be written by someone other than the user."""
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415
    if not _is_private(os.stat(folder)):
        raise PermissionError(f"{folder} can be written by others")
    with open(path, "rb") as f:
        if not _is_private(os.fstat(f.fileno())):
            raise PermissionError(f"{path} can be written by others")
        return json.loads(f.read())


def _write_entry(folder: str, path: str, doc: dict) -> None:
    """Write ``doc`` atomically (temporary file, then rename); the temporary file never stays
    behind, even when the write fails (a full disk). Nothing is written into a folder that others
    can write."""
    import json  # noqa: PLC0415
    _write_bytes(folder, path, json.dumps(doc, separators=(",", ":")).encode())


def _write_bytes(folder: str, path: str, data: bytes) -> None:
    """``_write_entry`` of an encoded document."""
    import os  # noqa: PLC0415
    from .shipped_cache import write_atomically  # noqa: PLC0415
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not _is_private(os.stat(folder)):
        return
    write_atomically(path, data)


def import_native_ffi():
    """Import wgpu-py's native ``_ffi`` module, reusing a cached parse of wgpu.h.

    ``ffi.cdef`` of the 100 KB header is a large part of every start (pycparser; see
    docs/performance.md, "Start-up and argument packing"). The parser's
    resulting declarations are cffi type objects holding plain values, so they are written once
    to the cache folder as JSON, keyed by the header text and the wgpu/cffi/pycparser/Python
    versions, and read back on later starts. Where the user's folder has no entry, the one
    built at install time (``shipped_cache``, verified by its digest) is used and copied there,
    so a fresh cache folder starts as fast as a warm one. Reading an entry creates only cffi
    type objects and plain data (nothing in the file can run code), and an entry is used only
    when the user owns it and its folder and neither can be written by others (a planted entry
    could still describe wrong C layouts). Writes are atomic, so concurrent processes are safe; an
    unreadable, untrusted or mismatched entry is parsed afresh and rewritten.
    """
    import hashlib  # noqa: PLC0415
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import weakref  # noqa: PLC0415

    from . import shipped_cache  # noqa: PLC0415

    if "wgpu.backends.wgpu_native._ffi" in sys.modules:
        return sys.modules["wgpu.backends.wgpu_native._ffi"]
    try:
        import cffi  # noqa: PLC0415
        from cffi import cparser  # noqa: PLC0415
        import wgpu  # noqa: PLC0415
        original = cparser.Parser.parse
        classes = _model_classes()
    except Exception:
        from wgpu.backends.wgpu_native import _ffi  # noqa: PLC0415
        return _ffi
    versions = (f"{wgpu.__version__}|{cffi.__version__}|{cparser.pycparser.__version__}|"
                f"{sys.version_info[:2]}")

    def load(self, doc, key) -> None:
        if doc.get("key") != key:
            raise ValueError("stale entry")
        state, types = _decode(doc, classes, cparser.Parser)
        vars(self).update(state)
        self._structnode2type = weakref.WeakKeyDictionary()
        if types:
            _answer_known_types(self, types)

    def cached_parse(self, csource, *args, **kwargs):
        if len(csource) < 10_000 or self._declarations:
            return original(self, csource, *args, **kwargs)
        options = repr((args, sorted(kwargs.items())))
        key = hashlib.sha256((versions + options + csource).encode()).hexdigest()[:32]
        name = f"cffi-decls-{key}.json"
        folder = cache_dir()
        path = os.path.join(folder, name)
        try:
            load(self, _read_entry(folder, path), key)
        except Exception:
            try:                              # the entry built at install time, if any
                data = shipped_cache.read_bytes(name)
                load(self, json.loads(data), key)
            except Exception:
                data = None
            if data is not None:
                try:                          # the user's cache gets its copy, as if parsed
                    _write_bytes(folder, path, data)
                except Exception:
                    pass
        if self._declarations:
            # the type strings of wgpu's own module-level callbacks are parsed fast too
            _install_fast_parse(self)
            return None
        result = original(self, csource, *args, **kwargs)
        try:
            doc = _encode(parser_state(self), classes)
            doc["key"] = key
            _write_entry(folder, path, doc)
        except Exception:
            pass
        _install_fast_parse(self)             # after the encoding: it adds instance attributes
        return result

    cparser.Parser.parse = cached_parse
    try:
        from wgpu.backends.wgpu_native import _ffi  # noqa: PLC0415
    finally:
        cparser.Parser.parse = original
    return _ffi


def write_build_entry(out: str, work) -> None:
    """(In ``build``'s child, with an empty cache folder.) Parse wgpu.h afresh, run ``work``
    (a few tiny launches) while noting the C type strings wgpu-py parses on the way (its
    module-level callbacks, its descriptors), and write the declarations with those parsed
    types to ``out``. When ``work`` fails (no device), the types noted up to then are kept."""
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import weakref  # noqa: PLC0415

    from cffi import cparser  # noqa: PLC0415

    from .shipped_cache import PREFIX  # noqa: PLC0415

    noted: dict = {}
    parse = cparser.Parser.parse_type_and_quals

    def noting(self, cdecl):
        result = parse(self, cdecl)
        noted.setdefault(id(self), {})[cdecl] = result
        return result

    cparser.Parser.parse_type_and_quals = noting
    try:
        parser = import_native_ffi().ffi._parser
        try:
            work()
        except Exception as exc:
            print(f"no launch at install time ({type(exc).__name__}): fewer types kept",
                  file=sys.stderr)
    finally:
        cparser.Parser.parse_type_and_quals = parse
    strings = list(noted.get(id(parser), {}))
    # the parser's objects have changed since (cffi marks structs it has laid out): the types
    # are parsed again on a parser holding the declarations as the header's parse left them
    [name] = [n for n in os.listdir(cache_dir()) if n.startswith(PREFIX)]
    with open(os.path.join(cache_dir(), name), "rb") as f:
        parsed = json.loads(f.read())
    classes = _model_classes()
    state, _ = _decode(parsed, classes, cparser.Parser)
    pristine = cparser.Parser()
    vars(pristine).update(state)
    pristine._structnode2type = weakref.WeakKeyDictionary()
    _install_fast_parse(pristine)
    declared = dict(pristine._declarations)
    types = {}
    for cdecl in strings:
        try:
            types[cdecl] = pristine.parse_type_and_quals(cdecl)
        except Exception:
            pass
    now = pristine._declarations
    doc = _encode(parser_state(pristine), classes, types)
    same = (len(now) == len(declared) and all(now.get(k) is v for k, v in declared.items())
            and doc["state"] == parsed["state"]
            and doc["objects"][:len(parsed["objects"])] == parsed["objects"])
    if not same:                              # a type string changed the declarations
        doc = parsed
    doc["key"] = parsed["key"]
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
