/**
 * TLS in front of a plaintext Temporal server (the CLI's dev server serves no TLS): certificates made
 * with `openssl` in a temp folder at test time, and a node `tls` server that terminates TLS (optionally
 * requiring a client certificate) and pipes the bytes to the server's gRPC port. What crossed it is
 * counted, so a test can tell a handshake that succeeded from one that was refused.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';

/** Names the server certificate holds (besides IP 127.0.0.1). */
export const TEST_SERVER_NAMES = ['localhost', 'temporal.paysaga.test'];

export interface TestCertificates {
  dir: string;
  /** The CA that signed the server and client certificates. */
  caCert: string;
  /** A CA that signed nothing here: trusting it alone must refuse the server. */
  otherCaCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Removes the folder. */
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed CA (EC P-256, valid one day) as `<name>.pem` / `<name>.key`. */
function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '1', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
}

/** A leaf certificate signed by `ca`, for `usage` (serverAuth or clientAuth). */
function makeLeaf(dir: string, name: string, ca: string, usage: string, san: string): void {
  openssl(dir, [
    'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`,
  ]); // prettier-ignore
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      `extendedKeyUsage=${usage}`,
      `subjectAltName=${san}`,
      '',
    ].join('\n'),
  );
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-out', `${name}.pem`, '-days', '1', '-extfile', ext,
  ]); // prettier-ignore
}

export function generateTestCertificates(): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-tls-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  const names = [...TEST_SERVER_NAMES.map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',');
  makeLeaf(dir, 'server', 'ca', 'serverAuth', names);
  makeLeaf(dir, 'client', 'ca', 'clientAuth', 'DNS:paysaga-worker');
  const at = (f: string) => path.join(dir, f);
  return {
    dir,
    caCert: at('ca.pem'),
    otherCaCert: at('other-ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsProxy {
  /** `127.0.0.1:<port>` */
  address: string;
  port: number;
  /** TLS sessions established (handshake done, client certificate accepted when one is required). */
  sessions(): number;
  /** Handshakes that failed (e.g. the client did not trust the certificate, or sent none). */
  refused(): number;
  close(): Promise<void>;
}

export interface TlsProxyOptions {
  /** host:port of the plaintext gRPC server. */
  target: string;
  certs: TestCertificates;
  /** Require a client certificate signed by the test CA (mTLS). */
  requireClientCert?: boolean;
}

export async function startTlsProxy(o: TlsProxyOptions): Promise<TlsProxy> {
  const [host, portText] = o.target.split(':');
  const targetPort = Number(portText);
  let sessions = 0;
  let refused = 0;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server = tls.createServer(
    {
      cert: fs.readFileSync(o.certs.serverCert),
      key: fs.readFileSync(o.certs.serverKey),
      // gRPC is HTTP/2: clients ask for h2 by ALPN.
      ALPNProtocols: ['h2'],
      ...(o.requireClientCert
        ? { requestCert: true, rejectUnauthorized: true, ca: fs.readFileSync(o.certs.caCert) }
        : {}),
    },
    (client) => {
      sessions++;
      track(client);
      const upstream = net.connect({ host, port: targetPort });
      track(upstream);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
      client.on('close', end);
      upstream.on('close', end);
    },
  );
  server.on('tlsClientError', (_err, socket) => {
    refused++;
    socket.destroy();
  });
  server.on('connection', track);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    sessions: () => sessions,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
