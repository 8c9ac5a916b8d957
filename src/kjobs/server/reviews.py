"""The reviews: who a request's user is, what it may do, and what another user may do (pure; nothing is stored).

kube-apiserver answers the self reviews from the request's user (pkg/registry/authentication/selfsubjectreview/
rest.go, pkg/registry/authorization/selfsubjectaccessreview/rest.go, .../selfsubjectrulesreview/rest.go in
kubernetes/kubernetes), and `SubjectAccessReview` / `LocalSubjectAccessReview` from the user their spec names
(pkg/registry/authorization/subjectaccessreview/rest.go, .../localsubjectaccessreview/rest.go; the attributes:
pkg/registry/authorization/util/helpers.go). Validation is pkg/apis/authorization/validation/validation.go, its
selector checks those of apimachinery's metav1 validation with unknown operators allowed
(`AllowUnknownOperatorInRequirement`). What a user may do is `kjobs.server.rbac`'s answer.

`AuthorizeWithSelectors` (beta and on in 1.32) is on: a review's `fieldSelector`/`labelSelector` are kept and
validated, and one the authorizer could not parse is named in `status.evaluationError` (`BuildEvaluationError`).
The RBAC authorizer does not look at selectors (nor does kube-apiserver's): they change no decision.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, invalid
from kjobs.api.selectors import parse_field_selector, parse_label_selector
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_label_value
from kjobs.api.validation_meta import validate_label_name
from kjobs.server.authz import Attributes, UserInfo
from kjobs.server.rbac import RbacAuthorizer

AUTHORIZATION = "authorization.k8s.io"
SUBJECT_REVIEWS = ("SubjectAccessReview", "LocalSubjectAccessReview")


def review(kind: str, body: Obj, user: UserInfo, now: str, rbac: RbacAuthorizer, namespace: str = "") -> Obj:
    """The answer to creating a review of `kind` (the body has passed the schema's field checks) in `namespace`
    (a `LocalSubjectAccessReview`'s); what a user may do is `rbac`'s answer."""
    if kind == "SelfSubjectReview":
        return {
            "kind": kind,
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user.to_json()},
        }
    if kind == "SelfSubjectAccessReview":
        return _access_review(body, user, rbac)
    if kind == "SelfSubjectRulesReview":
        return _rules_review(body, user, rbac)
    if kind in SUBJECT_REVIEWS:
        return _subject_access_review(kind, body, rbac, namespace)
    raise bad_request(f"not a review: {kind}")


def _spec(body: Obj) -> Obj:
    spec = body.get("spec") or {}
    return spec if isinstance(spec, dict) else {}


def _attributes_errors(spec: Obj) -> list[FieldError]:
    """`ValidateSelfSubjectAccessReviewSpec`: exactly one of the attributes, and valid selectors."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errors: list[FieldError] = []
    if resource is not None and non_resource is not None:
        errors.append(
            FieldError(
                "spec.nonResourceAttributes",
                ErrorType.FieldValueInvalid,
                "cannot be specified in combination with resourceAttributes",
                non_resource,
            )
        )
    if resource is None and non_resource is None:
        errors.append(
            FieldError(
                "spec.resourceAttributes",
                ErrorType.FieldValueInvalid,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                None,
            )
        )
    if isinstance(resource, dict):
        errors += _selector_errors(resource.get("fieldSelector"), "spec.resourceAttributes.fieldSelector", False)
        errors += _selector_errors(resource.get("labelSelector"), "spec.resourceAttributes.labelSelector", True)
    return errors


def _selector_errors(selector: Any, path: str, labels: bool) -> list[FieldError]:
    """`validateFieldSelectorAttributes` / `validateLabelSelectorAttributes`: a raw selector or requirements,
    not both; each requirement as metav1's `Validate{Field,Label}SelectorRequirement` checks it, an unknown
    operator allowed (a newer client's)."""
    if not isinstance(selector, dict):
        return []
    errors: list[FieldError] = []
    raw, requirements = selector.get("rawSelector") or "", selector.get("requirements") or []
    if raw and requirements:
        errors.append(
            FieldError(
                f"{path}.rawSelector",
                ErrorType.FieldValueInvalid,
                "may not specified at the same time as requirements",
                raw,
            )
        )
    if not raw and not requirements:
        errors.append(
            FieldError(
                f"{path}.requirements",
                ErrorType.FieldValueRequired,
                f"when {path} is specified, requirements or rawSelector is required",
            )
        )
    for i, requirement in enumerate(requirements if isinstance(requirements, list) else []):
        item = f"{path}.requirements[{i}]"
        requirement = requirement if isinstance(requirement, dict) else {}
        key, operator = str(requirement.get("key") or ""), requirement.get("operator") or ""
        values = requirement.get("values") or []
        if not labels and not key:
            errors.append(FieldError(f"{item}.key", ErrorType.FieldValueRequired, "must be specified"))
        if operator in ("In", "NotIn") and not values:
            errors.append(
                FieldError(
                    f"{item}.values",
                    ErrorType.FieldValueRequired,
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )
            )
        elif operator in ("Exists", "DoesNotExist") and values:
            errors.append(
                FieldError(
                    f"{item}.values",
                    ErrorType.FieldValueForbidden,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
        if labels:
            validate_label_name(key, f"{item}.key", errors)
            for j, value in enumerate(values if isinstance(values, list) else []):
                for message in is_label_value(str(value)):
                    errors.append(FieldError(f"{item}.values[{j}]", ErrorType.FieldValueInvalid, message, value))
    return errors


def _metadata_errors(body: Obj, *, keep_namespace: bool = False) -> list[FieldError]:
    """The review's metadata must be empty (but for `managedFields`, and a local review's namespace)."""
    meta = {
        k: v
        for k, v in (body.get("metadata") or {}).items()
        if k != "managedFields" and not (keep_namespace and k == "namespace") and v not in (None, "", {}, [])
    }
    if not meta:
        return []
    if keep_namespace:
        return [FieldError("metadata", ErrorType.FieldValueInvalid, "must be empty except for namespace", meta)]
    return [FieldError("metadata", ErrorType.FieldValueInvalid, "must be empty", meta)]


def _access_review(body: Obj, user: UserInfo, rbac: RbacAuthorizer) -> Obj:
    spec = _spec(body)
    errors = _attributes_errors(spec) + _metadata_errors(body)
    if errors:
        raise invalid("SelfSubjectAccessReview", "", errors, group=AUTHORIZATION)
    kept = _omit_empty(spec)
    return {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": f"{AUTHORIZATION}/v1",
        "metadata": {"creationTimestamp": None},
        "spec": kept,
        "status": _status(rbac, user, kept),
    }


def _subject_access_review(kind: str, body: Obj, rbac: RbacAuthorizer, namespace: str) -> Obj:
    """`SubjectAccessReview` (cluster-scoped) or `LocalSubjectAccessReview` (in `namespace`, whose resource
    attributes must name it and which takes no non-resource attributes): what the user of `spec.user`,
    `spec.groups`, `spec.uid`, `spec.extra` may do. No group is added to the ones named (upstream's
    `AuthorizationAttributesFrom` adds none: a review about `jane` alone is not about `system:authenticated`)."""
    spec = _spec(body)
    errors = _attributes_errors(spec)
    groups = spec.get("groups") or []
    if not spec.get("user") and not groups:
        errors.insert(
            len(errors) - _selector_count(errors),
            FieldError("spec.user", ErrorType.FieldValueInvalid, "at least one of user or group must be specified", ""),
        )
    local = kind == "LocalSubjectAccessReview"
    errors += _metadata_errors(body, keep_namespace=local)
    if local:
        resource = spec.get("resourceAttributes")
        if isinstance(resource, dict) and (resource.get("namespace") or "") != namespace:
            errors.append(
                FieldError(
                    "spec.resourceAttributes.namespace",
                    ErrorType.FieldValueInvalid,
                    "must match metadata.namespace",
                    resource.get("namespace") or "",
                )
            )
        if spec.get("nonResourceAttributes") is not None:
            errors.append(
                FieldError(
                    "spec.nonResourceAttributes",
                    ErrorType.FieldValueInvalid,
                    "disallowed on this kind of request",
                    spec["nonResourceAttributes"],
                )
            )
    if errors:
        raise invalid(kind, "", errors, group=AUTHORIZATION)
    kept = _omit_empty(spec)
    extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    subject = UserInfo(
        str(spec.get("user") or ""),
        tuple(str(g) for g in groups),
        tuple((str(k), tuple(str(v) for v in values or ())) for k, values in (extra or {}).items()),
        str(spec.get("uid") or ""),
    )
    meta: Obj = {"namespace": namespace, "creationTimestamp": None} if local else {"creationTimestamp": None}
    return {
        "kind": kind,
        "apiVersion": f"{AUTHORIZATION}/v1",
        "metadata": meta,
        "spec": kept,
        "status": _status(rbac, subject, kept),
    }


def _selector_count(errors: list[FieldError]) -> int:
    """How many of `errors` are the selector checks (upstream runs them after the subject check)."""
    return sum(1 for e in errors if ".fieldSelector" in e.field or ".labelSelector" in e.field)


def _omit_empty(value: Any) -> Any:
    """The spec as Go writes it back: empty strings, lists and maps left out (every field of the attributes is
    `omitempty`), except a selector requirement's `key` and `operator`."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            kept = _omit_empty(item)
            if kept in (None, "", [], {}) and key not in ("key", "operator"):
                continue
            out[key] = kept
        return out
    if isinstance(value, list):
        return [_omit_empty(item) for item in value]
    return value


def _status(rbac: RbacAuthorizer, user: UserInfo, spec: Obj) -> Obj:
    """`SubjectAccessReviewStatus`: the decision, the authorizer's reason, and what could not be evaluated."""
    allowed, reason = rbac.authorize(user, _attributes(spec))
    status: Obj = _decision(allowed, reason)
    evaluation = _evaluation_errors(spec.get("resourceAttributes"))
    if evaluation:
        status["evaluationError"] = evaluation
    return status


def _evaluation_errors(resource: Any) -> str:
    """`BuildEvaluationError`: which selector the authorizer could not (fully) parse."""
    if not isinstance(resource, dict):
        return ""
    found = []
    for key, parse in (("fieldSelector", _field_requirements), ("labelSelector", _label_requirements)):
        selector = resource.get(key)
        if not isinstance(selector, dict):
            continue
        good, bad = parse(selector)
        if bad:
            how = "partially ignored" if good else "ignored"
            found.append(f"spec.resourceAttributes.{key} {how} due to parse error")
    return "; ".join(found)


def _field_requirements(selector: Obj) -> tuple[int, int]:
    """(parsed, refused) requirements of a field selector (`fieldSelectorAsSelector`: one value, In or NotIn)."""
    raw = selector.get("rawSelector") or ""
    if raw:
        try:
            return len(parse_field_selector(str(raw)).terms), 0
        except ApiError:
            return 0, 1
    good = bad = 0
    for requirement in selector.get("requirements") or []:
        values = requirement.get("values") or [] if isinstance(requirement, dict) else []
        operator = requirement.get("operator") if isinstance(requirement, dict) else None
        if operator in ("In", "NotIn") and len(values) == 1:
            good += 1
        else:
            bad += 1
    return good, bad


def _label_requirements(selector: Obj) -> tuple[int, int]:
    """(parsed, refused) requirements of a label selector (`labelSelectorAsSelector`: a known operator)."""
    raw = selector.get("rawSelector") or ""
    if raw:
        try:
            return len(parse_label_selector(str(raw)).requirements), 0
        except ApiError:
            return 0, 1
    good = bad = 0
    for requirement in selector.get("requirements") or []:
        operator = requirement.get("operator") if isinstance(requirement, dict) else None
        if operator in ("In", "NotIn", "Exists", "DoesNotExist"):
            good += 1
        else:
            bad += 1
    return good, bad


def _decision(allowed: bool, reason: str) -> Obj:
    """`SubjectAccessReviewStatus`: `allowed`, and the authorizer's reason when it gave one."""
    return {"allowed": allowed, "reason": reason} if reason else {"allowed": allowed}


def _rules_review(body: Obj, user: UserInfo, rbac: RbacAuthorizer) -> Obj:
    """`RulesFor` in the namespace asked, split as `getResourceRules` / `getNonResourceRules` split the rules; a
    missing role makes it `incomplete`, with the errors as `evaluationError` (an aggregate's text)."""
    spec = body.get("spec") or {}
    if not isinstance(spec, dict) or not spec.get("namespace"):
        raise bad_request("no namespace on request")
    found = rbac.rules_for(user, str(spec["namespace"]))
    resource_rules: list[Obj] = []
    non_resource_rules: list[Obj] = []
    for rule in found.rules:
        verbs = list(rule.get("verbs") or [])
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": verbs, "nonResourceURLs": list(rule["nonResourceURLs"])})
            continue
        out: Obj = {"verbs": verbs}
        for key in ("apiGroups", "resources", "resourceNames"):
            if rule.get(key):
                out[key] = list(rule[key])
        resource_rules.append(out)
    status: Obj = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if found.errors:
        status["incomplete"] = True
        errors = found.errors
        status["evaluationError"] = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": status,
    }


def _attributes(spec: Obj) -> Attributes:
    """What an access review asks about (`ResourceAttributesFrom` / `NonResourceAttributesFrom`)."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(
            str(resource.get("verb") or ""),
            str(resource.get("resource") or ""),
            group=str(resource.get("group") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=str(resource.get("namespace") or ""),
            name=str(resource.get("name") or ""),
        )
    path = spec.get("nonResourceAttributes") or {}
    return Attributes(str(path.get("verb") or ""), path=str(path.get("path") or ""), is_resource=False)
