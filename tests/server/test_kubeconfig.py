"""The kubeconfig kjobs writes: what each kind of server gets in its cluster entry."""

from __future__ import annotations

from kjobs.server import kubeconfig


def test_http_server_is_marked_insecure_for_the_javascript_client() -> None:
    doc = kubeconfig.build("http://127.0.0.1:6443")
    assert doc["clusters"] == [
        {"name": "kjobs", "cluster": {"server": "http://127.0.0.1:6443", "insecure-skip-tls-verify": True}}
    ]


def test_https_server_with_a_ca_is_verified() -> None:
    cluster = kubeconfig.build("https://10.0.0.1:6443", ca_pem=b"PEM")["clusters"][0]["cluster"]
    assert cluster == {"server": "https://10.0.0.1:6443", "certificate-authority-data": "UEVN"}
