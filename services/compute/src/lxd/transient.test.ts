import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { transientLxdFailure } from "./driver.ts";
import { instanceBusy } from "./transient.ts";

describe("LXD failures worth a second try", () => {
  it("are its helper processes not reachable yet or a host file read it reports as a bad descriptor, never a refusal about the machine", () => {
    assert.ok(
      transientLxdFailure("dial unix /proc/self/fd/273/forkfile.sock: connect: no such file or directory"),
    );
    assert.ok(transientLxdFailure("Failed to run: forkstart hb-x /var/lib/lxd/containers: exit status 1"));
    assert.ok(
      transientLxdFailure(
        'Failed to retrieve network information: Failed to add device information for "/sys/class/net/eth0/device": Failed to add card info: bad file descriptor',
      ),
    );
    assert.ok(
      transientLxdFailure(
        "Failed to handle idmapped storage: Failed to change ownership of: /var/lib/lxd/storage-pools/hb-btrfs/containers/hb-x/rootfs/usr/share/man/man8/useradd.8.gz",
      ),
    );
    for (const final of [
      "Instance not found",
      "Failed to listen on 127.0.0.1:2201: listen tcp 127.0.0.1:2201: bind: address already in use",
      "Image not found",
      "Disk quota exceeded",
    ])
      assert.equal(transientLxdFailure(final), false, final);
  });

  it("include LXD refusing a request while another operation holds the instance, and nothing else", () => {
    assert.ok(
      instanceBusy('Failed to create instance delete operation: Instance is busy running a "stop" operation'),
    );
    assert.ok(instanceBusy('Instance is busy running a "start" operation'));
    for (const other of ["Instance not found", "Failed to run: forkstart hb-x: exit status 1", "device busy"])
      assert.equal(instanceBusy(other), false, other);
  });
});
