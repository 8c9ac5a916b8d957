"""The node: a container runtime that runs pods as local processes (or simulates them).

`runtime.ContainerRuntime` is the seam the node agent uses; `process_runtime.ProcessRuntime` and
`sim_runtime.SimulatedRuntime` implement it on top of the shared `supervisor.Supervisor`, whose rules live
in the pure modules `restart` (what to start when) and `podstatus` (the Kubernetes PodStatus).
"""
