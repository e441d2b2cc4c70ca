/**
 * Jest setupFilesAfterEnv for the unit project: a unit test is pure logic, so opening a socket (listening,
 * or connecting anywhere, loopback included) fails the test at once with where it belongs. A test that
 * needs a server, Temporal, a database or the network lives in the integration project (jest.config.js).
 *
 * `node:net` is one module per jest worker process, shared by every test file that worker runs, unit or
 * integration alike. So the refusal is put in place for this file's tests only and taken away after them:
 * left in place, it would refuse the sockets of the integration tests the same worker runs next.
 */
import * as net from 'node:net';

const refuse = (what: string) =>
  function refused(): never {
    throw new Error(
      `a unit test ${what}: unit tests open no sockets; move this file out of test/unit/ into the integration tier`,
    );
  };

const listen = net.Server.prototype.listen;
const connect = net.Socket.prototype.connect;

beforeAll(() => {
  net.Server.prototype.listen = refuse('listens on a socket') as typeof listen;
  net.Socket.prototype.connect = refuse('connects a socket') as typeof connect;
});

afterAll(() => {
  net.Server.prototype.listen = listen;
  net.Socket.prototype.connect = connect;
});
