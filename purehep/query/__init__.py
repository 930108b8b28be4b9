"""The query-string language shared by purehep.table and purehep.index.

``parse(text)`` builds a tree of frozen dataclasses (:class:`Compare`, :class:`Between`,
:class:`In`, :class:`IsNull`, :class:`And`, :class:`Or`, :class:`Not`);
``evaluate(expr, columns, missing)`` computes the bool mask over 1-D numpy columns;
``fields(expr)`` lists the names it reads.
"""
from .evaluate import compare, evaluate
from .expr import OPS, And, Between, Compare, Field, In, IsNull, Not, Or, fields
from .parser import QuerySyntaxError, parse

__all__ = ["parse", "evaluate", "fields", "compare", "QuerySyntaxError", "OPS",
           "Compare", "Field", "Between", "In", "IsNull", "And", "Or", "Not"]
