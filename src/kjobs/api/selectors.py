"""Label and field selectors: parsing with Kubernetes' grammar and error messages, and matching objects.

Owns the two query languages of list and watch requests (`labelSelector=`, `fieldSelector=`) and the
`spec.selector` object form (`matchLabels` / `matchExpressions`). Parsing follows apimachinery's
`labels.Parse` (a small lexer plus recursive descent; requirements sorted by key) and `fields.ParseSelector`
(comma-split with `\\,` escapes, first `!=`/`==`/`=` splits a term). Errors are raised as 400 BadRequest
carrying the text Kubernetes sends, e.g. `unable to parse requirement: found '', expected: identifier`.

Field selectors are evaluated generically on the object's JSON path (`spec.nodeName`, `involvedObject.uid`,
...), absent fields reading as the empty string; a few selectable fields Kubernetes computes rather than reads
(`source` of events, `status.successful` of jobs, typed booleans) are mapped in `_FIELD_ALIASES` and
`_FIELD_DEFAULTS`. `FIELD_LABELS` lists what a real API server accepts per resource, for servers that want to
reject unknown field labels as Kubernetes does (`field label not supported: x`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, not_supported
from kjobs.api.events_v1 import FIELD_LABELS as EVENTS_V1_FIELD_LABELS
from kjobs.api.goints import go_atoi
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_label_value, is_qualified_name

# --- label selectors -----------------------------------------------------------------------------------------

EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
IN = "in"
NOT_IN = "notin"
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_OPERATOR_TEXT = {
    EQUALS: "=",
    DOUBLE_EQUALS: "==",
    NOT_EQUALS: "!=",
    IN: " in ",
    NOT_IN: " notin ",
    GREATER_THAN: ">",
    LESS_THAN: "<",
}


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement (`key op values`); `values` sorted and unique, as Kubernetes keeps them."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement (Kubernetes' `Requirement.Matches`)."""
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in (NOT_EQUALS, NOT_IN):
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if value is None or len(self.values) != 1:
            return False
        have, want = go_atoi(value), go_atoi(self.values[0])  # strconv.ParseInt: no blanks, "_" or non-ASCII
        if have is None or want is None:
            return False
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            values = f"({values})"
        return self.key + _OPERATOR_TEXT[self.operator] + values


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A conjunction of requirements. `nothing=True` is Kubernetes' `labels.Nothing()` (a nil `spec.selector`)."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (matches every object)."""
        return not self.requirements and not self.nothing

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies every requirement."""
        if self.nothing:
            return False
        return all(r.matches_labels(labels) for r in self.requirements)

    def matches(self, obj: Obj) -> bool:
        """Whether an object's `metadata.labels` satisfy the selector."""
        if self.nothing:
            return False
        if not self.requirements:
            return True
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches_labels(labels) for r in self.requirements)

    def exact_match(self, key: str) -> str | None:
        """The single value `key` must have (`key=v`, `key==v`, `key in (v)`), if the selector pins one."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def _aggregate(errors: list[FieldError]) -> str:
    """Go's `ErrorList.ToAggregate().Error()`: one error as is, several in brackets."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _key_error(key: str, path: str) -> FieldError | None:
    problems = is_qualified_name(key)
    if not problems:
        return None
    return FieldError(path, ErrorType.FieldValueInvalid, "; ".join(problems), key)


