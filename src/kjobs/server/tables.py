"""Server-side `Table` rendering (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as the apiserver does.

kubectl prints whatever cells the server sends, so the columns and cell rules here are Kubernetes' own
(`pkg/printers/internalversion/printers.go`): Job, Pod, Node and Event have their printers; every other
resource gets the default `Name`/`Age` table. Cells are always the wide set (kubectl hides priority-1 columns
itself). Rendering is pure: it takes `now` (epoch seconds) from the caller's clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kjobs.api import events_v1
from kjobs.api.rbac import subjects_strings
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj

Column = tuple[str, str, int, str]
"""(name, type, priority, description)"""

Cells = Callable[[Obj, float], list[Any]]

_DESC_NAME = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_DESC_AGE = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def human_duration(seconds: float) -> str:
    """Kubernetes' `duration.HumanDuration` (what AGE and DURATION columns show)."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if h < 24 * 365 * 2:
        return f"{d}d"
    y = d // 365
    if h < 24 * 365 * 8:
        return f"{y}y{d % 365}d" if d % 365 else f"{y}y"
    return f"{y}y"


def _since(stamp: Any, now: float) -> str:
    if not stamp:
        return "<unknown>"
    try:
        return human_duration(now - parse_time(str(stamp)))
    except ValueError:
        return "<unknown>"


def _age(obj: Obj, now: float) -> str:
    return _since(obj.get("metadata", {}).get("creationTimestamp"), now)


def format_label_selector(selector: Obj | None) -> str:
    """`metav1.FormatLabelSelector`: `k=v` pairs and expressions joined by commas, `<none>` when empty."""
    if not selector:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) if parts else "<none>"


def _true_condition(obj: Obj, kind: str) -> bool:
    for cond in obj.get("status", {}).get("conditions") or []:
        if cond.get("type") == kind:
            return bool(cond.get("status") == "True")
    return False


# ---------------------------------------------------------------------------------------------- Job

JOB_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Status", "string", 0, "Status of the job."),
    ("Completions", "string", 0, "The completion status of the job."),
    ("Duration", "string", 0, "Time required to complete the job."),
    ("Age", "string", 0, _DESC_AGE),
    ("Containers", "string", 1, "Names of each container in the template."),
    ("Images", "string", 1, "Images referenced by each container in the template."),
    ("Selector", "string", 1, "A label query over pods that should match the pod count."),
]


