"""deploy/k8s and deploy/grafana agree with the code: queues, env names, secrets, metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.observability import metrics
from gateway.observability.plane import queue_key
from gateway.settings import load_settings
from tests.unit.test_deploy_files import known_env
from workers.queues import QUEUE_ORDER

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
KEDA_ENV = {"REDIS_ADDRESS", "REDIS_PASSWORD"}  # read by KEDA and by $(…) in the Redis URL


def manifests() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == sorted(
        p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"
    )
    docs = []
    for name in kustomization["resources"]:
        docs.extend(d for d in yaml.safe_load_all((K8S / name).read_text(encoding="utf-8")) if d)
    return docs


def of_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    [only] = deployment["spec"]["template"]["spec"]["containers"]
    return only


def env_sources(deployment: dict[str, Any]) -> set[str]:
    """Every variable the container gets: envFrom ConfigMap/Secret keys and env names."""
    configmaps, secrets = of_kind("ConfigMap"), of_kind("Secret")
    names: set[str] = set()
    spec = container(deployment)
    for source in spec.get("envFrom", []):
        if "configMapRef" in source:
            names |= set(configmaps[source["configMapRef"]["name"]]["data"])
        else:
            names |= set(secrets[source["secretRef"]["name"]]["stringData"])
    return names | {e["name"] for e in spec.get("env", [])}


def test_every_manifest_parses_with_kind_and_name() -> None:
    docs = manifests()
    assert {d["kind"] for d in docs} >= {
        "Deployment",
        "ScaledObject",
        "ConfigMap",
        "Secret",
        "PodDisruptionBudget",
        "ServiceMonitor",
        "Service",
    }
    assert all(d["metadata"]["name"] for d in docs)


def test_keda_triggers_read_the_real_queue_lists_of_their_workers() -> None:
    prefix = of_kind("ConfigMap")["mnemogate-config"]["data"]["MNEMOGATE_REDIS_PREFIX"]
    deployments = of_kind("Deployment")
    covered: list[str] = []
    for scaled in of_kind("ScaledObject").values():
        target = deployments[scaled["spec"]["scaleTargetRef"]["name"]]
        args = container(target)["args"]
        assert args[0] == "worker"
        served = [args[i + 1] for i, a in enumerate(args) if a == "--queue"]
        lists = [t["metadata"]["listName"] for t in scaled["spec"]["triggers"]]
        assert all(t["type"] == "redis" for t in scaled["spec"]["triggers"])
        assert lists == [queue_key(prefix, q) for q in served]  # type: ignore[arg-type]
        for trigger in scaled["spec"]["triggers"]:
            meta = trigger["metadata"]
            wanted = {meta["addressFromEnv"], meta["passwordFromEnv"]}
            assert wanted <= env_sources(target), wanted
        covered.extend(served)
    assert sorted(covered) == sorted(QUEUE_ORDER)  # every queue scaled, none twice
    assert queue_key("mnemogate", "sync") == "rq:queue:mnemogate-sync"  # RQ's own naming


def test_env_names_and_secret_keys_are_settings_mnemogate_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys: set[str] = set()
    for configmap in of_kind("ConfigMap").values():
        keys |= set(configmap["data"])
    for secret in of_kind("Secret").values():
        keys |= set(secret["stringData"])
    for deployment in of_kind("Deployment").values():
        keys |= {e["name"] for e in container(deployment).get("env", [])}
    unknown = {k for k in keys if not known_env(k)} - KEDA_ENV
    assert not unknown
    # the settings a pod would get load and validate
    for name, value in of_kind("ConfigMap")["mnemogate-config"]["data"].items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("REDIS_PASSWORD", "pw")
    [url] = [e for e in container(of_kind("Deployment")["mnemogate-gateway"])["env"]]
    expanded = re.sub(
        r"\$\((\w+)\)", lambda m: {"REDIS_PASSWORD": "pw"}.get(m[1], "h:1"), url["value"]
    )
    monkeypatch.setenv(url["name"], expanded)
    settings = load_settings()
    assert settings.metrics.listen and settings.log.format == "json"
    assert settings.memory.provider is None and settings.redis_url == "redis://:pw@h:1/0"


def test_probes_and_secrets_per_role() -> None:
    listen = of_kind("ConfigMap")["mnemogate-config"]["data"]["MNEMOGATE_METRICS__LISTEN"]
    port = int(listen.rpartition(":")[2])
    for name, deployment in of_kind("Deployment").items():
        spec = container(deployment)
        assert spec["ports"] == [{"name": "metrics", "containerPort": port}]
        assert spec["livenessProbe"]["httpGet"]["path"] == "/healthz", name
        assert spec["readinessProbe"]["httpGet"]["path"] == "/readyz", name
        assert spec["securityContext"]["readOnlyRootFilesystem"] is True
        tokens = {"TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN"} & env_sources(deployment)
        assert bool(tokens) == (name == "mnemogate-gateway"), name


def test_every_dashboard_query_uses_metrics_the_code_exports() -> None:
    known = metrics.exported_names()
    dashboard = json.loads((GRAFANA / "mnemogate.json").read_text(encoding="utf-8"))
    titles = " ".join(p["title"].lower() for p in dashboard["panels"])
    for topic in ("turn latency", "queue depth vs workers", "job failures", "provider latency"):
        assert topic in titles, topic
    assert "scanner" in titles
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bmnemogate_[a-z_]+", target["expr"])
    }
    assert used and used <= known, used - known
