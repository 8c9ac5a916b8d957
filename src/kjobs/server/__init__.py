"""The Kubernetes REST API server that unmodified kubectl and the official Python client talk to.

Layers, from the wire inwards:
* `runner` runs uvicorn (uvloop + httptools) in the foreground (`kjobs up`) or in a thread (`serve()`);
* `app` is the ASGI application: HTTP framing, negotiation, streaming, Status errors;
* `routing` parses Kubernetes' closed URL grammar; `registry` is the table of served resources;
* `service.ApiService` is the registry logic per verb over `storage.Storage` (the store seam), with
  `admission` (mutating admission plugins: DefaultTolerationSeconds) applied to writes before validation;
* pure helpers: `patch` (strategic/merge/JSON patch), `apply` (field ownership), `schema` (Kubernetes'
  OpenAPI definitions: strict fields, patch strategies), `tables` (kubectl's columns), `discovery`,
  `openapi`; `logs` is the pods/log seam the node agent fills; `kubeconfig` and `tls` serve `kjobs up`.
Import the submodules directly; this package imports nothing so that light users stay light.
"""
