"""A cache entry's parsed type strings share the declarations' objects when read back, and a
parsed type holding a struct of its own is not kept (its copy would be another C type)."""

from __future__ import annotations

import json

import pytest
from cffi import cparser, model

from cthreads.backend.native import header_cache

HEADER = "typedef struct { int a; double b; } S; struct T { int c; }; typedef int (*F)(S *, int);"


def _parsed():
    parser = cparser.Parser()
    parser.parse(HEADER)
    return parser


def _round_trip(types):
    parser = _parsed()
    classes = header_cache._model_classes()
    doc = json.loads(json.dumps(header_cache._encode(header_cache.parser_state(parser), classes,
                                                   types(parser))))
    return parser, header_cache._decode(doc, classes, cparser.Parser)


def test_parsed_types_come_back_on_the_declared_objects():
    def types(p):
        return {s: p.parse_type_and_quals(s) for s in ("S *", "S[]", "struct T *", "F",
                                                       "int(S *, double)")}

    parser, (state, back) = _round_trip(types)
    assert set(back) == {"S *", "S[]", "struct T *", "F", "int(S *, double)"}
    declared_s = state["_declarations"]["typedef S"][0]
    assert back["S *"][0].totype is declared_s
    assert back["S[]"][0].item is declared_s
    assert back["struct T *"][0].totype is state["_declarations"]["struct T"][0]
    for s, (tp, quals) in back.items():              # what a parse gives, by its C name
        fresh, fresh_quals = parser.parse_type_and_quals(s)
        assert quals == fresh_quals and repr(tp) == repr(fresh)
        assert type(tp) is type(fresh)


def test_a_parsed_type_with_a_struct_of_its_own_is_left_out():
    def types(p):
        own = model.StructType("U", ["x"], [model.PrimitiveType("int")], [-1])
        return {"S *": p.parse_type_and_quals("S *"), "U *": (model.PointerType(own), 0),
                "U": (own, 0)}

    _, (_, back) = _round_trip(types)
    assert set(back) == {"S *"}


def test_an_entry_with_a_bad_parsed_type_is_refused():
    parser = _parsed()
    classes = header_cache._model_classes()
    doc = header_cache._encode(header_cache.parser_state(parser), classes,
                             {"S *": parser.parse_type_and_quals("S *")})
    doc["types"] = {"D": [["S *", ["not a type", 0]]]}
    with pytest.raises(ValueError):         # a parsed type that is no cffi type is refused
        header_cache._decode(json.loads(json.dumps(doc)), classes, cparser.Parser)
