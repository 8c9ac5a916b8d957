"""What the node side needs to know about persistent storage: which host directory a claim's volume is.

The node agent mounts a pod's `persistentVolumeClaim` volume from the PersistentVolume bound to the claim; this
says where that volume lives on this machine (`hostPath` or `local` volumes, as kjobs' local-path provisioner
makes them, `kjobs.controllers.volumes`). Pure: the caller reads the claim and the volume.
"""

from __future__ import annotations

from kjobs.api.storage import host_path

__all__ = ["host_path"]
