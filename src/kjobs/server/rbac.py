"""RBAC authorization over the stored roles and bindings (kube-apiserver's RBAC authorizer).

What a user may do is the union of the rules of the roles its bindings reference: every ClusterRoleBinding, and
the RoleBindings of the request's namespace, whose subjects include the user (by name), one of its groups, or,
for a ServiceAccount subject, `system:serviceaccount:NAMESPACE:NAME` (a RoleBinding's account without a
namespace is of the binding's namespace). Sources, in kubernetes/kubernetes: plugin/pkg/auth/authorizer/rbac/
rbac.go (`Authorize`, `RuleAllows`, `RulesFor`), pkg/registry/rbac/validation/rule.go (`VisitRulesFor`,
`appliesTo`, `GetRoleReferenceRules`) and pkg/apis/rbac/v1/evaluation_helpers.go (the matchers). A binding whose
role is missing grants nothing and its error becomes the Forbidden's `RBAC: ...` reason, as upstream.

kube-apiserver reads informer caches, never etcd, per request; here an index kept from store watches on the four
kinds does that: a request reads only the bindings filed under its user's name and groups, then their roles.
The watches are drained when an authorization needs the index (a write's events are in their queues before the
write returns, so a request after a write sees it). `system:masters` never gets here: the privileged-group
authorizer in front of RBAC allows it everything (`kjobs.server.app`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from kjobs.api.errors import bad_request, forbidden, go_quote
from kjobs.api.types import Obj
from kjobs.api.validation_meta import semantic_equal
from kjobs.server.authz import MASTERS, Attributes, UserInfo
from kjobs.store.events import EventType
from kjobs.store.watch import Watch

GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLE_BINDINGS = f"clusterrolebindings.{GROUP}"
ROLE_BINDINGS = f"rolebindings.{GROUP}"
CLUSTER_ROLES = f"clusterroles.{GROUP}"
ROLES = f"roles.{GROUP}"
WATCHED = (CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS, CLUSTER_ROLES, ROLES)
WATCH_QUEUE = 100_000
"""How far the index may fall behind its watches before one is dropped (then it is built again)."""

SubjectKey = tuple[str, str, str]
"""(binding namespace, `User` or `Group`, name): a ServiceAccount subject is filed as the User it names."""


def _matches(values: list[str], wanted: str) -> bool:
    return wanted in values or "*" in values


def resource_matches(rule: Obj, combined: str, subresource: str) -> bool:
    """`ResourceMatches`: `*`, the exact `resource/subresource`, or `*/subresource`."""
    for resource in rule.get("resources") or ():
        if resource == "*" or resource == combined:
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def url_matches(rule: Obj, path: str) -> bool:
    """`NonResourceURLMatches`: `*`, the exact path, or a prefix ending in `*`."""
    for url in rule.get("nonResourceURLs") or ():
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Obj) -> bool:
    """`RuleAllows`: the verb, then the API group, resource and name of a resource request, or the path of
    another."""
    if not _matches(rule.get("verbs") or [], attrs.verb):
        return False
    if not attrs.is_resource:
        return url_matches(rule, attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("apiGroups") or [], attrs.group)
        and resource_matches(rule, combined, attrs.subresource)
        and (not names or attrs.name in names)
    )


@dataclass(frozen=True)
class _Binding:
    namespace: str
    name: str
    role_kind: str
    role_name: str
    keys: tuple[SubjectKey, ...]
    described: tuple[tuple[SubjectKey, str], ...] = ()
    """Each subject's key with its `describeSubject` text, in the binding's order (for an allow's reason)."""

    def describe(self, user: UserInfo) -> str:
        """The bindings' describers of rule.go: `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`, or
        `RoleBinding "x/ns" of Role "y" to ServiceAccount "sa/ns"`, with the first subject that names `user`
        (`appliesTo`)."""
        names = {("User", user.username), *(("Group", g) for g in user.groups)}
        subject = next((text for (_, kind, name), text in self.described if (kind, name) in names), "")
        if self.namespace:
            where = f"RoleBinding {go_quote(self.name + '/' + self.namespace)}"
        else:
            where = f"ClusterRoleBinding {go_quote(self.name)}"
        return f"{where} of {self.role_kind} {go_quote(self.role_name)} to {subject}"


def _subjects(binding: Obj, namespace: str) -> list[tuple[SubjectKey, str]]:
    """`appliesTo`, as index keys: whom each subject of a binding (in `namespace`, "" for a cluster one) names,
    with the subject as `describeSubject` writes it (a ServiceAccount as `name/namespace`)."""
    found: list[tuple[SubjectKey, str]] = []
    for subject in binding.get("subjects") or ():
        if type(subject) is not dict:
            continue
        kind, name = subject.get("kind"), str(subject.get("name") or "")
        if kind in ("User", "Group"):
            found.append(((namespace, kind, name), f"{kind} {go_quote(name)}"))
        elif kind == "ServiceAccount":
            account_namespace = str(subject.get("namespace") or namespace)
            if account_namespace:
                key = (namespace, "User", f"system:serviceaccount:{account_namespace}:{name}")
                found.append((key, f"ServiceAccount {go_quote(name + '/' + account_namespace)}"))
    return found


def _subject_keys(binding: Obj, namespace: str) -> tuple[SubjectKey, ...]:
    """The index keys of a binding's subjects (`_subjects`), each once."""
    return tuple(dict.fromkeys(key for key, _ in _subjects(binding, namespace)))


@dataclass
class Rules:
    """What `RulesFor` found: the rules that apply, and the errors met on the way (missing roles)."""

    rules: list[Obj]
    errors: list[str]


class RbacAuthorizer:
    """The RBAC authorizer over a store (`kjobs.store.Store`): index kept from watches, rules resolved per request."""

    def __init__(self, store: object) -> None:
        self.store = store
        self._watches: dict[str, Watch] = {}
        self._bindings: dict[tuple[str, str, str], _Binding] = {}
        self._by_subject: dict[SubjectKey, set[tuple[str, str, str]]] = {}
        self._rules: dict[tuple[str, str, str], list[Obj]] = {}

    def close(self) -> None:
        """Stop the watches."""
        for watch in self._watches.values():
            watch.close()
        self._watches.clear()

    # ------------------------------------------------------------------------------------------ the index

    def _refresh(self) -> None:
        for resource in WATCHED:
            watch = self._watches.get(resource)
            if watch is None or watch.closed:
                if watch is not None:  # fell behind: start this kind again from the store's state
                    self._forget_all(resource)
                watch = self.store.watch(resource, since=None, max_queue=WATCH_QUEUE)  # type: ignore[attr-defined]
                self._watches[resource] = watch
            for event in watch.drain():
                if event.type is EventType.BOOKMARK:
                    continue
                obj = event.object
                meta = obj.get("metadata") or {}
                key = (resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
                self._forget(key)
                if event.type is not EventType.DELETED:
                    self._remember(key, obj)

    def _remember(self, key: tuple[str, str, str], obj: Obj) -> None:
        resource, namespace, name = key
        if resource in (CLUSTER_ROLES, ROLES):
            self._rules[key] = [r for r in obj.get("rules") or () if type(r) is dict]
            return
        ref = obj.get("roleRef") or {}
        subjects = _subjects(obj, namespace)
        binding = _Binding(
            namespace,
            name,
            str(ref.get("kind") or ""),
            str(ref.get("name") or ""),
            tuple(dict.fromkeys(key for key, _ in subjects)),
            tuple(subjects),
        )
        self._bindings[key] = binding
        for subject in binding.keys:
            self._by_subject.setdefault(subject, set()).add(key)

    def _forget(self, key: tuple[str, str, str]) -> None:
        self._rules.pop(key, None)
        binding = self._bindings.pop(key, None)
        if binding is None:
            return
        for subject in binding.keys:
            filed = self._by_subject.get(subject)
            if filed is not None:
                filed.discard(key)
                if not filed:
                    del self._by_subject[subject]

    def _forget_all(self, resource: str) -> None:
        for key in [k for k in (*self._rules, *self._bindings) if k[0] == resource]:
            self._forget(key)

    # ------------------------------------------------------------------------------------------ resolution

    def _bindings_of(self, user: UserInfo, namespace: str) -> Iterator[_Binding]:
        """`VisitRulesFor`'s bindings: the cluster ones, then those of `namespace`, each by name."""
        for where, resource in (("", CLUSTER_ROLE_BINDINGS), (namespace, ROLE_BINDINGS)):
            if resource == ROLE_BINDINGS and not namespace:
                break
            found: set[tuple[str, str, str]] = set()
            for kind, name in (("User", user.username), *(("Group", g) for g in user.groups)):
                found |= {k for k in self._by_subject.get((where, kind, name), ()) if k[0] == resource}
            for key in sorted(found):
                yield self._bindings[key]

    def _role_rules(self, binding: _Binding) -> tuple[list[Obj], str]:
        """`GetRoleReferenceRules`: the referenced role's rules, or the lister's NotFound text."""
        if binding.role_kind == "Role":
            rules = self._rules.get((ROLES, binding.namespace, binding.role_name))
            return (rules, "") if rules is not None else ([], f'role.{GROUP} "{binding.role_name}" not found')
        if binding.role_kind == "ClusterRole":
            rules = self._rules.get((CLUSTER_ROLES, "", binding.role_name))
            return (rules, "") if rules is not None else ([], f'clusterrole.{GROUP} "{binding.role_name}" not found')
        return [], f"unsupported role reference kind: {binding.role_kind!r}"

    def authorize(self, user: UserInfo, attrs: Attributes, *, explain: bool = True) -> tuple[bool, str]:
        """(allowed, reason): `system:masters` always, without a reason (the privileged-group authorizer gives
        none); else whether a rule of the user's roles allows `attrs`, the reason naming the binding that did
        (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`: rbac.go's `authorizingVisitor`),
        or, when none does, `RBAC: ` and the errors met (missing roles). `explain=False`: no reason on allow (a
        request's own authorization, which shows none, does not pay for writing it)."""
        if MASTERS in user.groups:
            return True, ""
        self._refresh()
        errors: list[str] = []
        for binding in self._bindings_of(user, attrs.namespace):
            rules, error = self._role_rules(binding)
            if error:
                errors.append(error)
            if any(rule_allows(attrs, rule) for rule in rules):
                return True, f"RBAC: allowed by {binding.describe(user)}" if explain else ""
        if not errors:
            return False, ""
        return False, "RBAC: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")

    def allowed(self, user: UserInfo, attrs: Attributes) -> bool:
        """Whether `user` may do `attrs`."""
        return self.authorize(user, attrs, explain=False)[0]

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """`RulesFor`: every rule of every role bound to `user` (cluster-wide, then in `namespace`)."""
        self._refresh()
        out = Rules([], [])
        for binding in self._bindings_of(user, namespace):
            rules, error = self._role_rules(binding)
            if error:
                out.errors.append(error)
            out.rules.extend(rules)
        return out


# ---------------------------------------------------------------------------------------------- escalation
#
# pkg/registry/rbac/escalation_check.go and the policy-based storages of pkg/registry/rbac/{role,clusterrole,
# rolebinding,clusterrolebinding}/policybased: a user outside `system:masters` may write a role only with rules it
# holds itself (`ConfirmNoEscalation`, whose comparison is component-helpers/auth/rbac/validation/
# policy_comparator.go `Covers`), unless RBAC lets it `escalate` that role; and a binding only to a role whose
# rules it holds, unless RBAC lets it `bind` that role.

REQUEST_USER: ContextVar[UserInfo | None] = ContextVar("kjobs_request_user", default=None)
"""Who makes the request being served (set by `kjobs.server.app`; unset for the server's own components, whose
writes are privileged, as kube-apiserver's loopback client is `system:masters`)."""


def breakdown_rule(rule: Obj) -> list[Obj]:
    """`BreakdownRule`: one rule per group, resource, verb (and resource name), then per URL and verb."""
    out: list[Obj] = []
    names = list(rule.get("resourceNames") or [])
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            for verb in rule.get("verbs") or ():
                base = {"verbs": [verb], "apiGroups": [group], "resources": [resource]}
                out += [{**base, "resourceNames": [n]} for n in names] if names else [base]
    for url in rule.get("nonResourceURLs") or ():
        for verb in rule.get("verbs") or ():
            out.append({"verbs": [verb], "nonResourceURLs": [url]})
    return out


def _resource_covers_all(owned: list[str], wanted: list[str]) -> bool:
    if "*" in owned or all(w in owned for w in wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or f"*/{path.split('/', 1)[1]}" not in owned:
            return False
    return True


def non_resource_url_covers(owner: str, path: str) -> bool:
    """`nonResourceURLCovers`: the same path, or a prefix ending in `*`."""
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: Obj, sub: Obj) -> bool:
    """`ruleCovers`: whether `owner` covers a broken-down rule (at most one verb, resource and name)."""
    verbs, groups = owner.get("verbs") or [], owner.get("apiGroups") or []
    owned_names, names = owner.get("resourceNames") or [], sub.get("resourceNames") or []
    return (
        ("*" in verbs or all(v in verbs for v in sub.get("verbs") or ()))
        and ("*" in groups or all(g in groups for g in sub.get("apiGroups") or ()))
        and _resource_covers_all(owner.get("resources") or [], sub.get("resources") or [])
        and all(
            any(non_resource_url_covers(o, path) for o in owner.get("nonResourceURLs") or ())
            for path in sub.get("nonResourceURLs") or ()
        )
        and (not owned_names if not names else (not owned_names or all(n in owned_names for n in names)))
    )


MAX_BROKEN_DOWN = 20_000
"""kjobs' bound on the escalation check's work: the broken-down rules of one write (group × resource × verb ×
name, per rule). A role beyond it is refused for a user who must be checked (cluster admins are not), rather than
compared for minutes; real roles break down into hundreds (`admin`: about 400)."""


def broken_down_size(rules: list[Obj]) -> int:
    """How many rules `breakdown_rule` makes of `rules`, without making them."""
    total = 0
    for rule in rules:
        verbs = len(rule.get("verbs") or ())
        total += (
            len(rule.get("apiGroups") or ())
            * len(rule.get("resources") or ())
            * verbs
            * max(1, len(rule.get("resourceNames") or ()))
        )
        total += len(rule.get("nonResourceURLs") or ()) * verbs
    return total


def covers(owner_rules: list[Obj], servant_rules: list[Obj]) -> list[Obj]:
    """`Covers`: the broken-down servant rules no owner rule covers (none: covered)."""
    return [
        sub
        for rule in servant_rules
        for sub in breakdown_rule(rule)
        if not any(rule_covers(owner, sub) for owner in owner_rules)
    ]


def compact_rules(rules: list[Obj]) -> list[Obj]:
    """`CompactRules`: rules of one group and one resource (and at most one name) differing only by verb are
    merged; the others are kept as they are, before the merged ones."""
    compacted: list[Obj] = []
    simple: dict[tuple[str, str, str | None], Obj] = {}
    for rule in rules:
        names = rule.get("resourceNames") or []
        groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
        if len(names) > 1 or rule.get("nonResourceURLs") or len(groups) != 1 or len(resources) != 1:
            compacted.append(rule)
            continue
        key = (groups[0], resources[0], names[0] if names else None)
        if key in simple:
            simple[key]["verbs"] = [*simple[key]["verbs"], *(rule.get("verbs") or [])]
        else:
            simple[key] = {k: list(v) for k, v in rule.items()}
    return compacted + list(simple.values())


def _go_quoted_list(values: list[str]) -> str:
    """`%q` of a Go `[]string`: `["a" "b"]`."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: Obj) -> str:
    """`CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]}`."""
    parts = [
        f"{label}:{_go_quoted_list(list(rule[key]))}"
        for label, key in (
            ("APIGroups", "apiGroups"),
            ("Resources", "resources"),
            ("NonResourceURLs", "nonResourceURLs"),
            ("ResourceNames", "resourceNames"),
            ("Verbs", "verbs"),
        )
        if rule.get(key)
    ]
    return "{" + ", ".join(parts) + "}"


_ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}
FULL_AUTHORITY: list[Obj] = [
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
]
"""The clusterrole storage's `fullAuthority`: what using an aggregation rule takes."""


def _aggregates(role: Obj | None) -> bool:
    return role is not None and role.get("aggregationRule") is not None


_GC_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion")


def _only_gc_fields_change(obj: Obj, old: Obj | None) -> bool:
    """`IsOnlyMutatingGCFields`: the update changes nothing but owner references and finalizers."""
    if old is None:
        return False

    def stripped(o: Obj) -> Obj:
        meta = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**o, "metadata": meta}

    return semantic_equal(stripped(obj), stripped(old))


