/**
 * Jest setupFiles for the unit project: a unit test is pure logic, so opening a socket (listening, or
 * connecting anywhere, loopback included) fails the test at once with where it belongs. A test that
 * needs a server, Temporal, a database or the network lives in the integration project (jest.config.js).
 */
import * as net from 'node:net';

const refuse = (what: string) => () => {
  throw new Error(
    `a unit test ${what}: unit tests open no sockets; move this file out of test/unit/ into the integration tier`,
  );
};

net.Server.prototype.listen = refuse('listens on a socket') as typeof net.Server.prototype.listen;
net.Socket.prototype.connect = refuse('connects a socket') as typeof net.Socket.prototype.connect;
