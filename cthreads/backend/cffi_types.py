"""Make wgpu-py's lazy C type lookups cheap (a cold-start fix).

wgpu-py names C types by string (``ffi.new("WGPUBufferDescriptor *")``) and cffi parses each
new string the first time it is seen. To parse it, cffi feeds pycparser a preamble declaring
*every* typedef of the header (``typedef int X;`` for the ~400 names of wgpu.h) plus the type:
10-40 ms per string on this machine, and a first launch meets about 40 of them, so well over
half a second of the cold start went there (measured with cProfile on lavapipe).

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
        from cffi import cparser  # noqa: PLC0415
        parser = ffi._parser
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


def cache_dir() -> str:
    """The user's cache folder for cthreads (``CTHREADS_CACHE_DIR`` overrides)."""
    import os  # noqa: PLC0415
    env = os.environ.get("CTHREADS_CACHE_DIR", "").strip()
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cthreads")


def import_native_ffi():
    """Import wgpu-py's native ``_ffi`` module, reusing a cached parse of wgpu.h.

    ``ffi.cdef`` of the 100 KB header costs ~0.1 s of pycparser on every start. The parser's
    resulting declarations are plain Python objects, so they are pickled once into the cache
    folder, keyed by the header text and the cffi/pycparser/Python versions, and loaded on later
    starts (~2 ms). Writes are atomic (temporary file, then rename), so concurrent processes are
    safe; an unreadable or mismatched entry is parsed afresh and rewritten.
    """
    import hashlib  # noqa: PLC0415
    import os  # noqa: PLC0415
    import pickle  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import weakref  # noqa: PLC0415

    if "wgpu.backends.wgpu_native._ffi" in sys.modules:
        return sys.modules["wgpu.backends.wgpu_native._ffi"]
    try:
        import cffi  # noqa: PLC0415
        from cffi import cparser  # noqa: PLC0415
        original = cparser.Parser.parse
    except Exception:
        from wgpu.backends.wgpu_native import _ffi  # noqa: PLC0415
        return _ffi
    versions = f"{cffi.__version__}|{cparser.pycparser.__version__}|{sys.version_info[:2]}"

    def cached_parse(self, csource, *args, **kwargs):
        if len(csource) < 10_000 or self._declarations:
            return original(self, csource, *args, **kwargs)
        options = repr((args, sorted(kwargs.items())))
        key = hashlib.sha256((versions + options + csource).encode()).hexdigest()[:32]
        path = os.path.join(cache_dir(), f"cffi-decls-{key}.pickle")
        try:
            with open(path, "rb") as f:
                state = pickle.load(f)
            if state.pop("__key__", None) != key or not isinstance(state, dict):
                raise ValueError("stale entry")
            vars(self).update(state)
            self._structnode2type = weakref.WeakKeyDictionary()
            return None
        except Exception:
            pass
        result = original(self, csource, *args, **kwargs)
        try:
            state = {k: v for k, v in vars(self).items() if k != "_structnode2type"}
            state["__key__"] = key
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except Exception:
            pass
        return result

    cparser.Parser.parse = cached_parse
    try:
        from wgpu.backends.wgpu_native import _ffi  # noqa: PLC0415
    finally:
        cparser.Parser.parse = original
    return _ffi
