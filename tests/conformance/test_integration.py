"""Conformance: `integration` scenarios, a live Job controller driven through the API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conformance.corpus import params
from tests.conformance.integration import http_client, local_client, run_integration


@pytest.mark.e2e
@pytest.mark.parametrize("case", params("scenarios", kinds=("integration",)))
def test_integration_scenario_in_process(case: dict[str, Any]) -> None:
    asyncio.run(run_integration(case, local_client))


@pytest.mark.e2e
@pytest.mark.parametrize("case", params("scenarios", kinds=("integration",)))
def test_integration_scenario_over_http(case: dict[str, Any]) -> None:
    asyncio.run(run_integration(case, http_client))