def check_escalation(rbac: RbacAuthorizer, kind: str, namespace: str, obj: Obj, old: Obj | None) -> None:
    """The policy-based storages' checks of a write of a role or binding by the request's user (nothing for the
    server's own writes and `system:masters`): 403 when it would grant what the user does not hold, 400 when a
    binding's role cannot be read."""
    user = REQUEST_USER.get()
    if user is None or MASTERS in user.groups or _only_gc_fields_change(obj, old):
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    plural = {**_ROLE_KINDS, "RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}[kind]
    if kind in _ROLE_KINDS:
        escalate = Attributes("escalate", plural, group=GROUP, namespace=namespace, name=name)
        if rbac.allowed(user, escalate):  # `RoleEscalationAuthorized`
            return
        rules = [r for r in obj.get("rules") or () if type(r) is dict]
    else:
        ref = obj.get("roleRef") or {}
        role_kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        bind = Attributes("bind", _ROLE_KINDS.get(role_kind, ""), group=GROUP, namespace=namespace, name=role_name)
        if rbac.allowed(user, bind):  # `BindingAuthorized`
            return
        rules, error = rbac._role_rules(_Binding(namespace, name, role_kind, role_name, ()))
        if error:
            raise bad_request(error)
    if broken_down_size(rules) > MAX_BROKEN_DOWN:
        why = f"the rules break down into more than {MAX_BROKEN_DOWN} single permissions, too many to check"
        raise forbidden(plural, name, why, group=GROUP)
    found = rbac.rules_for(user, namespace)
    missing = covers(found.rules, rules)
    if not missing:
        if kind == "ClusterRole" and (_aggregates(obj) or _aggregates(old)) and covers(found.rules, FULL_AUTHORITY):
            # an aggregation rule can gather anything: setting one (or changing one) takes `*` on everything
            article = "the" if old is None else "an"
            raise forbidden(
                plural, name, f"must have cluster-admin privileges to use {article} aggregationRule", group=GROUP
            )
        return
    described = sorted({compact_string(rule) for rule in compact_rules(missing)})
    message = (
        f"user {go_quote(user.username)} (groups={_go_quoted_list(list(user.groups))}) is attempting to grant RBAC "
        "permissions not currently held:\n" + "\n".join(described)
    )
    if found.errors:
        errors = found.errors
        message += "; resolution errors: [" + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]") + "]"
    raise forbidden(plural, name, message, group=GROUP)
