"""A Ray cluster of two nodes (a head and a worker, one CPU each) on 127.0.0.1, for
the engine tests: run as a process of its own (Ray reads its settings from the
environment when it is imported), it prints one JSON line, the cluster's address
and its live nodes' addresses, and shuts the cluster down when its stdin closes."""

from __future__ import annotations

import json
import os
import sys

# Ray takes 127.0.0.1 for "this machine, seen from the network" unless told it is
# alone; then every address stays on the loopback.
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"}


def main() -> None:
    os.environ.update(LOOPBACK)
    import ray
    from ray.cluster_utils import Cluster

    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False},
    )
    try:
        nodes.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        ray.init(address=nodes.address, logging_level="ERROR", log_to_driver=False)
        alive = [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        print(json.dumps({"address": nodes.address, "nodes": alive}), flush=True)
        sys.stdin.read()  # until the test is done with the cluster
    finally:
        nodes.shutdown()


if __name__ == "__main__":
    main()
