#!/usr/bin/env python3
"""The remote_servers block that docs/fleet.md shows for two shards, as the tests use it.

remote_servers.py FLEET_MD                      check the block: exit 0, or 1 saying what is wrong
remote_servers.py FLEET_MD HOST:PORT HOST:PORT  print what goes inside <remote_servers> of a
                                                server's config, the doc's shard1 and shard2 put
                                                at these (tests/suites/fleet/clickhouse.sh's
                                                ch_start)

The block is the ```xml one of the section "Many servers": a config.d file whose root is
<yandex>, one cluster of two shards of one replica each, hosts shard1 and shard2, the cluster
named as the --cluster of the doc's commands, each shard's host the host of a --to URL there.
"""
import re
import sys
import xml.etree.ElementTree as ET


def block(doc):
    """The cluster element and its name, or raise ValueError saying what is wrong."""
    section = re.search(r"^## Many servers.*?(?=^## )", doc, re.S | re.M)
    if not section:
        raise ValueError("docs/fleet.md has no section 'Many servers'")
    blocks = re.findall(r"^```xml\n(.*?)^```$", section.group(0), re.S | re.M)
    if len(blocks) != 1:
        raise ValueError("'Many servers' shows %d xml blocks, not 1" % len(blocks))
    root = ET.fromstring(blocks[0])
    if root.tag != "yandex":
        raise ValueError("the block's root is <%s>, not <yandex> (ClickHouse 18.16)" % root.tag)
    remote = root.findall("remote_servers")
    if len(remote) != 1 or len(remote[0]) != 1:
        raise ValueError("the block has not one <remote_servers> with one cluster")
    cluster = remote[0][0]
    shards = cluster.findall("shard")
    if len(shards) != 2 or len(cluster) != 2:
        raise ValueError("cluster %s has %d shards, not 2" % (cluster.tag, len(shards)))
    for i, shard in enumerate(shards, 1):
        replicas = shard.findall("replica")
        if len(replicas) != 1 or len(shard) != 1:
            raise ValueError("shard %d has not one replica" % i)
        if replicas[0].findtext("host") != "shard%d" % i or not replicas[0].findtext("port"):
            raise ValueError("shard %d's replica is not host shard%d with a port" % (i, i))
    commands = re.findall(r"^closuretrace export --create-schema --to http://(\w+):\d+/\w+ "
                          r"--cluster (\w+)$", section.group(0), re.M)
    if sorted(commands) != [("shard1", cluster.tag), ("shard2", cluster.tag)]:
        raise ValueError("the commands of 'Many servers' are not --create-schema on shard1 and "
                         "shard2 with --cluster %s: %s" % (cluster.tag, commands))
    return cluster


def main():
    try:
        cluster = block(open(sys.argv[1]).read())
    except (ValueError, ET.ParseError) as e:
        print("FAIL: docs/fleet.md, remote_servers: %s" % e)
        return 1
    if len(sys.argv) == 4:
        for shard, where in zip(cluster.findall("shard"), sys.argv[2:]):
            host, port = where.rsplit(":", 1)
            shard.find("replica/host").text = host
            shard.find("replica/port").text = port
        print(ET.tostring(cluster, encoding="unicode").strip())
    return 0


sys.exit(main())
