"""Plan hosts that are one machine, found in the facts each reports: one warning per group.

Two plan hosts are one machine when they report the same running kernel (``boot_id``: one
machine, or containers and namespaces of one), the same ``/etc/machine-id`` or the same SSH host
key (one sshd): their workloads share its CPUs, memory, disks and network, so each disturbs the
others' numbers. Hosts are grouped through any of these (a and b share a kernel, b and c a host
key: a, b and c are one machine), and each group is one warning naming every host in it: four
plan hosts on one box are one warning, not six pairs (sixteen VMs of one cloned image, not 120).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchtui.plan.findings import WARNING, Finding
from benchtui.plan.model import Plan

#: The facts that tell one machine, and how a message says each.
SIGNS = (("boot_id", "the same running kernel (boot id)"),
         ("machine_id", "the same /etc/machine-id"),
         ("host_key", "the same SSH host key"))


def and_list(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def same_machines(plan: Plan, facts: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """A warning per group of plan hosts that are one machine, in plan order."""
    hosts = [h for h in plan.hosts_in_use() if facts.get(h)]
    group = {h: h for h in hosts}  # union-find: each host -> a host of its group

    def root(host: str) -> str:
        while group[host] != host:
            group[host] = group[group[host]]
            host = group[host]
        return host

    shared: dict[str, set[str]] = {}  # sign -> hosts that share it with another host
    for key, _ in SIGNS:
        by_value: dict[str, list[str]] = {}
        for host in hosts:
            value = facts[host].get(key)
            if isinstance(value, str) and value:
                by_value.setdefault(value, []).append(host)
        for same in by_value.values():
            for other in same[1:]:
                group[root(other)] = root(same[0])
            if len(same) > 1:
                shared.setdefault(key, set()).update(same)
    members: dict[str, list[str]] = {}
    for host in hosts:
        members.setdefault(root(host), []).append(host)
    findings = []
    for names in members.values():
        if len(names) < 2:
            continue
        why = [words for key, words in SIGNS if shared.get(key, set()) & set(names)]
        said = ", ".join(why)
        if why == ["the same /etc/machine-id"]:
            said += " (a cloned image would also share it)"
        others = "the other's" if len(names) == 2 else "the others'"
        findings.append(Finding(
            None, None, WARNING,
            f"hosts {and_list(names)} are one machine: {said}; their workloads share its CPUs, "
            f"memory, disks and network, so each disturbs {others} numbers",
            "give each plan host its own machine, or keep one of them"))
    return findings