def job_status(job: Obj) -> str:
    """The STATUS column of a Job."""
    if _true_condition(job, "Complete"):
        return "Complete"
    if _true_condition(job, "Failed"):
        return "Failed"
    if job.get("metadata", {}).get("deletionTimestamp"):
        return "Terminating"
    if _true_condition(job, "Suspended"):
        return "Suspended"
    if _true_condition(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job_cells(job: Obj, now: float) -> list[Any]:
    """One Job row."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    if status.get("startTime"):
        start = parse_time(status["startTime"])
        end = parse_time(status["completionTime"]) if status.get("completionTime") else now
        duration = human_duration(end - start)
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [
        job.get("metadata", {}).get("name", ""),
        job_status(job),
        completions,
        duration,
        _age(job, now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        format_label_selector(spec.get("selector")),
    ]


# ---------------------------------------------------------------------------------------------- Pod

POD_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
    ("Status", "string", 0, "The aggregate status of the containers in this pod."),
    (
        "Restarts",
        "string",
        0,
        "The number of times the containers in this pod have been restarted and when the "
        "last container in this pod has restarted.",
    ),
    ("Age", "string", 0, _DESC_AGE),
    (
        "IP",
        "string",
        1,
        "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    ),
    (
        "Node",
        "string",
        1,
        "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, "
        "the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.",
    ),
    (
        "Nominated Node",
        "string",
        1,
        "nominatedNodeName is set only when this pod preempts other pods on the node, "
        "but it cannot be scheduled right away as preemption victims receive their graceful termination periods.",
    ),
    (
        "Readiness Gates",
        "string",
        1,
        "If specified, all readiness gates will be evaluated for pod readiness. A pod "
        "is ready when all its containers are ready AND all conditions specified in the readiness gates have status "
        'equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    ),
]


def pod_status_text(pod: Obj) -> str:
    """The STATUS column of a Pod (`printPod`)."""
    return _pod_summary(pod)[2]


def _pod_summary(pod: Obj) -> tuple[int, int, str, int, float]:
    """`printPod`'s READY (ready, total), STATUS, RESTARTS and the last restart's time (0: none), in one pass as
    pkg/printers/internalversion/printers.go makes them: a sidecar (an init container with `restartPolicy:
    Always`) counts among the containers, and once started it neither holds the STATUS at `Init:N/M` nor, until
    the pod is initialized, hides the init containers' restarts."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = spec.get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + len(sidecars)
    ready = restarts = sidecar_restarts = 0
    last_restart = last_sidecar_restart = 0.0
    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += int(cs.get("restartCount") or 0)
        finished = _last_finished(cs)
        last_restart = max(last_restart, finished)
        sidecar = cs.get("name") in sidecars
        if sidecar:
            sidecar_restarts += int(cs.get("restartCount") or 0)
            last_sidecar_restart = max(last_sidecar_restart, finished)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            ready += bool(cs.get("ready"))
            continue
        if term is not None:
            if term.get("reason"):
                reason = "Init:" + term["reason"]
            elif term.get("signal"):
                reason = f"Init:Signal:{term['signal']}"
            else:
                reason = f"Init:ExitCode:{term.get('exitCode', 0)}"
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _true_condition(pod, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            last_restart = max(last_restart, _last_finished(cs))
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            elif state.get("running") is not None and cs.get("ready"):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _true_condition(pod, "Ready") else "NotReady"
    if pod.get("metadata", {}).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Failed", "Succeeded"):
            reason = "Terminating"
    return ready, total, str(reason), restarts, last_restart


def _last_finished(cs: Obj) -> float:
    finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
    return parse_time(finished) if finished else 0.0


def pod_cells(pod: Obj, now: float) -> list[Any]:
    """One Pod row."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready, total, reason, restarts, last_restart = _pod_summary(pod)
    restarts_text = str(restarts)
    if restarts and last_restart:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    ips = status.get("podIPs") or []
    ip = ips[0].get("ip") if ips else status.get("podIP")
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        types = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        ok = sum(1 for g in gates if types.get(g.get("conditionType")) == "True")
        gates_text = f"{ok}/{len(gates)}"
    return [
        pod.get("metadata", {}).get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _age(pod, now),
        ip or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


def pod_row_conditions(pod: Obj) -> list[Obj] | None:
    """Terminal pods carry a `Completed` row condition (kubectl hides them unless `--show-all`)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# ---------------------------------------------------------------------------------------------- Node

NODE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Status", "string", 0, "The status of the node"),
    ("Roles", "string", 0, "The roles of the node"),
    ("Age", "string", 0, _DESC_AGE),
    ("Version", "string", 0, "Kubelet Version reported by the node."),
    (
        "Internal-IP",
        "string",
        1,
        "List of addresses reachable to the node. Queried from cloud provider, if "
        "available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
    ),
    (
        "External-IP",
        "string",
        1,
        "List of addresses reachable to the node. Queried from cloud provider, if "
        "available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
    ),
    ("OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
    ("Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    (
        "Container-Runtime",
        "string",
        1,
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    ),
]


def node_cells(node: Obj, now: float) -> list[Any]:
    """One Node row."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    text = "Ready" if ready == "True" else ("NotReady" if ready is not None else "Unknown")
    if spec.get("unschedulable"):
        text += ",SchedulingDisabled"
    roles: set[str] = set()
    for key, value in (node.get("metadata", {}).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in status.get("addresses") or [] if a.get("type") == kind), "<none>")

    return [
        node.get("metadata", {}).get("name", ""),
        text,
        ",".join(sorted(roles)) if roles else "<none>",
        _age(node, now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# ---------------------------------------------------------------------------------------------- Event

EVENT_COLUMNS: list[Column] = [
    ("Last Seen", "string", 0, "The time the event was last observed."),
    ("Type", "string", 0, "Type of this event (Normal, Warning), new types could be added in the future."),
    (
        "Reason",
        "string",
        0,
        "This should be a short, machine understandable string that gives the reason for "
        "the transition into the object's current status.",
    ),
    ("Object", "string", 0, "The object that this event is about."),
    ("Subobject", "string", 1, "If the event is about a subobject (e.g. a container), the path of it."),
    ("Source", "string", 1, "The component reporting this event. Should be a short machine understandable string."),
    ("Message", "string", 0, "A human-readable description of the status of this operation."),
    (
        "First Seen",
        "string",
        1,
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    ("Count", "string", 1, "The number of times this event has occurred."),
    ("Name", "string", 1, _DESC_NAME),
]


def event_cells(event: Obj, now: float) -> list[Any]:
    """One Event row (always the ten wide cells): the printer prints the internal Event, so an `events.k8s.io/v1`
    Event's row is its core form's."""
    if event.get("apiVersion") == events_v1.API_VERSION:
        event = events_v1.to_core(event)
    first_stamp = event.get("firstTimestamp") or event.get("eventTime")
    first = _since(first_stamp, now)
    last = _since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    series = event.get("series")
    if series:
        last = _since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    else:
        count = int(event.get("count") or 0) or 1
    involved = event.get("involvedObject") or {}
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    host = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""),
        f"{component}, {host}" if host else component,
        str(event.get("message", "")).strip(),
        first,
        count,
        event.get("metadata", {}).get("name", ""),
    ]


# ---------------------------------------------------------------------------------------------- others

NAMESPACE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Status", "string", 0, "The status of the namespace"),
    ("Age", "string", 0, _DESC_AGE),
]


def namespace_cells(ns: Obj, now: float) -> list[Any]:
    """One Namespace row."""
    return [ns.get("metadata", {}).get("name", ""), (ns.get("status") or {}).get("phase", ""), _age(ns, now)]


LEASE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Holder", "string", 0, "The holder of the lease."),
    ("Age", "string", 0, _DESC_AGE),
]


def lease_cells(lease: Obj, now: float) -> list[Any]:
    """One Lease row."""
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    return [lease.get("metadata", {}).get("name", ""), holder, _age(lease, now)]


CRONJOB_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    (
        "Timezone",
        "string",
        0,
        "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."
        " If not specified, this will default to the time zone of the kube-controller-manager process. The set of "
        "valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API "
        "server during CronJob validation and the controller manager during execution. If no system-wide time zone "
        "database can be found a bundled version of the database is used instead. If the time zone name becomes "
        "invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop "
        "creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can "
        "be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
    ),
    (
        "Suspend",
        "boolean",
        0,
        "This flag tells the controller to suspend subsequent executions, it does not apply to already started "
        "executions.  Defaults to false.",
    ),
    ("Active", "integer", 0, "A list of pointers to currently running jobs."),
    ("Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."),
    ("Age", "string", 0, _DESC_AGE),
    ("Containers", "string", 1, "Names of each container in the template."),
    ("Images", "string", 1, "Images referenced by each container in the template."),
    ("Selector", "string", 1, "A label query over pods that should match the pod count."),
]


def cronjob_cells(cronjob: Obj, now: float) -> list[Any]:
    """One CronJob row (`printCronJob`: an unset suspend prints `<unset>`, no last schedule `<none>`)."""
    spec, status = cronjob.get("spec") or {}, cronjob.get("status") or {}
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    containers = ((job_spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [
        cronjob.get("metadata", {}).get("name", ""),
        spec.get("schedule", ""),
        spec.get("timeZone") if spec.get("timeZone") is not None else "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(status.get("active") or []),
        _since(last, now) if last else "<none>",
        _age(cronjob, now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        format_label_selector(job_spec.get("selector")),
    ]


PDB_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Min Available", "string", 0, "The minimum number of pods that must be available."),
    ("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."),
    ("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted at this time."),
    ("Age", "string", 0, _DESC_AGE),
]


def pdb_cells(pdb: Obj, now: float) -> list[Any]:
    """One PodDisruptionBudget row."""
    spec = pdb.get("spec") or {}
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [
        pdb.get("metadata", {}).get("name", ""),
        "N/A" if min_available is None else str(min_available),
        "N/A" if max_unavailable is None else str(max_unavailable),
        int((pdb.get("status") or {}).get("disruptionsAllowed") or 0),
        _age(pdb, now),
    ]


PRIORITY_CLASS_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Value", "integer", 0, "The value of this priority class."),
    (
        "Global-Default",
        "boolean",
        0,
        "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
    ),
    ("Age", "string", 0, _DESC_AGE),
    ("Preemption-Policy", "string", 1, "PreemptionPolicy is the Policy for preempting pods with lower priority."),
]


def priority_class_cells(pc: Obj, now: float) -> list[Any]:
    """One PriorityClass row."""
    return [
        pc.get("metadata", {}).get("name", ""),
        int(pc.get("value") or 0),
        bool(pc.get("globalDefault")),
        _age(pc, now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


# ---------------------------------------------------------------------------------------------- service

SERVICE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Type", "string", 0, "type determines how the Service is exposed."),
    ("Cluster-IP", "string", 0, "clusterIP is the IP address of the service and is usually assigned randomly."),
    ("External-IP", "string", 0, "externalIPs is a list of IP addresses for which nodes in the cluster will also "
     "accept traffic for this service."),
    ("Port(s)", "string", 0, "The list of ports that are exposed by this service."),
    ("Age", "string", 0, _DESC_AGE),
    ("Selector", "string", 1, "Route service traffic to pods with label keys and values matching this selector."),
]  # fmt: skip


def service_cells(svc: Obj, now: float) -> list[Any]:
    """One Service row (`printService`): the first cluster IP, external IPs by type, `port[:nodePort]/protocol`."""
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    ips = spec.get("clusterIPs") or []
    external = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = (svc.get("status") or {}).get("loadBalancer", {}).get("ingress") or []
        external = [i.get("ip") or i.get("hostname") or "" for i in ingress] + external
        external_text = ",".join(external) if external else "<pending>"
    elif kind == "ExternalName":
        external_text = spec.get("externalName") or "<none>"
    else:
        external_text = ",".join(external) if external else "<none>"
    ports = [
        f"{p.get('port')}" + (f":{p['nodePort']}" if p.get("nodePort") else "") + f"/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    ]
    selector = spec.get("selector") or {}
    return [
        svc.get("metadata", {}).get("name", ""),
        kind,
        ips[0] if ips else "<none>",
        external_text,
        ",".join(ports) if ports else "<none>",
        _age(svc, now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) if selector else "<none>",
    ]


# ------------------------------------------------------------------------------------- configmap, secret

CONFIG_MAP_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Data", "string", 0, "Data contains the configuration data. Each key must consist of alphanumeric characters, "
     "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data "
     "must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip


def config_map_cells(cm: Obj, now: float) -> list[Any]:
    """One ConfigMap row (`printConfigMap`): DATA counts the keys of `data` and `binaryData`."""
    count = len(cm.get("data") or {}) + len(cm.get("binaryData") or {})
    return [cm.get("metadata", {}).get("name", ""), count, _age(cm, now)]


SECRET_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Type", "string", 0, "Used to facilitate programmatic handling of secret data. More info: "
     "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
    ("Data", "string", 0, "Data contains the secret data. Each key must consist of alphanumeric characters, '-', "
     "'_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary "
     "(possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip


def secret_cells(secret: Obj, now: float) -> list[Any]:
    """One Secret row (`printSecret`): DATA counts the keys of `data`."""
    return [
        secret.get("metadata", {}).get("name", ""),
        secret.get("type") or "",
        len(secret.get("data") or {}),
        _age(secret, now),
    ]


SERVICE_ACCOUNT_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Secrets", "string", 0, "Secrets is a list of the secrets in the same namespace that pods running using this "
     "ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "
     "\"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The "
     "\"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces "
     "to isolate access to mounted secrets. This field should not be used to find auto-generated service account "
     "token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, "
     "or service account token secrets can be manually created. More info: "
     "https://kubernetes.io/docs/concepts/configuration/secret"),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip


def service_account_cells(sa: Obj, now: float) -> list[Any]:
    """One ServiceAccount row (`printServiceAccount`): SECRETS counts `secrets`."""
    return [sa.get("metadata", {}).get("name", ""), len(sa.get("secrets") or []), _age(sa, now)]


RESOURCE_QUOTA_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Age", "string", 0, _DESC_AGE),
    ("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
    ("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use independent "
     "of contention on the node."),
]  # fmt: skip


def resource_quota_cells(quota: Obj, now: float) -> list[Any]:
    """One ResourceQuota row (`printResourceQuota`): `name: used/hard` for each of `spec.hard` (sorted), the
    `limits.*` ones under LIMIT, the others under REQUEST; a value the status lacks prints 0."""
    hard_names = sorted((quota.get("spec") or {}).get("hard") or {})
    status = quota.get("status") or {}
    used, hard = status.get("used") or {}, status.get("hard") or {}
    request: list[str] = []
    limit: list[str] = []
    for name in hard_names:
        column = limit if name.split(".")[0] == "limits" and "." in name else request
        column.append(f"{name}: {used.get(name, '0')}/{hard.get(name, '0')}")
    return [quota.get("metadata", {}).get("name", ""), _age(quota, now), ", ".join(request), ", ".join(limit)]


# ---------------------------------------------------------------------------------------------- rbac


def _binding_columns(kind: str, role_ref: str) -> list[Column]:
    """`roleBindingsColumnDefinitions` / `clusterRoleBindingsColumnDefinitions`: ROLE is `Kind/name`; the
    subjects are the wide columns. (Roles and ClusterRoles have no printer: the default NAME CREATED AT.)"""
    return [
        ("Name", "string", 0, _DESC_NAME),
        ("Role", "string", 0, role_ref),
        ("Age", "string", 0, _DESC_AGE),
        ("Users", "string", 1, f"Users in the {kind}"),
        ("Groups", "string", 1, f"Groups in the {kind}"),
        ("ServiceAccounts", "string", 1, f"ServiceAccounts in the {kind}"),
    ]


ROLE_BINDING_COLUMNS = _binding_columns(
    "roleBinding",
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the "
    "RoleRef cannot be resolved, the Authorizer must return an error.",
)
CLUSTER_ROLE_BINDING_COLUMNS = _binding_columns(
    "clusterRoleBinding",
    "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the "
    "Authorizer must return an error.",
)


def binding_cells(binding: Obj, now: float) -> list[Any]:
    """One RoleBinding or ClusterRoleBinding row (`printRoleBinding`, `printClusterRoleBinding`)."""
    ref = binding.get("roleRef") or {}
    users, groups, accounts = subjects_strings(binding.get("subjects"))
    return [
        binding.get("metadata", {}).get("name", ""),
        f"{ref.get('kind') or ''}/{ref.get('name') or ''}",
        _age(binding, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


# ---------------------------------------------------------------------------------------------- endpoints

ENDPOINTS_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Endpoints", "string", 0, "The set of all endpoints is the union of all subsets. Addresses are placed into "
     "subsets according to the IPs they share. A single address with multiple ports, some of which are ready and "
     "some of which are not (because they come from different containers) will result in the address being "
     "displayed in different subsets for the different ports. No address will appear in both Addresses and "
     "NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service."),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip

MORE_MAX = 3
"""How many items `formatEndpoints` and the EndpointSlice printer show before `+ N more...`."""


def format_endpoints(ep: Obj, ports: set[str] | None = None) -> str:
    """`formatEndpoints` (pkg/printers/internalversion/printers.go): up to three ready `ip:port` (a subset
    without ports: its IPs), `+ N more...` for the rest, only the ports named in `ports` when given."""
    subsets = ep.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [a.get("ip") or "" for a in subset.get("addresses") or []]
        subset_ports = subset.get("ports") or []
        if not subset_ports:
            count += len(addresses)
            shown += addresses[: MORE_MAX - len(shown)]
            continue
        for port in subset_ports:
            if ports is None or (port.get("name") or "") in ports:
                count += len(addresses)
                number = port.get("port")
                shown += [_join_host_port(ip, number) for ip in addresses[: MORE_MAX - len(shown)]]
    text = ",".join(shown)
    return f"{text} + {count - MORE_MAX} more..." if count > MORE_MAX else text


def _join_host_port(ip: str, port: Any) -> str:
    """`net.JoinHostPort`: an IPv6 address in brackets."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def endpoints_cells(ep: Obj, now: float) -> list[Any]:
    """One Endpoints row (`printEndpoints`)."""
    return [ep.get("metadata", {}).get("name", ""), format_endpoints(ep), _age(ep, now)]


ENDPOINT_SLICE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("AddressType", "string", 0, "addressType specifies the type of address carried by this EndpointSlice. All "
     "addresses in this slice must be the same type. This field is immutable after creation. The following "
     "address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 "
     "Address. * FQDN: Represents a Fully Qualified Domain Name."),
    ("Ports", "string", 0, "ports specifies the list of network ports exposed by each endpoint in this slice. Each "
     "port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port "
     "is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports."),
    ("Endpoints", "string", 0, "endpoints is a list of unique endpoints in this slice. Each slice may include a "
     "maximum of 1000 endpoints."),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip


def _list_with_more(items: list[str], count: int) -> str:
    """`listWithMoreString`: `<unset>` for none."""
    text = ",".join(items[:MORE_MAX])
    if count > MORE_MAX:
        return f"{text} + {count - MORE_MAX} more..."
    return text or "<unset>"


def endpoint_slice_cells(eps: Obj, now: float) -> list[Any]:
    """One EndpointSlice row (`printEndpointSlice`: `formatDiscoveryPorts`, `formatDiscoveryEndpoints`); a port
    without a number shows its name, or `*`."""
    ports = eps.get("ports") or []
    port_texts = [
        str(p["port"]) if p.get("port") is not None else (p["name"] if p.get("name") is not None else "*")
        for p in ports
    ]
    addresses = [a for e in eps.get("endpoints") or [] for a in e.get("addresses") or []]
    return [
        eps.get("metadata", {}).get("name", ""),
        eps.get("addressType") or "",
        _list_with_more(port_texts, len(port_texts)),
        _list_with_more(addresses, len(addresses)),
        _age(eps, now),
    ]


# ---------------------------------------------------------------------------------------------- default

DEFAULT_COLUMNS: list[Column] = [("Name", "string", 0, _DESC_NAME), ("Created At", "date", 0, _DESC_AGE)]


# ------------------------------------------------------------------------------------------------ storage

_ACCESS_MODE_ABBREVIATIONS = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes_string(modes: Any) -> str:
    """`GetAccessModesAsString` (pkg/apis/core/helper): the modes present, abbreviated, in a fixed order."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODE_ABBREVIATIONS if mode in present)


def _storage_string(resources: Any) -> str:
    """A resource list's `storage` as `Quantity.String()` shows it ("0" when absent)."""
    from kjobs.api.quantity import QuantityError, canonical

    raw = resources.get("storage") if isinstance(resources, dict) else None
    if raw is None:
        return "0"
    try:
        return canonical(raw)
    except (QuantityError, TypeError, ValueError):
        return str(raw)


def _storage_class_of(obj: Obj) -> str:
    """`GetPersistentVolume(Claim)Class`: the beta annotation, else `spec.storageClassName`."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in annotations:
        return str(annotations["volume.beta.kubernetes.io/storage-class"])
    return str((obj.get("spec") or {}).get("storageClassName") or "")


def _terminating_phase(obj: Obj) -> str:
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return str((obj.get("status") or {}).get("phase") or "")


PERSISTENT_VOLUME_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Capacity", "string", 0, "capacity is the description of the persistent volume's resources and capacity. More "
     "info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
    ("Access Modes", "string", 0, "accessModes contains all ways the volume can be mounted. More info: "
     "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
    ("Reclaim Policy", "string", 0, "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
     "released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete "
     "(default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported "
     "by the volume plugin underlying this PersistentVolume. More info: "
     "https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
    ("Status", "string", 0, "phase indicates if a volume is available, bound to a claim, or released by a claim. "
     "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
    ("Claim", "string", 0, "claimRef is part of a bi-directional binding between PersistentVolume and "
     "PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between "
     "PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"),
    ("StorageClass", "string", 0, "StorageClass of the pv"),
    ("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pv"),
    ("Reason", "string", 0, "reason is a brief CamelCase string that describes any failure and is meant for machine "
     "parsing and tidy display in the CLI."),
    ("Age", "string", 0, _DESC_AGE),
    ("VolumeMode", "string", 1, "volumeMode defines if a volume is intended to be used with a formatted filesystem "
     "or to remain in raw block state. Value of Filesystem is implied when not included in spec."),
]  # fmt: skip


def persistent_volume_cells(pv: Obj, now: float) -> list[Any]:
    """One PersistentVolume row (`printPersistentVolume`): CLAIM is `namespace/name` of the claimRef, STATUS
    Terminating once deleted, `<unset>` for an unset volume mode or attributes class."""
    spec = pv.get("spec") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if isinstance(ref, dict) else ""
    return [
        pv.get("metadata", {}).get("name", ""),
        _storage_string(spec.get("capacity")),
        access_modes_string(spec.get("accessModes")),
        str(spec.get("persistentVolumeReclaimPolicy") or ""),
        _terminating_phase(pv),
        claim,
        _storage_class_of(pv),
        spec.get("volumeAttributesClassName") if spec.get("volumeAttributesClassName") is not None else "<unset>",
        str((pv.get("status") or {}).get("reason") or ""),
        _age(pv, now),
        spec.get("volumeMode") if spec.get("volumeMode") is not None else "<unset>",
    ]


PERSISTENT_VOLUME_CLAIM_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
    ("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume backing this claim."),
    ("Capacity", "string", 0, "capacity represents the actual resources of the underlying volume."),
    ("Access Modes", "string", 0, "accessModes contains the actual access modes the volume backing the PVC has. "
     "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
    ("StorageClass", "string", 0, "StorageClass of the pvc"),
    ("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pvc"),
    ("Age", "string", 0, _DESC_AGE),
    ("VolumeMode", "string", 1, "volumeMode defines what type of volume is required by the claim. Value of "
     "Filesystem is implied when not included in claim spec."),
]  # fmt: skip


def persistent_volume_claim_cells(pvc: Obj, now: float) -> list[Any]:
    """One PersistentVolumeClaim row (`printPersistentVolumeClaim`): capacity and access modes from the status,
    and only once the claim names a volume."""
    spec = pvc.get("spec") or {}
    status = pvc.get("status") or {}
    volume = str(spec.get("volumeName") or "")
    capacity = _storage_string(status.get("capacity")) if volume else ""
    modes = access_modes_string(status.get("accessModes")) if volume else ""
    return [
        pvc.get("metadata", {}).get("name", ""),
        _terminating_phase(pvc),
        volume,
        capacity,
        modes,
        _storage_class_of(pvc),
        spec.get("volumeAttributesClassName") if spec.get("volumeAttributesClassName") is not None else "<unset>",
        _age(pvc, now),
        spec.get("volumeMode") if spec.get("volumeMode") is not None else "<unset>",
    ]


STORAGE_CLASS_COLUMNS: list[Column] = [
    ("Name", "string", 0, _DESC_NAME),
    ("Provisioner", "string", 0, "provisioner indicates the type of the provisioner."),
    ("ReclaimPolicy", "string", 0, "reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
     "PersistentVolumes of this storage class. Defaults to Delete."),
    ("VolumeBindingMode", "string", 0, "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned "
     "and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the "
     "VolumeScheduling feature."),
    ("AllowVolumeExpansion", "string", 0, "allowVolumeExpansion shows whether the storage class allow volume "
     "expand."),
    ("Age", "string", 0, _DESC_AGE),
]  # fmt: skip


def storage_class_cells(sc: Obj, now: float) -> list[Any]:
    """One StorageClass row (`printStorageClass`): the default class's name with ` (default)`; ALLOWVOLUMEEXPANSION
    a bool cell."""
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    name = str(sc.get("metadata", {}).get("name", ""))
    if "true" in (
        annotations.get("storageclass.kubernetes.io/is-default-class"),
        annotations.get("storageclass.beta.kubernetes.io/is-default-class"),
    ):
        name += " (default)"
    return [
        name,
        str(sc.get("provisioner") or ""),
        str(sc.get("reclaimPolicy") or "Delete"),
        str(sc.get("volumeBindingMode") or "Immediate"),
        sc.get("allowVolumeExpansion") is True,
        _age(sc, now),
    ]


def default_cells(obj: Obj, now: float) -> list[Any]:
    """The generic `Name`/`Created At` row the apiserver uses for resources without a printer."""
    meta = obj.get("metadata", {})
    return [meta.get("name", ""), meta.get("creationTimestamp")]


PRINTERS: dict[str, tuple[list[Column], Cells]] = {
    "Endpoints": (ENDPOINTS_COLUMNS, endpoints_cells),
    "EndpointSlice": (ENDPOINT_SLICE_COLUMNS, endpoint_slice_cells),
    "Job": (JOB_COLUMNS, job_cells),
    "Pod": (POD_COLUMNS, pod_cells),
    "Node": (NODE_COLUMNS, node_cells),
    "Event": (EVENT_COLUMNS, event_cells),
    "Namespace": (NAMESPACE_COLUMNS, namespace_cells),
    "Lease": (LEASE_COLUMNS, lease_cells),
    "PodDisruptionBudget": (PDB_COLUMNS, pdb_cells),
    "CronJob": (CRONJOB_COLUMNS, cronjob_cells),
    "PriorityClass": (PRIORITY_CLASS_COLUMNS, priority_class_cells),
    "Service": (SERVICE_COLUMNS, service_cells),
    "ConfigMap": (CONFIG_MAP_COLUMNS, config_map_cells),
    "Secret": (SECRET_COLUMNS, secret_cells),
    "ServiceAccount": (SERVICE_ACCOUNT_COLUMNS, service_account_cells),
    "ResourceQuota": (RESOURCE_QUOTA_COLUMNS, resource_quota_cells),
    "RoleBinding": (ROLE_BINDING_COLUMNS, binding_cells),
    "ClusterRoleBinding": (CLUSTER_ROLE_BINDING_COLUMNS, binding_cells),
    "PersistentVolume": (PERSISTENT_VOLUME_COLUMNS, persistent_volume_cells),
    "PersistentVolumeClaim": (PERSISTENT_VOLUME_CLAIM_COLUMNS, persistent_volume_claim_cells),
    "StorageClass": (STORAGE_CLASS_COLUMNS, storage_class_cells),
}


CUSTOM_PRINTERS: dict[tuple[str, str], tuple[list[Obj], Cells]] = {}
"""The custom resources' tables by (group, kind): their column definitions and cells
(`kjobs.server.customresources`, from each CRD's `additionalPrinterColumns`)."""


def _custom(kind: str, api_version: str) -> tuple[list[Obj], Cells] | None:
    if kind in PRINTERS or not CUSTOM_PRINTERS:
        return None
    return CUSTOM_PRINTERS.get((api_version.rpartition("/")[0], kind))


def column_definitions(kind: str, api_version: str = "") -> list[Obj]:
    """The `columnDefinitions` of a kind's table."""
    custom = _custom(kind, api_version)
    if custom is not None:
        return custom[0]
    columns = PRINTERS.get(kind, (DEFAULT_COLUMNS, default_cells))[0]
    return [
        {"name": n, "type": t, "format": "name" if n == "Name" else "", "description": d, "priority": p}
        for n, t, p, d in columns
    ]


def _row_object(obj: Obj, include: str, api_version: str, kind: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def to_table(
    objs: Iterable[Obj],
    *,
    kind: str,
    api_version: str,
    now: float,
    resource_version: str = "",
    include_object: str = "Metadata",
    with_headers: bool = True,
) -> Obj:
    """A `meta.k8s.io/v1` Table of `objs` (already in the order to show)."""
    custom = _custom(kind, api_version)
    cells = custom[1] if custom is not None else PRINTERS.get(kind, (DEFAULT_COLUMNS, default_cells))[1]
    rows = []
    for obj in objs:
        row: Obj = {"cells": cells(obj, now)}
        if kind == "Pod":
            conditions = pod_row_conditions(obj)
            if conditions:
                row["conditions"] = conditions
        row_object = _row_object(obj, include_object, api_version, kind)
        if row_object is not None:
            row["object"] = row_object
        rows.append(row)
    meta: Obj = {"resourceVersion": resource_version} if resource_version else {}
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(kind, api_version) if with_headers else [],
        "rows": rows,
    }
