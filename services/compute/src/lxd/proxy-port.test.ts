import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { proxyPortTaken } from "./driver.ts";

describe("proxyPortTaken", () => {
  it("reads both ways LXD reports a taken proxy port as taken", () => {
    assert.equal(
      proxyPortTaken(
        "LXD: Error occurred when starting proxy device: Error: Failed to listen on 127.0.0.1:22000: listen tcp 127.0.0.1:22000: bind: address already in use",
      ),
      true,
    );
    assert.equal(
      proxyPortTaken(
        "LXD: Error occurred when starting proxy device: Error: Failed to receive fd from listener process: Failed to receive file descriptor via abstract unix socket",
      ),
      true,
    );
  });

  it("reads other start failures as not a taken port", () => {
    assert.equal(proxyPortTaken("LXD: Failed to run: forkstart: exit status 1"), false);
    assert.equal(proxyPortTaken("LXD: Instance is busy running a start operation"), false);
  });
});