def new_requirement(key: str, operator: str, values: list[str]) -> Requirement:
    """Build and validate a requirement as Kubernetes' `labels.NewRequirement` (raises 400 on bad input)."""
    errors: list[FieldError] = []
    key_error = _key_error(key, "key")
    if key_error is not None:
        errors.append(key_error)
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(
                FieldError(
                    "values", ErrorType.FieldValueInvalid, "for 'in', 'notin' operators, values set can't be empty"
                )
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errors.append(
                FieldError("values", ErrorType.FieldValueInvalid, "exact-match compatibility requires one single value")
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(
                FieldError(
                    "values", ErrorType.FieldValueInvalid, "values set must be empty for exists and does not exist"
                )
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errors.append(
                FieldError(
                    "values", ErrorType.FieldValueInvalid, "for 'Gt', 'Lt' operators, exactly one value is required"
                )
            )
        for i, value in enumerate(values):
            if go_atoi(value) is None:
                errors.append(
                    FieldError(
                        f"values[{i}]",
                        ErrorType.FieldValueInvalid,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                        value,
                    )
                )
    else:
        errors.append(not_supported("operator", operator, (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)))
    for i, value in enumerate(values):
        problems = is_label_value(value)
        if problems:
            errors.append(FieldError(f"values[{i}][{key}]", ErrorType.FieldValueInvalid, "; ".join(problems), value))
    if errors:
        raise _SelectorSyntaxError(_aggregate(errors))
    return Requirement(key, operator, tuple(values))


class _SelectorSyntaxError(Exception):
    """Internal: a parse failure carrying Kubernetes' message; surfaced as a 400 BadRequest."""


class _Tok(IntEnum):
    END = 1
    CLOSE = 2
    COMMA = 3
    BANG = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER = 7
    IDENT = 8
    IN = 9
    LESS = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN = 13


_SYMBOLS = {
    ")": _Tok.CLOSE,
    ",": _Tok.COMMA,
    "!": _Tok.BANG,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER,
    "<": _Tok.LESS,
    "!=": _Tok.NOT_EQUALS,
    "(": _Tok.OPEN,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOT_IN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_TOKENS = {
    _Tok.IN: IN,
    _Tok.EQUALS: EQUALS,
    _Tok.DOUBLE_EQUALS: DOUBLE_EQUALS,
    _Tok.GREATER: GREATER_THAN,
    _Tok.LESS: LESS_THAN,
    _Tok.NOT_IN: NOT_IN,
    _Tok.NOT_EQUALS: NOT_EQUALS,
}


def _lex(text: str) -> list[tuple[_Tok, str]]:
    """Split a label selector into tokens; symbols are matched greedily (`!=` before `!`)."""
    tokens: list[tuple[_Tok, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append((_Tok.END, ""))
            return tokens
        if text[i] in _SPECIAL:
            best = text[i]
            j = i + 1
            while j < n and text[j] in _SPECIAL and text[i : j + 1] in _SYMBOLS:
                best = text[i : j + 1]
                j += 1
            tokens.append((_SYMBOLS[best], best))
            i += len(best)
            continue
        j = i
        while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
            j += 1
        word = text[i:j]
        tokens.append((_KEYWORDS.get(word, _Tok.IDENT), word))
        i = j


class _Parser:
    """Recursive descent over the token list. In value position `in`/`notin` are plain identifiers."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[_Tok, str]:
        tok, lit = self.tokens[self.pos]
        if values and tok in (_Tok.IN, _Tok.NOT_IN):
            tok = _Tok.IDENT
        return tok, lit

    def take(self, values: bool = True) -> tuple[_Tok, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok in (_Tok.IDENT, _Tok.BANG):
                try:
                    requirements.append(self.requirement())
                except _SelectorSyntaxError as err:
                    raise _SelectorSyntaxError(f"unable to parse requirement: {err}") from None
                tok, lit = self.take()
                if tok == _Tok.END:
                    return requirements
                if tok == _Tok.COMMA:
                    tok2, lit2 = self.peek()
                    if tok2 not in (_Tok.IDENT, _Tok.BANG):
                        raise _SelectorSyntaxError(f"found '{lit2}', expected: identifier after ','")
                else:
                    raise _SelectorSyntaxError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _Tok.END:
                return requirements
            else:
                raise _SelectorSyntaxError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        operator = ""
        tok, lit = self.take()
        if tok == _Tok.BANG:
            operator = DOES_NOT_EXIST
            tok, lit = self.take()
        if tok != _Tok.IDENT:
            raise _SelectorSyntaxError(f"found '{lit}', expected: identifier")
        key_error = _key_error(lit, "<nil>")
        if key_error is not None:
            raise _SelectorSyntaxError(str(key_error))
        key = lit
        if self.peek()[0] in (_Tok.END, _Tok.COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [])
        tok, lit = self.take(values=False)
        if tok not in _OPERATOR_TOKENS:
            raise _SelectorSyntaxError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        operator = _OPERATOR_TOKENS[tok]
        values = self.value_set() if operator in (IN, NOT_IN) else self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok != _Tok.OPEN:
            raise _SelectorSyntaxError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok in (_Tok.IDENT, _Tok.COMMA):
            values = self.identifiers()
            if self.take()[0] != _Tok.CLOSE:
                raise _SelectorSyntaxError(f"found '{lit}', expected: ')'")
            return values
        if tok == _Tok.CLOSE:
            self.take()
            return {""}
        raise _SelectorSyntaxError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _Tok.IDENT:
                values.add(lit)
                tok2, lit2 = self.peek()
                if tok2 == _Tok.COMMA:
                    continue
                if tok2 == _Tok.CLOSE:
                    return values
                raise _SelectorSyntaxError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _Tok.COMMA:
                if not values:
                    values.add("")
                tok2 = self.peek()[0]
                if tok2 == _Tok.CLOSE:
                    values.add("")
                    return values
                if tok2 == _Tok.COMMA:
                    values.add("")
                continue
            raise _SelectorSyntaxError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_Tok.END, _Tok.COMMA):
            return {""}
        tok, lit = self.take()
        if tok == _Tok.IDENT:
            return {lit}
        raise _SelectorSyntaxError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a `labelSelector` query string; empty means everything. Bad syntax raises 400 BadRequest."""
    if not text:
        return EVERYTHING
    try:
        requirements = _Parser(text).parse()
    except _SelectorSyntaxError as err:
        raise bad_request(str(err)) from None
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


_EXPRESSION_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_object(selector: Obj | None) -> LabelSelector:
    """Convert a `metav1.LabelSelector` (e.g. a Job's `spec.selector`) as `LabelSelectorAsSelector` does.

    A missing selector matches nothing; an empty one matches everything. Invalid content raises 400.
    """
    if selector is None:
        return NOTHING
    match_labels: Mapping[str, Any] = selector.get("matchLabels") or {}
    expressions: list[Obj] = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    try:
        for key, value in match_labels.items():
            requirements.append(new_requirement(str(key), EQUALS, [str(value)]))
        for expr in expressions:
            op_name = expr.get("operator")
            operator = _EXPRESSION_OPERATORS.get(op_name) if isinstance(op_name, str) else None
            if operator is None:
                raise _SelectorSyntaxError(f'"{op_name or ""}" is not a valid label selector operator')
            values = [str(v) for v in expr.get("values") or []]
            requirements.append(new_requirement(str(expr.get("key") or ""), operator, values))
    except _SelectorSyntaxError as err:
        raise bad_request(str(err)) from None
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


def format_label_selector(selector: Obj | None) -> str:
    """`metav1.FormatLabelSelector`: the text kubectl shows in a Job's SELECTOR column (`<none>` if empty)."""
    if selector is None:
        return "<none>"
    try:
        text = str(label_selector_from_object(selector))
    except ApiError:
        return "<error>"
    return text or "<none>"


# --- field selectors -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldTerm:
    """`field=value` (or `field!=value` when `negate`)."""

    field: str
    value: str
    negate: bool = False

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{'!=' if self.negate else '='}{escaped}"


_FIELD_ALIASES = {
    "source": "source.component",
    "status.successful": "status.succeeded",
}
"""Selectable field names whose value Kubernetes computes from a differently named field."""

_FIELD_DEFAULTS = {
    "spec.unschedulable": "false",
    "spec.hostNetwork": "false",
    "status.successful": "0",
}
"""Typed fields whose Go zero value (what Kubernetes matches when the field is omitted) is not the empty string."""


def _field_path(field: str) -> tuple[str, ...]:
    path = _PATHS.get(field)
    if path is None:
        path = _PATHS[field] = tuple(_FIELD_ALIASES.get(field, field).split("."))
    return path


_PATHS: dict[str, tuple[str, ...]] = {}


def field_value(obj: Obj, field: str) -> str:
    """The string a field selector compares for `field` (dotted JSON path; absent → Kubernetes' zero value)."""
    node: Any = obj
    for part in _field_path(field):
        if not isinstance(node, dict):
            node = None
            break
        node = node.get(part)
    if node is None or isinstance(node, (dict, list)):
        return _FIELD_DEFAULTS.get(field, "")
    if isinstance(node, str):
        return node
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A conjunction of field terms; the empty selector matches everything."""

    terms: tuple[FieldTerm, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything."""
        return not self.terms

    def matches(self, obj: Obj) -> bool:
        """Whether every term holds for the object."""
        return all((field_value(obj, t.field) == t.value) != t.negate for t in self.terms)

    def matches_fields(self, fields: Mapping[str, str], load: Callable[[], Obj]) -> bool:
        """Match against precomputed field values (see `selectable_fields`), loading the object only for others."""
        obj: Obj | None = None
        for term in self.terms:
            value = fields.get(term.field)
            if value is None:
                if obj is None:
                    obj = load()
                value = field_value(obj, term.field)
            if (value == term.value) == term.negate:
                return False
        return True

    def exact_match(self, field: str) -> str | None:
        """The value `field` must equal, if some `field=value` term pins it."""
        for term in self.terms:
            if term.field == field and not term.negate:
                return term.value
        return None

    def check_supported(self, resource: str) -> None:
        """Raise 400 `field label not supported: x` for a field the real API server does not index."""
        allowed = FIELD_LABELS.get(resource, _METADATA_FIELDS)
        for term in self.terms:
            if term.field not in allowed:
                raise bad_request(f"field label not supported: {term.field}")

    def converted(self, resource: str) -> FieldSelector:
        """The selector as the API server applies it: unsupported labels refused (`check_supported`), and old
        clients' aliases renamed (a pod's `spec.host` is `spec.nodeName`, pkg/apis/core/v1/conversion.go)."""
        self.check_supported(resource)
        aliases = FIELD_ALIASES.get(resource)
        if not aliases or not any(t.field in aliases for t in self.terms):
            return self
        return FieldSelector(
            tuple(FieldTerm(aliases.get(t.field, t.field), t.value, negate=t.negate) for t in self.terms)
        )

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)


_METADATA_FIELDS = frozenset({"metadata.name", "metadata.namespace"})

FIELD_LABELS: dict[str, frozenset[str]] = {
    "pods": _METADATA_FIELDS
    | {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",  # accepted by the conversion, but no pod field set holds it: it matches as ""
        "status.nominatedNodeName",
        "spec.host",  # an old client's name for spec.nodeName (FIELD_ALIASES)
    },
    "events": _METADATA_FIELDS
    | {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    },
    "events.events.k8s.io": frozenset(EVENTS_V1_FIELD_LABELS),  # events.k8s.io/v1's names for the same fields
    "jobs.batch": _METADATA_FIELDS | {"status.successful"},
    # cluster-scoped kinds with conversion functions of their own accept no metadata.namespace
    "nodes": frozenset({"metadata.name", "spec.unschedulable"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
    "secrets": _METADATA_FIELDS | {"type"},  # pkg/registry/core/secret/strategy.go SelectableFields
    "services": _METADATA_FIELDS | {"spec.clusterIP", "spec.type"},  # pkg/registry/core/service/strategy.go
}
"""Field labels a Kubernetes API server accepts per resource: each kind's field label conversion function
(pkg/apis/core/v1/conversion.go and its kin), or `metadata.name`/`metadata.namespace` for a kind without one."""

FIELD_ALIASES: dict[str, dict[str, str]] = {"pods": {"spec.host": "spec.nodeName"}}
"""Labels the conversion renames before selecting (old v1 clients send `spec.host`)."""


def selectable_fields(
    resource: str, obj: Obj, prev: Obj | None = None, known: dict[str, str] | None = None
) -> dict[str, str]:
    """The values of every field label `resource` supports, for stores that index them once per write.

    `prev` and `known`, for an update: the version it replaces and that version's fields. Where `obj` holds the
    very object `prev` holds under a top-level key (`is`: a pod's status write keeps the stored `spec`, the Job
    controller's finalizer removal its `status` too), the fields under that key are `known`'s, unread: for the
    store, whose stored objects are read-only once written (`kjobs.store.mutation`), the same object holds the
    same values, and a field's value is a function of what its path leads to.

    Values other than the name are interned as read (`known`'s are already): the store keeps them for as long as
    the object is stored, and most repeat across objects (see `kjobs.store.events.index_of`)."""
    reader = _PLANS.get(resource)
    if reader is None:
        fields = FIELD_LABELS.get(resource, _METADATA_FIELDS) - FIELD_ALIASES.get(resource, {}).keys()
        reader = _PLANS[resource] = _reader(_plan(sorted(fields)))
    return reader(obj, prev, known)


_Field = tuple[str, str | None, tuple[str, ...], str]
"""A field label, the second key of its path (None: a one-key path), the keys after that, its zero value."""

_Plan = tuple[tuple[str, tuple[_Field, ...]], ...]
"""Per run of fields sharing a path's first key: that key and its fields."""

_Reader = Callable[[Any, Any, "dict[str, str] | None"], dict[str, str]]

_PLANS: dict[str, _Reader] = {}
"""Per resource, `selectable_fields`' reader of its plan (dropped when a custom resource's fields change)."""


def _plan(fields: list[str]) -> _Plan:
    """`selectable_fields`' plan for `fields`, in their order (the values dict keeps it)."""
    groups: list[tuple[str, list[_Field]]] = []
    for field in fields:
        path = _field_path(field)
        if not groups or groups[-1][0] != path[0]:
            groups.append((path[0], []))
        groups[-1][1].append((field, path[1] if len(path) > 1 else None, path[2:], _FIELD_DEFAULTS.get(field, "")))
    return tuple((top, tuple(group)) for top, group in groups)


def _reader(plan: _Plan) -> _Reader:
    """A plan made into straight code, as `dataclasses` makes its methods: each field's path read with no loop
    over the plan and no tuple unpacked a field (this runs for every stored write, four a pod). Fields under the
    same top-level key (a pod's `metadata`, `spec`, `status`) read that key once; a top-level member that is
    `prev`'s own takes its fields from `known` when `known` has them all (else they are read, as `known` is of
    another plan when a custom resource's fields changed). Values: a string as it is, the field's zero for an
    absent value, null, map or list, else `field_value`'s rendering; each interned where it is read but the name
    (unique to its object), so that no pass over the values is needed to intern them."""
    lines = ["def read(obj, prev, known):", "    values = {}", "    whole = type(obj) is dict"]
    lines.append("    if known is not None and (not whole or type(prev) is not dict):")
    lines.append("        known = None")
    namespace: dict[str, Any] = {"field_value": field_value, "intern": sys.intern}
    for top, group in plan:
        lines.append(f"    base = obj.get({top!r}) if whole else None")
        have = " and ".join(f"{field!r} in known" for field, _, _, _ in group)
        lines.append(f"    if known is not None and base is prev.get({top!r}) and {have}:")
        lines += [f"        values[{field!r}] = known[{field!r}]" for field, _, _, _ in group]
        lines.append("    else:")
        lines.append("        nested = type(base) is dict")
        for field, key, more, zero in group:
            zero_name = f"zero_{len(namespace)}"
            namespace[zero_name] = sys.intern(zero)
            kept = "{}" if field == "metadata.name" else "intern({})"
            if key is None:
                lines.append("        node = base")
            else:
                lines.append(f"        node = base.get({key!r}) if nested else None")
                lines += [f"        node = node.get({part!r}) if type(node) is dict else None" for part in more]
            lines.append("        if type(node) is str:")
            lines.append(f"            values[{field!r}] = {kept.format('node')}")
            lines.append("        elif node is None or type(node) is dict or type(node) is list:")
            lines.append(f"            values[{field!r}] = {zero_name}")
            lines.append("        else:")
            lines.append(f"            values[{field!r}] = {kept.format(f'field_value(obj, {field!r})')}")
    lines.append("    return values")
    exec(compile("\n".join(lines), "<selectable_fields>", "exec"), namespace)  # made from the field labels
    reader: _Reader = namespace["read"]
    return reader


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start, escaped = 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse a `fieldSelector` query string (`a=b,c!=d`, empty values allowed). Bad syntax raises 400."""
    if not text:
        return FieldSelector()
    terms: list[FieldTerm] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        for i in range(len(part)):
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op) :]
                terms.append(FieldTerm(lhs, _unescape(rhs), negate=op == "!="))
                break
        else:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
    return FieldSelector(tuple(terms))
