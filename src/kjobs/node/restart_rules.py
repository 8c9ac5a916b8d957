"""Whether an exited container runs again: container restart rules, container and pod restartPolicy.

Design note: pure functions of a container spec, the pod's restartPolicy and an exit code, shared by the
restart planner (`kjobs.node.restart`) and the phase computation (`kjobs.node.podstatus`), so "will this
container restart?" has one answer on the node. They follow the kubelet's `ContainerShouldRestart` and
`findMatchingContainerRestartRule` (pkg/api/v1/pod/util.go, Kubernetes 1.34+, KEP-5307
keps/sig-node/5307-container-restart-policy):

* a container without its own `restartPolicy` follows the pod's: Always restarts, OnFailure restarts a
  non-zero exit, Never never restarts;
* a container with its own `restartPolicy` first tries its `restartPolicyRules` in order; the first rule
  whose `exitCodes` match decides (`action: Restart` restarts in place); when none matches, the container's
  own `restartPolicy` decides as above — even under a pod `restartPolicy: Never`;
* `exitCodes` match as `In` / `NotIn` over `values` and, under kjobs' `ExitCodeRanges` gate,
  `valueRanges: [{from, to}]` (inclusive; the API server drops the field while the gate is off, so a range
  present here was accepted).
"""

from __future__ import annotations

from kjobs.api.types import Obj

RESTART = "Restart"
"""The one rule action Kubernetes has (`ContainerRestartRuleActionRestart`)."""


def exit_codes_match(exit_codes: Obj, exit_code: int) -> bool:
    """Whether `exit_code` satisfies a rule's `exitCodes` (operator In / NotIn over values and ranges)."""
    listed = exit_code in (exit_codes.get("values") or [])
    for bounds in exit_codes.get("valueRanges") or []:
        low, high = bounds.get("from"), bounds.get("to")
        if isinstance(low, int) and isinstance(high, int) and low <= exit_code <= high:
            listed = True
    operator = exit_codes.get("operator")
    if operator == "In":
        return listed
    if operator == "NotIn":
        return not listed
    return False


def matching_rule(container: Obj, exit_code: int) -> tuple[int, Obj] | None:
    """The index and body of the first restart rule of `container` that matches `exit_code`, if any."""
    for index, rule in enumerate(container.get("restartPolicyRules") or []):
        exit_codes = rule.get("exitCodes")
        if isinstance(exit_codes, dict) and exit_codes_match(exit_codes, exit_code):
            return index, rule
    return None


def policy_restarts(policy: str, exit_code: int) -> bool:
    """Whether a restartPolicy (pod or container; unknown means the API default Always) restarts an exit."""
    if policy == "Never":
        return False
    if policy == "OnFailure":
        return exit_code != 0
    return True


def container_should_restart(container: Obj, pod_policy: str, exit_code: int) -> bool:
    """Whether `container`, having exited with `exit_code`, runs again (the kubelet's ContainerShouldRestart)."""
    own = container.get("restartPolicy")
    if own:
        found = matching_rule(container, exit_code)
        if found is not None and found[1].get("action") == RESTART:
            return True
        if own in ("Always", "OnFailure", "Never"):
            return policy_restarts(str(own), exit_code)
    return policy_restarts(pod_policy, exit_code)
